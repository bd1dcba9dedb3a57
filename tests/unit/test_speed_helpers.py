"""benchmarks/speed.py's helpers: goal verdicts, and plain Unicorn running an image that prints
through semihosting (its minimal handler) with the same output as mcusim; block_hook_floor.py's
counting hook on plain Unicorn; the vendor ratios from runs in turn."""
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


def test_block_hook_floor_counts_every_block():
    """benchmarks/block_hook_floor.py: its counting hook, added to plain Unicorn through speed.py's
    `prepare`, sees every block the run executes (as many as a Python block hook counts), and the
    image still runs to its end."""
    import numpy as np
    from unicorn import UC_HOOK_BLOCK

    import block_hook_floor

    counter, seen = np.zeros(1, np.int64), []
    count_natively = block_hook_floor.with_hook(block_hook_floor.counting_hook, counter)

    def prepare(uc):
        count_natively(uc)
        uc.hook_add(UC_HOOK_BLOCK, lambda *_: seen.append(1))

    seconds, output = speed.plain_unicorn(examples.path("hello", "mps2-an386"), "mps2-an386", prepare=prepare)
    assert output == "Hello from mcusim on mps2-an386\n"
    assert counter[0] > 100 and counter[0] == len(seen)


def test_vendor_ratios_come_from_runs_in_turn(monkeypatch):
    """Each vendor board and its counterpart run alternately, the order swapped each pair, and the
    ratio is of their median MIPS (a slow run of either, as a loaded machine gives, moves neither)."""
    order = []
    seconds = {"mcu-b": iter([0.02, 0.02, 0.09, 0.02, 0.02]), "mps2-an386": iter([0.01, 0.05, 0.01, 0.01, 0.01])}

    class Result:
        exit_code, exit_detail = 0, ""

    def run(elf, board):
        order.append(board)
        result = Result()
        result.host_seconds, result.instructions = next(seconds[board]), 1_000_000
        return result

    monkeypatch.setattr(speed.mcusim, "run", run)
    pairs = speed.measure_vendor_pairs(["mps2-an386", "mcu-b"], ["bench"], repeat=1)
    assert order == ["mcu-b", "mps2-an386", "mps2-an386", "mcu-b"] * 2 + ["mcu-b", "mps2-an386"]
    assert pairs == {("mcu-b", "bench"): (50.0, 100.0)}
    assert speed.vendor_table(pairs)[2] == "| mcu-b | mps2-an386 | bench | 50 | 100 | 0.50x | met | met |"


def test_the_benchmark_keeps_its_decode_stores_to_itself(monkeypatch, tmp_path):
    """The start table's processes keep their decode store (what their `mcusim prepare`
    describes) in the store folder they are given, and the decode measurements' store, set in
    the benchmark's environment for each image, is put back when they end: left set, it named a
    deleted folder that the start table's processes made again, outside any temporary folder."""
    env = speed._environment(str(tmp_path / "numba"), str(tmp_path / "store"))
    assert env["MCUSIM_DECODE_CACHE"] == str(tmp_path / "store" / "decode")
    assert env["MCUSIM_NATIVE_STORE"] == str(tmp_path / "store")

    def measure(boards, programs, repeat, stores):
        monkeypatch.setitem(speed.os.environ, "MCUSIM_DECODE_CACHE", str(Path(stores) / "decode-image"))
        return {}

    for name, value in (("build", lambda *a: None), ("measure_speed", measure),
                        ("measure_vendor_pairs", lambda *a: {}), ("cross_board_table", lambda *a: []),
                        ("prepared_decode_table", lambda *a: []), ("start_table", lambda *a: [])):
        monkeypatch.setattr(speed, name, value)
    monkeypatch.setattr(sys, "argv", ["speed.py", "--board", "mps2-an386", "--program", "bench"])
    for before in (str(tmp_path / "mine"), None):
        if before is None:
            monkeypatch.delenv("MCUSIM_DECODE_CACHE", raising=False)
        else:
            monkeypatch.setenv("MCUSIM_DECODE_CACHE", before)
        speed.main()
        assert speed.os.environ.get("MCUSIM_DECODE_CACHE") == before
