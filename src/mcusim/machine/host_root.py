"""The host folder semihosting may use (`--semihosting-root DIR`), held so that firmware
cannot reach past it.

Every name is taken relative to the root and opened one component at a time from a file
descriptor of the root with O_NOFOLLOW: no symlink is followed (one swapped in between two
calls changes nothing) and ".." cannot climb out. Only regular files open (O_NONBLOCK, then
fstat: a FIFO or device cannot block the run), and only regular files are removed or renamed
(or replaced by a rename). SYS_SYSTEM runs a program inside the root only
when the user allowed it, never one the firmware wrote, created or renamed in this run, with
the root as its folder, a time limit and its output captured.
"""
from __future__ import annotations

import errno
import os
import selectors
import shlex
import signal
import stat
import subprocess
import time
from pathlib import Path

SYSTEM_TIMEOUT_S = 60.0
SYSTEM_OUTPUT_LIMIT = 1 << 20  # bytes of a command's output kept; the rest is dropped
WAIT_SLICE_S = 0.1  # how often a wait for a command asks whether the run is ending
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW


class Refused(Exception):
    """A request the root does not allow: the firmware gets -1 and `code` as its errno."""

    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code = code


class HostRoot:
    def __init__(self, root: str | Path, allow_system: bool = False):
        if os.open not in os.supports_dir_fd or not _NOFOLLOW:
            raise ValueError("a semihosting root needs a POSIX host (openat with O_NOFOLLOW)")
        self.path = Path(root).resolve()
        self.allow_system = allow_system
        self.system_timeout = SYSTEM_TIMEOUT_S
        self.written_files: set[tuple[int, int]] = set()  # (st_dev, st_ino) the firmware wrote or renamed
        self.written_names: set[str] = set()               # ... and the names it used for them

    def relative(self, name: str) -> str:
        """`name` as a normalized path below the root; absolute names only when inside it."""
        if os.path.isabs(name):
            name = os.path.relpath(os.path.normpath(name), self.path)
        relative = os.path.normpath(name)
        if relative == ".." or relative.startswith("../") or os.path.isabs(relative):
            raise Refused(errno.EACCES, f"'{name}' is outside the semihosting root")
        return relative

    def _parent(self, relative: str) -> tuple[int, str]:
        """A descriptor of the folder holding `relative` (walked with O_NOFOLLOW) and the last component."""
        *folders, last = relative.split("/")
        fd = os.open(self.path, _FOLDER)
        try:
            for folder in folders:
                inner = os.open(folder, _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd, last

    @staticmethod
    def _regular(folder: int, last: str, relative: str) -> os.stat_result | None:
        """The entry's lstat when it is a regular file, None when there is none; Refused for a
        symlink (ELOOP) or anything else (EACCES): open, remove and rename touch regular files only."""
        try:
            info = os.stat(last, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise Refused(errno.ELOOP, f"'{relative}' is a symbolic link (not followed)")
        if not stat.S_ISREG(info.st_mode):
            raise Refused(errno.EACCES, f"'{relative}' is not a regular file")
        return info

    def _open_regular(self, relative: str, flags: int) -> int:
        folder, last = self._parent(relative)
        try:
            self._regular(folder, last, relative)
            fd = os.open(last, flags | _NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, 0o644, dir_fd=folder)
        finally:
            os.close(folder)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in after the check
            os.close(fd)
            raise Refused(errno.EACCES, f"'{relative}' is not a regular file")
        return fd

    def open(self, name: str, flags: int) -> int:
        """A descriptor of the regular file `name` inside the root (OSError or Refused)."""
        relative = self.relative(name)
        fd = self._open_regular(relative, flags)
        if flags & (os.O_WRONLY | os.O_RDWR):
            self._mark(fd, relative)
        return fd

    def _mark(self, fd: int, relative: str) -> None:
        info = os.fstat(fd)
        self.written_files.add((info.st_dev, info.st_ino))
        self.written_names.add(relative)

    def remove(self, name: str) -> None:
        """Remove the regular file `name` (a folder, FIFO, device or symlink is refused)."""
        relative = self.relative(name)
        folder, last = self._parent(relative)
        try:
            self._regular(folder, last, relative)
            os.unlink(last, dir_fd=folder)
        finally:
            os.close(folder)

    def rename(self, old: str, new: str) -> None:
        """Rename the regular file `old` to `new`, which may only replace a regular file."""
        old, new = self.relative(old), self.relative(new)
        old_folder, old_last = self._parent(old)
        try:
            new_folder, new_last = self._parent(new)
            try:
                info = self._regular(old_folder, old_last, old)
                if info is None:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), old)
                self._regular(new_folder, new_last, new)
                os.rename(old_last, new_last, src_dir_fd=old_folder, dst_dir_fd=new_folder)
            finally:
                os.close(new_folder)
        finally:
            os.close(old_folder)
        self.written_files.add((info.st_dev, info.st_ino))
        self.written_names.update((old, new))

    def _check_program(self, words: list[str]) -> str:
        """The program's path, if it may run: a regular executable file inside the root that the
        firmware did not write, create or rename, on a command line naming none of those."""
        for word in words:
            try:
                named = self.relative(word)
            except Refused:
                continue
            if named in self.written_names:
                raise Refused(errno.EACCES, f"'{word}' was written or renamed by the firmware in this run")
        relative = self.relative(words[0])
        fd = self._open_regular(relative, os.O_RDONLY)
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if (info.st_dev, info.st_ino) in self.written_files:
            raise Refused(errno.EACCES, f"'{words[0]}' was written or renamed by the firmware in this run")
        if not info.st_mode & 0o111:
            raise Refused(errno.EACCES, f"'{words[0]}' is not executable")
        return str(self.path / relative)

    def system(self, command: str, give_up=lambda: False) -> tuple[int | None, bytes]:
        """Run `command` (split as a shell would, but with no shell) in the root: its exit code
        (negative: killed by that signal; None: killed at the time limit, or when `give_up()`,
        asked every WAIT_SLICE_S, says the run is ending) and its output (stdout and stderr
        together, the first SYSTEM_OUTPUT_LIMIT bytes)."""
        if not self.allow_system:
            raise Refused(errno.EACCES, "SYS_SYSTEM is off (pass --semihosting-system to allow it)")
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise Refused(errno.EINVAL, f"cannot split the command: {exc}") from None
        if not words:
            raise Refused(errno.EINVAL, "empty command")
        program = self._check_program(words)
        process = subprocess.Popen([program, *words[1:]], cwd=self.path, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            output, finished = _collect(process, time.monotonic() + self.system_timeout, give_up)
        finally:
            try:  # the whole group: what it left running in the background, too (before the
                os.killpg(process.pid, signal.SIGKILL)  # leader is reaped, so its id is not reused)
            except (ProcessLookupError, PermissionError):
                pass
            code = process.wait()
        return (code if finished else None), bytes(output)


def _collect(process, deadline: float, give_up) -> tuple[bytearray, bool]:
    """The process's output until it exits (left unreaped), or the deadline passes or
    `give_up()` (then False): waits in slices, so the run's own limits stay in force."""
    output = bytearray()
    with process.stdout, selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or give_up():
                return output, False
            if not selector.select(min(left, WAIT_SLICE_S)):
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            output += chunk[:SYSTEM_OUTPUT_LIMIT - len(output)]
    while time.monotonic() < deadline and not give_up():  # output closed: wait for the exit without reaping
        if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return output, True
        time.sleep(0.005)
    return output, False
