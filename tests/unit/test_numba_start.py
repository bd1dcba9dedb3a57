"""The `mcusim` command trims numba's start (numba_cache.command_process): it keeps numba's BLAS
probe (an import of scipy.linalg, ~0.3 s) and its cffi support (cffi and pycparser, ~0.09 s) out
of loading the hooks, and SciPy and cffi still import normally afterwards (mcusim calibrate uses
SciPy); and it loads cached functions without refreshing numba's registries (~0.25 s), which a
compile still does. The API leaves numba as it is."""
import importlib.util
import os
import subprocess
import sys

PROBE = """
import sys
from mcusim.machine import numba_cache
numba_cache.command_process = {skip}
with numba_cache.numba_probes_skipped():
    import numba.np.arraymath as arraymath
    from numba.core.typing import cffi_utils
linalg_during = "scipy.linalg" in sys.modules
import scipy.linalg
try:
    import cffi
    cffi_after = "cffi"
except ImportError:
    cffi_after = "no-cffi"
print(arraymath._HAVE_BLAS, linalg_during, scipy.linalg.solve([[2.0]], [4.0])[0], cffi_utils.SUPPORTED, cffi_after)
"""
CFFI = "cffi" if importlib.util.find_spec("cffi") else "no-cffi"  # (cffi is optional: some installs lack it)


def _run(skip: bool) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE.format(skip=skip)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_command_skips_the_probes_and_scipy_and_cffi_import_afterwards():
    assert _run(True) == ["False", "False", "2.0", "False", CFFI]


def test_the_api_leaves_numba_its_blas_and_cffi():
    assert _run(False) == ["True", "True", "2.0", str(CFFI == "cffi"), CFFI]


CACHED = """
import sys
from mcusim.machine import numba_cache
numba_cache.command_process = {command}
import mcusim.machine.native
mcusim.machine.native.jit.load_numba()  # (installs the loader in the command's process)
import numba

@numba.njit(cache=True)
def twice(x):
    return 2 * x


@numba.cfunc(numba.types.int64(numba.types.int64), cache=True)  # (as the hooks are compiled)
def thrice(x):
    return 3 * x


import ctypes
native = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(thrice.address)
print(twice(21), native(14), "numba.np.linalg" in sys.modules)
"""


def test_the_command_loads_cached_code_without_refreshing_and_compiles_as_numba_does(tmp_path):
    """numba.np.linalg is one of the modules only a registry refresh imports."""
    def run(command):
        (tmp_path / "program.py").write_text(CACHED.format(command=command))
        done = subprocess.run([sys.executable, str(tmp_path / "program.py")], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run(True) == ["42", "42", "True"]    # nothing cached: compiled, after numba's refresh
    assert run(True) == ["42", "42", "False"]   # loaded from the cache, no refresh
    assert run(False) == ["42", "42", "True"]   # the API: numba's own path
