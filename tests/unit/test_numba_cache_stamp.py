"""numba_cache.stamp_package: a change to any source file of the native package makes numba
rebuild every cached function of it (numba alone only looks at a function's own file)."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from mcusim.machine import native, numba_cache

PACKAGE = Path(native.__file__).parent


def test_the_stamp_changes_when_any_file_of_the_package_changes(tmp_path):
    copy = tmp_path / "native"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    stamp = numba_cache.package_stamp(copy)
    assert numba_cache.package_stamp(copy) == stamp
    files = sorted(copy.glob("*.py"))
    assert len(files) > 10
    seen = {stamp}
    for path in files:
        original = path.read_bytes()
        path.write_bytes(original + b"\n# changed\n")
        changed = numba_cache.package_stamp(copy)
        assert changed not in seen, path.name
        seen.add(changed)
        path.write_bytes(original)
        assert numba_cache.package_stamp(copy) == stamp, path.name


def test_the_native_package_is_stamped():
    native.jit.load_numba()  # (numba is set up when something is first compiled)
    assert str(PACKAGE.resolve()) in {str(Path(p).resolve()) for p in numba_cache._STAMPED}
    locator = native.tables._range_sum.dispatcher._cache._impl.locator
    assert isinstance(locator, numba_cache._PackageStamped)
    assert locator.get_source_stamp() == numba_cache.package_stamp(PACKAGE)


PROGRAM = """
import sys
sys.path.insert(0, {root!r})
import pkg.user
print(pkg.user.value())
"""


def _package(root: Path, stamped: bool) -> None:
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""
        import os
        from mcusim.machine import numba_cache
        if {stamped}:
            numba_cache.stamp_package(os.path.dirname(__file__))
    """))
    (pkg / "consts.py").write_text("SLOT = 1\n")
    (pkg / "user.py").write_text(textwrap.dedent("""
        import numba
        from .consts import SLOT

        @numba.njit(cache=True)
        def value():
            return SLOT
    """))


def _run(root: Path) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(root / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(numba_cache.__file__).parents[2])] + sys.path)
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(root=str(root))], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_changed_constant_in_another_module_recompiles(tmp_path):
    for stamped in (False, True):
        root = tmp_path / f"stamped_{stamped}"
        root.mkdir()
        _package(root, stamped)
        assert _run(root) == "1"
        (root / "pkg" / "consts.py").write_text("SLOT = 2\n")
        # numba alone keeps the stale machine code; with the package stamp it recompiles
        assert _run(root) == ("2" if stamped else "1")
