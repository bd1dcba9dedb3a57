"""Where numba caches the native hooks' compiled code, chosen before the native package defines them,
and when that code is stale.

numba caches next to the source (__pycache__), else in the user's cache directory, and
raises at import when it can write neither (a read-only install run by a user without a
writable HOME): then mcusim could not even print `--help`. This picks a private directory
under the system's temporary directory instead (compiling once per boot, not per run), or,
where nothing at all can be written, no cache (compiling every run), and says so once.

numba keys a cached function on its own source file only, but the native functions freeze
constants and inline functions from other modules of their package (layout.py's slots above
all): a change to layout.py would leave every other module's cached machine code in use,
reading the wrong slots. stamp_package() makes every function of a package stamped with a
hash of all the package's source files, so any change anywhere rebuilds all of it.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path


def _writable(directory: str | Path) -> bool:
    """numba's own test of a cache directory: create it and write a file in it."""
    try:
        os.makedirs(directory, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
        return True
    except OSError:
        return False


def _user_cache_dir() -> str:
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _private_temp_dir() -> str | None:
    """$TMPDIR/mcusim-numba-<uid>, made by this user and writable by nobody else (a cache another
    user could write would run their code), else a fresh temporary directory, else None."""
    try:
        base = tempfile.gettempdir()
    except (OSError, FileNotFoundError):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(base, f"mcusim-numba-{uid}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        path = None
    if path is not None:
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o022 and _writable(path):
            return path
    try:
        return tempfile.mkdtemp(prefix="mcusim-numba-")
    except OSError:
        return None


def choose(source_file: str) -> bool:
    """Make sure numba has a cache directory it can write for `source_file`'s functions; False
    when there is none (compile without a cache). Call before any `cache=True` decorator runs."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and _writable(given) or _writable(Path(source_file).parent / "__pycache__") \
            or _writable(_user_cache_dir()):
        return True  # (numba's own choice works)
    fallback = _private_temp_dir()
    where = ", ".join(([given] if given else []) + [str(Path(source_file).parent / "__pycache__"), _user_cache_dir()])
    if fallback is None:
        _say(f"numba cannot write its cache ({where}) nor a temporary directory: compiling without a cache "
             f"(slower start)")
        return False
    os.environ["NUMBA_CACHE_DIR"] = fallback
    if "numba" in sys.modules:  # (numba read its settings at import: have it read them again)
        from numba.core import config

        config.reload_config()
    _say(f"numba cannot write its cache ({where}): caching compiled code in {fallback} (set NUMBA_CACHE_DIR "
         f"to choose)")
    return True


def _say(message: str) -> None:
    if sys.stderr is not None:
        try:
            sys.stderr.write(f"mcusim: warning: {message}\n")
        except (OSError, ValueError):
            pass


_STAMPED: set[str] = set()  # package directories whose functions carry the package's stamp


def package_stamp(directory: str | Path) -> str:
    """A hash of the names and contents of every Python source file in `directory`."""
    files = sorted(Path(directory).glob("*.py"))
    return _hash_files(tuple((str(path), *_identity(path)) for path in files))


def _identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=16)
def _hash_files(files: tuple[tuple[str, int, int], ...]) -> str:
    """(keyed by each file's path, modification time and size: a changed file is hashed again)"""
    digest = hashlib.sha256()
    for path, _, _ in files:
        digest.update(os.path.basename(path).encode() + b"\0")
        digest.update(Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


class _PackageStamped:
    """Mixed into numba's source-file cache locators: only for functions of a stamped package,
    whose source stamp becomes package_stamp() of its directory."""

    def get_source_stamp(self):
        return package_stamp(os.path.dirname(os.path.abspath(self._py_file)))

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) not in _STAMPED:
            return None
        return super().from_function(py_func, py_file)


def _package_locators() -> list[type]:
    """_PackageStamped versions of numba's locators for a function's own source file, in numba's
    order (NUMBA_CACHE_DIR, __pycache__ next to the source, the user's cache directory)."""
    from numba.core import caching

    found = []
    for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"):
        base = getattr(caching, name, None) or getattr(caching, "_" + name, None)  # (numba < 0.61: _Name)
        if base is not None:
            found.append(type("PackageStamped" + base.__name__.lstrip("_"), (_PackageStamped, base), {}))
    return found


def stamp_package(directory: str | Path) -> None:
    """From now on, numba caches every function defined in `directory` under package_stamp()
    of that directory. Call before any of them is compiled."""
    from numba.core import caching

    _STAMPED.add(os.path.abspath(directory))
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    if not any(issubclass(cls, _PackageStamped) for cls in impl._locator_classes):
        impl._locator_classes[:0] = _package_locators()


command_process = False  # set by the `mcusim` command (launch.py), which owns its process: numba's start is trimmed

# (the module hidden, the numba module whose import probes for it)
_PROBED = (("scipy.linalg.cython_blas", "numba.np.arraymath"), ("cffi", "numba.core.typing.cffi_utils"))


@contextlib.contextmanager
def numba_probes_skipped():
    """While numba loads or compiles the first hook, its registries import numba.np.arraymath,
    which probes for a BLAS by importing scipy.linalg (0.3 s of every start where SciPy is
    installed), and its typing context imports numba.core.typing.cffi_utils, which imports cffi
    and so pycparser (0.09 s, building its lexer). The hooks use neither, so the `mcusim`
    command hides both for the moment; numba's linear algebra and cffi support then stay off in
    that process (the API leaves them, as a caller's own numba code may need them). scipy.linalg
    and cffi themselves import normally afterwards."""
    hidden = [name for name, prober in _PROBED if prober not in sys.modules and name not in sys.modules]
    if not command_process or not hidden:
        yield
        return
    for name in hidden:
        sys.modules[name] = None  # (an import of it raises ImportError: numba's probe finds nothing)
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def load_cached_without_refresh() -> None:
    """(For the `mcusim` command, which owns its process.) Before every cache look-up numba
    refreshes its typing and lowering registries, importing most of its own modules (0.25 s of
    each start), although loading cached machine code needs only the runtime (NRT) it links
    against and the modules its pickled environment names (imported as it is unpickled). A
    look-up then initialises the NRT and loads; a miss, or a load that fails, takes numba's own
    path, which refreshes before compiling. Left alone if this numba lacks the internals it
    relies on."""
    from numba.core import caching
    from numba.core.runtime import rtsys

    refreshing = caching.Cache.load_overload
    if getattr(refreshing, "skips_refresh", False) or not all(
            hasattr(caching.Cache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")):
        return

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)
        try:
            with self._guard_against_spurious_io_errors():
                found = self._load_overload(sig, target_context)
                if found is not None:
                    return found
        except Exception:  # (numba's own path loads it again after refreshing, or compiles it)
            pass
        return refreshing(self, sig, target_context)

    load_overload.skips_refresh = True
    caching.Cache.load_overload = load_overload
