"""Run control in the Python API (src/mcusim/run_control.py): breakpoints by symbol and address,
run_until, step, registers and memory; and the promise that pausing and stepping never change
what is measured, on every board."""
import pytest

from conftest import BOARDS
from mcusim.api import Simulator, run


def _measured(result) -> dict:
    regions = [(r["name"], r["count"], r["cycles_mean"]) for r in result.regions]
    return {"cycles": result.cycles, "instructions": result.instructions, "stdout": result.stdout,
            "exit": (result.exit_reason, result.exit_code), "stalls": result.stalls, "dwt": result.dwt,
            "energy": (result.energy or {}).get("energy_j"), "regions": regions, "memory": result.memory}


@pytest.mark.parametrize("board", BOARDS)
def test_pausing_and_stepping_change_nothing_measured(firmware_build, board):
    """A model run paused at every call of the kit's layer functions (stepping a few instructions
    at some), and coremark-like stepped one instruction at a time through its first 3,000 (IT
    blocks, loads into PC, calls) then run on: the same cycles, counters, energy, regions,
    memory peaks and output as the runs straight through."""
    elf = firmware_build / board / "micro_speech-opt.elf"
    plain = run(elf, board)
    sim = Simulator(elf, board)
    for name in [n for _, _, n in sim.image.symbols if n.startswith("tinyml_")]:
        sim.add_breakpoint(name)
    hits = 0
    while (stop := sim.run_until()).reason == "breakpoint":
        hits += 1
        assert stop.pc in sim.breakpoints and stop.symbol.startswith("tinyml_")
        if hits % 3 == 0:
            assert sim.step(1 + hits % 11).reason in ("step", "breakpoint")
    assert hits > 5 and stop.reason == "exit"
    assert _measured(sim.run()) == _measured(plain)

    elf = firmware_build / board / "coremark-like.elf"
    plain = run(elf, board, max_cycles=3_000_000)
    sim = Simulator(elf, board, max_cycles=3_000_000)
    before = sim.step(1)
    for _ in range(2_999):
        after = sim.step(1)
        # one instruction a step; an IT block's instructions go with their IT (Unicorn counts the
        # block as one), and a semihosting BKPT right after the step is served in it
        assert 1 <= after.instructions - before.instructions <= 5 and after.cycles >= before.cycles
        before = after
    assert _measured(sim.run()) == _measured(plain)


def test_breakpoints_steps_registers_and_memory(firmware_build):
    elf = firmware_build / "mcu-d" / "stack-heap.elf"
    sim = Simulator(elf, "mcu-d")
    main = sim.image.symbol("main") & ~1
    stop = sim.run_until("main")
    assert (stop.reason, stop.pc, stop.symbol) == ("breakpoint", main, "main")
    registers = sim.registers()
    assert registers["pc"] == main and registers["sp"] == registers["msp"] and "s31" in registers
    assert 0 < stop.cycles <= sim.machine.cycles and stop.instructions > 0
    stepped = sim.step(3)
    assert stepped.reason == "step" and stepped.instructions == stop.instructions + 3
    # memory: a global read back, a write into RAM, and refusals outside it
    deepest = sim.image.symbol("deepest_sp")
    sim.write_memory(deepest, b"\x78\x56\x34\x12")
    assert sim.read_memory(deepest, 4) == b"\x78\x56\x34\x12"
    with pytest.raises(ValueError, match="only RAM"):
        sim.write_memory(main, b"\0\0")
    with pytest.raises(ValueError, match="no such symbol"):
        sim.add_breakpoint("no_such_function")
    # a breakpoint hit every time its function runs; removing it lets the run go on
    recurse = sim.add_breakpoint("recurse")
    depths = []
    for _ in range(5):
        stop = sim.run_until()
        assert stop.pc == recurse
        depths.append(sim.registers()["r0"])
    assert depths == [64, 63, 62, 61, 60]  # recurse(n) calls recurse(n - 1)
    sim.remove_breakpoint("recurse")
    assert sim.run_until().reason == "exit"
    result = sim.run()
    assert result.exit_code == 0 and result.memory["lowest_sp"] == int.from_bytes(sim.read_memory(deepest, 4),
                                                                                     "little")
