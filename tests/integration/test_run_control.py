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
    """A model run paused at every call of its layer kernels (stepping a few instructions
    at some), and coremark-like stepped one instruction at a time through its first 3,000 (IT
    blocks, loads into PC, calls) then run on: the same cycles, counters, energy, regions,
    memory peaks and output as the runs straight through."""
    elf = firmware_build / board / "micro_speech-opt.elf"
    plain = run(elf, board)
    sim = Simulator(elf, board)
    kernels = [n for _, _, n in sim.image.symbols
               if n in ("channels", "taps_of") or n.startswith("tfl_") and n.endswith(("_opt", "_run", "softmax"))]
    for name in kernels:
        sim.add_breakpoint(name)
    hits = 0
    while (stop := sim.run_until()).reason == "breakpoint":
        hits += 1
        assert stop.pc in sim.breakpoints and stop.symbol in kernels
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


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
def test_watchpoints_and_fault_catch_change_nothing_measured(firmware_build, board):
    """A watchpoint stops after each write of the watched global (a RAM watch: Unicorn's slow path
    and, on mcu-d, the D-cache model see the same accesses) and one on a core peripheral register
    (SysTick's control, in the PPB) stops after the firmware writes it; the vector catch stops as
    the exceptions program's recovered HardFault is entered. Each run then measures what the run
    straight through does."""
    elf = firmware_build / board / "debug-demo.elf"
    plain = run(elf, board)
    sim = Simulator(elf, board)
    sim.run_until("main")  # (after the start-up code zeroed .bss)
    assert sim.add_watchpoint("counter") == sim.image.symbol("counter") and sim.watchpoints[0][1:] == (4, "write")
    seen = []
    while (stop := sim.run_until()).reason == "watchpoint":
        assert stop.watch.is_write and stop.watch.address == stop.watch.watched and "sum_of_squares" in stop.symbol
        seen.append(int.from_bytes(sim.read_memory(stop.watch.watched, 4), "little"))
    assert seen == list(range(1, 11)) and stop.reason == "exit" and stop.exit_code == 0
    assert _measured(sim.run()) == _measured(plain)

    elf = firmware_build / board / "exceptions.elf"
    plain = run(elf, board)
    sim = Simulator(elf, board)
    sim.catch_faults = True
    sim.add_watchpoint(0xE000E010, 4, "write")  # SYST_CSR (ARMv7-M ARM B3.3.3)
    stops = []
    while (stop := sim.run_until()).reason != "exit":
        stops.append((stop.reason, stop.exception))
        if stop.reason == "watchpoint":
            assert stop.watch.watched == 0xE000E010
    assert ("fault", 3) in stops and ("watchpoint", None) in stops
    assert _measured(sim.run()) == _measured(plain)


@pytest.mark.slow
def test_fault_catch_reset_and_result(firmware_build):
    """The debugger's view: a fault made on purpose (write_memory) stops in the HardFault handler
    with the exception frame stacked; reset() starts the same run afresh; run() after the end
    gives that run's result again."""
    elf = firmware_build / "mcu-d" / "debug-demo.elf"
    plain = run(elf, "mcu-d")
    sim = Simulator(elf, "mcu-d")
    sim.catch_faults = True
    sim.run_until("main")
    address = sim.image.symbol("make_fault")
    sim.write_memory(address, (1).to_bytes(4, "little"))
    stop = sim.run_until()
    assert (stop.reason, stop.exception) == ("fault", 3)
    assert "HardFault handler" in sim.describe(stop)
    frame_pc = int.from_bytes(sim.read_memory(sim.registers()["sp"] + 24, 4), "little")  # stacked PC
    assert sim.image.symbolize(frame_pc).startswith("undefined_instruction")
    assert sim.run().exit_code == 131
    sim.reset()
    assert sim.catch_faults and sim.run_until("sum_of_squares").reason == "breakpoint"
    assert int.from_bytes(sim.read_memory(address, 4), "little") == 0  # a new run: RAM from the image again
    result = sim.run()
    assert _measured(result) == _measured(plain) and sim.run() is result
    with pytest.raises(ValueError, match="nothing there can be watched"):
        sim.add_watchpoint(0xF0000000)
    with pytest.raises(ValueError, match="kind"):
        sim.add_watchpoint("counter", kind="execute")


@pytest.mark.slow
def test_event_callbacks_see_regions_exceptions_and_itm(firmware_build):
    """on(): region markers, exception entries and returns and ITM writes reach the callbacks at
    their exact cycles, a callback returning True pauses the run there, and the run measures what
    it measures without them."""
    from mcusim.run_control import EVENT_KINDS

    elf = firmware_build / "mcu-m" / "debug-demo.elf"
    plain = run(elf, "mcu-m")
    sim = Simulator(elf, "mcu-m")
    events = []
    for kind in EVENT_KINDS:
        sim.on(kind, events.append)
    sim.on("region_end", lambda event: True)
    stop = sim.run_until()
    assert stop.reason == "event" and [(e.kind, e.name) for e in events] == [("region_begin", "squares"),
                                                                             ("region_end", "squares")]
    result = sim.run()
    assert _measured(result) == _measured(plain)
    itm = [e for e in events if e.kind == "itm"]
    assert [(e.number, e.data) for e in itm] == [(1, (385).to_bytes(4, "little"))]
    (region,) = [r for r in result.regions if r["name"] == "squares"]
    assert region["cycles_mean"] == events[1].cycles - events[0].cycles
    assert events[0].seconds < events[1].seconds < itm[0].seconds <= result.simulated_seconds

    elf = firmware_build / "mcu-d" / "exceptions.elf"
    plain = run(elf, "mcu-d")
    sim = Simulator(elf, "mcu-d")
    seen = []
    sim.on("exception_entry", lambda event: seen.append(event.name))
    sim.on("exception_return", lambda event: seen.append("/" + event.name))
    assert _measured(sim.run()) == _measured(plain)
    assert len([name for name in seen if not name.startswith("/")]) == plain.exceptions_taken
    assert {"SysTick", "SVCall", "PendSV", "HardFault", "/HardFault"} <= set(seen)
    with pytest.raises(ValueError, match="use one of"):
        sim.on("branch", print)


@pytest.mark.slow
def test_a_step_that_takes_an_exception_ends_at_the_handler(firmware_build):
    """Stepping the exceptions program 50 instructions at a time: a step that enters a handler
    (SysTick, SVC, PendSV, the UsageFault escalated to HardFault) ends there, before the
    handler's first instruction, as a halting debug step does; and the run still measures what
    it does straight through."""
    elf = firmware_build / "mcu-m" / "exceptions.elf"
    plain = run(elf, "mcu-m")
    sim = Simulator(elf, "mcu-m")
    handlers = {sim.address_of(name): name for _, _, name in sim.image.functions if name.endswith("_Handler")}
    entered = set()
    before = sim.step(1)
    while (stop := sim.step(50)).reason != "exit":
        assert stop.reason == "step" and stop.instructions - before.instructions <= 2 * 50  # (Unicorn counts an IT and its instruction as one)
        if stop.pc in handlers:
            entered.add(handlers[stop.pc])
            assert sim.registers()["xpsr"] & 0x1FF >= 2  # (Handler mode already: the entry happened)
        before = stop
    assert {"SysTick_Handler", "SVC_Handler", "PendSV_Handler", "HardFault_Handler"} <= entered, entered
    assert _measured(sim.run()) == _measured(plain)
