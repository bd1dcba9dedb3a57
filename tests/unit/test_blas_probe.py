"""The `mcusim` command keeps numba's BLAS probe (an import of scipy.linalg, ~0.3 s of start-up)
out of loading the hooks, and SciPy still imports normally afterwards (mcusim calibrate uses it)."""
import subprocess
import sys

PROBE = """
import sys
from mcusim.machine import numba_cache
numba_cache.skip_blas_probe = {skip}
with numba_cache.blas_probe_skipped():
    import numba.np.arraymath as arraymath
linalg_during = "scipy.linalg" in sys.modules
import scipy.linalg
print(arraymath._HAVE_BLAS, linalg_during, scipy.linalg.solve([[2.0]], [4.0])[0])
"""


def _run(skip: bool) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE.format(skip=skip)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_command_skips_the_probe_and_scipy_imports_afterwards():
    assert _run(True) == ["False", "False", "2.0"]


def test_the_api_leaves_numba_its_blas():
    assert _run(False) == ["True", "True", "2.0"]
