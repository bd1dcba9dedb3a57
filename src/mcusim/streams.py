"""The run's standard streams: the firmware's output through to stdout and stderr, its console
input from stdin, and what a closed or failing stream does (nothing is lost: the output stays
in the result; README, exit status 74)."""
from __future__ import annotations

import errno
import os
import select
import sys

import click

from .files import descriptor

WAIT_SLICE_S = 0.1  # how often a write to a stream nobody reads asks whether the run is ending


class Output:
    """Writes firmware output through as it comes, a line (or PIPE_BUF bytes) at a time;
    `before(data, out)` runs first (the progress bar steps aside). A stream that cannot be
    written (closed, a full disk, a reader that went away) is reported once through
    `report(stream, error)` and skipped from then on: the run goes on, and its output stays in
    the result (run.json). A stream with a descriptor is written with os.write when select
    says it has room, so a reader that stops reading holds the run only until `give_up()`
    (the time limit, an interrupt): the output it did not take is then left out."""

    def __init__(self, before=None, report=None, give_up=None):
        self.before = before
        self.report = report
        self.give_up = give_up
        self.failed: dict[str, OSError] = {}  # stream -> why it could not be written
        self.pending = {"stdout": bytearray(), "stderr": bytearray()}

    def __call__(self, data: bytes, stream: str) -> None:
        if stream in self.failed:
            return
        out = sys.stderr if stream == "stderr" else sys.stdout
        try:
            if out is None:
                raise OSError(errno.EBADF, "closed")
            if self.before:
                self.before(data, out)
            pending = self.pending[stream]
            pending += data
            if b"\n" in data or stream == "stderr" or len(pending) >= select.PIPE_BUF:
                self._write(pending, out)
        except OSError as exc:
            self._fail(stream, out, exc)

    def _write(self, pending: bytearray, out) -> None:
        fd = descriptor(out)
        if fd is None or self.give_up is None or os.name != "posix":
            out.buffer.write(pending)
            out.flush()
        else:
            out.flush()  # (anything written to it before, first)
            while pending:
                if select.select([], [fd], [], WAIT_SLICE_S)[1]:  # (room for PIPE_BUF bytes at least)
                    del pending[:os.write(fd, pending[:select.PIPE_BUF])]
                elif self.give_up():
                    break
        pending.clear()

    def flush(self) -> None:
        if "stdout" not in self.failed and sys.stdout is not None:
            try:
                self._write(self.pending["stdout"], sys.stdout)
            except OSError as exc:
                self._fail("stdout", sys.stdout, exc)

    def _fail(self, stream: str, out, error: OSError) -> None:
        self.failed[stream] = error
        self.pending[stream].clear()
        to_devnull(out)
        if self.report:
            self.report(stream, error)



def to_devnull(out) -> None:
    """Point a failed std stream at /dev/null, so the flushes still to come (at exit too) succeed."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, out.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass  # (not a real file: nothing flushes it at exit)


class Input:
    """The firmware's console input: stdin, where a closed (`<&-`) or unreadable stdin reads as
    end of file. The machine waits on `fileno()` in slices and reads it with os.read (the time
    limit and interrupts end a wait for input); read1 is for a stdin without a descriptor."""

    def fileno(self) -> int:
        if sys.stdin is None:
            raise OSError(errno.EBADF, "stdin is closed")
        return sys.stdin.fileno()

    def read1(self, size: int) -> bytes:
        if sys.stdin is None:
            return b""
        try:
            stream = sys.stdin.buffer
            return getattr(stream, "read1", stream.read)(size)
        except (OSError, ValueError):
            return b""

    read = read1


def say(line: str) -> None:
    """A line on stderr; a stderr that cannot be written is given up on, not a traceback."""
    try:
        click.echo(line, err=True)
    except OSError:
        to_devnull(sys.stderr)
