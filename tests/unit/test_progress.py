"""The `mcusim run` progress bar: drawn on a terminal only, with cycles, simulated time and
MIPS, out of the way of firmware output."""
import io
import re
from types import SimpleNamespace

from mcusim.progress import RunProgress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def machine(cycles, instructions):
    return SimpleNamespace(cycles=cycles, instructions=instructions, simulated_seconds=lambda: cycles / 100e6)


def test_bar_on_a_terminal_shows_cycles_simulated_time_and_mips():
    screen = Terminal()
    bar = RunProgress(screen)
    bar.started -= 2.0  # two seconds into the run
    bar(machine(12_345_678, 20_000_000))
    shown = screen.getvalue()
    assert "12,345,678 cycles" in shown and "123.457 ms simulated" in shown
    assert 9.0 < float(re.search(r"([\d.]+) MIPS", shown).group(1)) <= 10.0  # 20 M instructions in ~2 s
    assert "%" not in shown  # no limit given: no fraction
    bar.stop()
    assert screen.getvalue().endswith("\x1b[2K")  # transient: erased for the summary


def test_bar_shows_the_fraction_of_max_cycles():
    screen = Terminal()
    bar = RunProgress(screen, max_cycles=100_000_000)
    bar(machine(25_000_000, 30_000_000))
    assert "25%" in screen.getvalue()
    bar.stop()


def test_nothing_on_stderr_when_it_is_not_a_terminal_or_quiet():
    for stream, quiet in ((io.StringIO(), False), (Terminal(), True)):
        bar = RunProgress(stream, max_cycles=10, quiet=quiet)
        bar(machine(5, 5))
        bar.before_output(b"hello\n", stream)
        bar.stop()
        assert stream.getvalue() == ""


def test_firmware_output_takes_the_bar_down_and_an_unfinished_line_keeps_it_down():
    screen = Terminal()
    bar = RunProgress(screen)
    bar(machine(1000, 1000))
    bar.before_output(b"partial line", screen)
    assert bar._bar is None  # stopped before the output
    drawn = len(screen.getvalue())
    bar(machine(2000, 2000))
    assert len(screen.getvalue()) == drawn  # would wipe the unfinished line
    bar.before_output(b" ends\n", screen)
    bar(machine(3000, 3000))
    assert "3,000 cycles" in screen.getvalue()[drawn:]
    bar.stop()
