"""On the kit's firmware: observation never changes a measurement, and the cycle limit is
honoured to the instruction."""
import pytest

from conftest import BOARDS

import mcusim
from mcusim.machine import machine

pytestmark = pytest.mark.integration

# each capture option of `mcusim run` (--all is all of them), as API arguments
CAPTURES = {"--profile": dict(profile=True), "--pc-sample-cycles": dict(pc_sample_cycles=1000),
            "--perfetto": dict(timeline=True), "--swo": dict(swo=True), "--vcd": dict(vcd=True),
            "--branch-trace": dict(branch_trace=True), "--flamegraph": dict(flamegraph=True),
            "--power-trace": dict(power_trace=True)}
CAPTURES["--all"] = {key: value for options in CAPTURES.values() for key, value in options.items()}


def _measurements(result):
    return {"cycles": result.cycles, "instructions": result.instructions, "stdout": result.stdout,
            "exit": result.exit_code, "energy_j": result.energy and result.energy["energy_j"],
            "regions": [(r["name"], r["count"], r["cycles_min"], r["cycles_max"], r["cycles_mean"])
                        for r in result.regions]}


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
def test_captures_and_host_time_stops_never_change_a_measurement(board, firmware_build, monkeypatch):
    """Cycles, instructions, every region, energy and the firmware's own CYCCNT readings (the
    `dwt` program prints them) are the same with any capture, and with emulation stopped every
    half millisecond of host time (the stops that look for the time limit and interrupts)."""
    for program in ("odd_shapes-opt", "dwt"):
        elf = firmware_build / board / f"{program}.elf"
        plain = _measurements(mcusim.run(elf, board))
        assert plain["exit"] == 0 and (plain["regions"] or program == "dwt")
        for option, arguments in CAPTURES.items():
            assert _measurements(mcusim.run(elf, board, **arguments)) == plain, f"{program} {option} on {board}"
        monkeypatch.setattr(machine, "TICK_SECONDS", 0.0005)
        assert _measurements(mcusim.run(elf, board)) == plain, f"{program} with host-time stops on {board}"
        monkeypatch.undo()


@pytest.mark.parametrize("board", BOARDS)
def test_cycle_limit_is_honoured_to_the_instruction(board, firmware_build):
    """Functional runs (one cycle per instruction) end exactly at the limit; timed ones at the
    instruction that reaches it: past the limit by less than that instruction's cost, its wait
    states included (a few cycles)."""
    elf = firmware_build / board / "hello.elf"
    for limit in (1, 10, 1000):
        functional = mcusim.run(elf, board, max_cycles=limit, timing=False)
        assert (functional.exit_code, functional.cycles, functional.instructions) == (124, limit, limit)
        timed = mcusim.run(elf, board, max_cycles=limit)
        assert timed.exit_reason == "max-cycles" and limit <= timed.cycles < limit + 12, (limit, timed.cycles)
