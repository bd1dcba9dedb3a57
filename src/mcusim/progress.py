"""The progress bar of `mcusim run` on stderr: simulated cycles, simulated time and MIPS, so a
long run shows it is alive. Only on a terminal (a log or a pipe gets nothing), and transient,
so the summary after the run prints on a clean screen.

The Machine calls the bar (its on_progress) every half second after the first second. Firmware
output that shares the screen takes the bar down first; the bar comes back at the next call,
unless the firmware left a line unfinished (drawing then would wipe that line).
"""
from __future__ import annotations

import sys
import time

from .units import seconds


class RunProgress:
    def __init__(self, stream=None, max_cycles: int | None = None, quiet: bool = False):
        """`max_cycles`: the limit the user set, shown as a fraction; None: no total."""
        self.stream = sys.stderr if stream is None else stream
        self.enabled = not quiet and self.stream.isatty()
        self.max_cycles = max_cycles
        self.started = time.perf_counter()
        self._bar = None
        self._task = None
        self._mid_line = False  # the firmware's last output on the screen did not end its line

    def __call__(self, machine) -> None:
        if not self.enabled or self._mid_line:
            return
        if self._bar is None:
            self._start()
        mips = machine.instructions / max(time.perf_counter() - self.started, 1e-9) / 1e6
        self._bar.update(self._task, completed=machine.cycles, cycles=f"{machine.cycles:,}",
                         simulated=seconds(machine.simulated_seconds()), mips=f"{mips:.1f}")
        if self._bar.live.is_started:
            self._bar.refresh()
        else:
            self._bar.start()  # (draws it)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

        columns = [TextColumn("mcusim"), BarColumn(bar_width=24)]
        if self.max_cycles:
            columns.append(TaskProgressColumn())
        columns.append(TextColumn("{task.fields[cycles]} cycles, {task.fields[simulated]} simulated, "
                                  "{task.fields[mips]} MIPS"))
        # not redirecting stdout: firmware output must stay on stdout, and unbuffered
        self._bar = Progress(*columns, console=Console(file=self.stream, force_terminal=True), transient=True,
                             auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
        self._task = self._bar.add_task("run", total=self.max_cycles)

    def before_output(self, data: bytes, out) -> None:
        """Firmware output is about to be written to `out`: when that is the bar's screen, take
        the bar down, and note whether the output leaves a line unfinished."""
        if self.enabled and (out is self.stream or out.isatty()):
            self.stop()
            if data:
                self._mid_line = not data.endswith(b"\n")

    def stop(self) -> None:
        """Remove the bar (before the summary, or on an error)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
