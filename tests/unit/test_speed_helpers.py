"""benchmarks/speed.py's helpers: goal verdicts, and plain Unicorn running an image that prints
through semihosting (its minimal handler) with the same output as mcusim."""
import sys
from pathlib import Path

import mcusim
from mcusim import examples

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import speed  # noqa: E402


def test_verdicts_and_ratios():
    assert speed.verdict(1.9, speed.UNICORN_GOAL) == "met"
    assert speed.verdict(2.1, speed.UNICORN_GOAL) == "not met"
    assert speed.verdict(0.5, speed.VENDOR_GOAL, at_most=False) == "met"
    assert speed.verdict(0.2, speed.VENDOR_FLOOR, at_most=False) == "not met"
    assert speed.verdict(None, 1.0) == "n/a" and speed.ratio(1.0, None) is None and speed.ratio(3.0, 2.0) == 1.5
    assert speed.mips(50_000_000, 2.0) == "25.0" and speed.mips(60_000, 2.0) == "0.030"


def test_plain_unicorn_prints_what_mcusim_prints():
    elf = examples.path("hello", "mps2-an386")
    seconds, output = speed.plain_unicorn(elf, "mps2-an386")
    assert seconds > 0 and output == mcusim.run(elf, "mps2-an386").stdout == "Hello from mcusim on mps2-an386\n"


def test_plain_unicorn_keeps_the_console_uart_only_when_asked():
    elf = examples.path("uart-hello", "mps2-an386")
    seconds, output = speed.plain_unicorn(elf, "mps2-an386", uart=True)
    assert output == mcusim.run(elf, "mps2-an386").stdout and "(UART)" in output
    assert speed.plain_unicorn(elf, "mps2-an386") is None  # without the hook the UART is not mapped: a fault
