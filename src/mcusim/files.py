"""Host files: opening an input (firmware, a bundle's files, a power model) only when it is a
regular file (a FIFO would block the reader until a writer came, /dev/zero would never end),
the descriptor behind a stream, which waits on the host select on, mcusim's folder in the
user's cache, and a cache file written whole."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class NotRegular(ValueError):
    """The path is a folder, FIFO, device or socket; `kind` says which ("a FIFO")."""

    def __init__(self, path, kind: str):
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind


def open_regular(path: str | Path):
    """`path` open for reading in binary when it is a regular file, NotRegular when it is not,
    found before any read and without blocking (a FIFO opens at once with O_NONBLOCK, which
    changes nothing for a regular file); OSError when it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(path, "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                         else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
    return os.fdopen(fd, "rb")


def descriptor(stream) -> int | None:
    """The file descriptor behind `stream`, if it has one (not an in-memory stream)."""
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def user_cache_dir() -> Path | None:
    """mcusim's folder in the user's cache: $XDG_CACHE_HOME/mcusim or ~/.cache/mcusim; None
    without a home (never a folder relative to the working directory)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mcusim" if os.path.isabs(base) else None


def write_whole(path: Path, write) -> bool:
    """Write `path` through `write(file)` into a temporary file beside it, renamed over it, so a
    reader never sees half of it (the folder, if made, private to its user). False, with nothing
    left behind, where it cannot be written."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as out:
            temporary = out.name
            write(out)
        os.replace(temporary, path)
        return True
    except OSError:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        return False
