"""The `mcusim` command keeps numba's BLAS probe (an import of scipy.linalg, ~0.3 s of start-up)
and its cffi support (an import of cffi and pycparser, ~0.09 s) out of loading the hooks, and
SciPy and cffi still import normally afterwards (mcusim calibrate uses SciPy)."""
import importlib.util
import subprocess
import sys

PROBE = """
import sys
from mcusim.machine import numba_cache
numba_cache.skip_blas_probe = {skip}
with numba_cache.blas_probe_skipped():
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
