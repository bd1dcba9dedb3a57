"""Where numba caches the native hooks' compiled code, chosen before the native package defines them.

numba caches next to the source (__pycache__), else in the user's cache directory, and
raises at import when it can write neither (a read-only install run by a user without a
writable HOME): then mcusim could not even print `--help`. This picks a private directory
under the system's temporary directory instead (compiling once per boot, not per run), or,
where nothing at all can be written, no cache (compiling every run), and says so once.
"""
from __future__ import annotations

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
