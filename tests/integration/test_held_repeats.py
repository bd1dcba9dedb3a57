"""A tight loop's repeats held by the block hook (machine/native/held_repeats.py) change nothing
a run reports: each run here is compared with one that counts every repeat in the first path
(HOLD_REPEATS off), on programs whose loops are held, and on loops a hook or the bus reads the
state from (which refuse the hold), with a stop asked from another thread, a cycle limit and run
control pausing inside held loops; short loops are not held, and loops a stop or a window's end
cut into are held again."""
import threading

import pytest

from mcusim import Simulator
from mcusim.machine import native as N
from mcusim.machine.native.held_front import HELD_FRONT

from asmbuild import RESET, build_elf

HOST_FIELDS = ("host_seconds", "mips")

# (board, program, options): M4 and M7 (branch predictor) without flash ports; vendor boards whose
# repeats between sampled timing's windows add their estimates, with energy (and its trace);
# loops a divide hook, Python's DWT model and the UART's bus read from (refused)
RUNS = [
    ("mps2-an386", "bench-table", {}),
    ("mps2-an386", "dwt", {}),
    ("mps2-an386", "uart-hello", {}),
    ("mps2-an386", "coremark-like", {}),
    ("mps2-an500", "bench-table", {}),
    ("mps2-an500", "coremark-like", {}),
    ("mcu-d", "bench-table", {"power_trace": True}),
    ("mcu-d", "printf-uart", {}),
    ("mcu-b", "bench-table", {"power_trace": True}),
    ("mcu-m", "cached-ram", {}),
    ("mcu-s", "bench", {}),
]


def _simulator(elf, board, hold, **options):
    sim = Simulator(elf, board, **options)
    sim.machine.state[N.HOLD_REPEATS] = int(hold)
    return sim


def _reported(result):
    data = result.to_dict()
    for field in HOST_FIELDS:
        data.pop(field)
    trace = None
    if result.power_trace is not None:
        times, rails = result.power_trace
        trace = (list(times), {rail: list(watts) for rail, watts in rails.items()})
    return data, result.stdout, trace


@pytest.mark.parametrize("board,program,options", RUNS, ids=[f"{b}-{p}" for b, p, _ in RUNS])
def test_held_repeats_change_nothing_a_run_reports(firmware_build, board, program, options):
    elf = firmware_build / board / f"{program}.elf"
    held = _simulator(elf, board, True, **options)
    counted = _simulator(elf, board, False, **options)
    assert _reported(held.run()) == _reported(counted.run())
    assert held.machine.state[N.HELD_TOTAL] > 0, "the program's loops should have been held"
    assert counted.machine.state[N.HELD_TOTAL] == 0


def test_a_one_block_loop_is_held_almost_whole(firmware_build):
    """bench-table's loop is one block run a million times: all but its first repeats held."""
    sim = _simulator(firmware_build / "mps2-an386" / "bench-table.elf", "mps2-an386", True)
    sim.run()
    assert sim.machine.state[N.HELD_TOTAL] >= 999_000


def test_unicorn_calls_the_front_and_the_front_the_run_s_hook(firmware_build):
    """The block hook registered behind its front (native/held_front.py), which jumps to the
    variant the run uses, also after the state's buffer moved (its hooks registered again)."""
    sim = _simulator(firmware_build / "mps2-an500" / "bench-table.elf", "mps2-an500", True)
    machine = sim.machine
    variant = N.block_hook_for(machine.hook_features, bool(machine.state[N.PREDICTOR_SETS] > 0))
    assert machine.state[N.HOOK_TARGET] == variant.address != HELD_FRONT.address
    machine.state[N.HOOK_TARGET] = 0  # (as a buffer new but for the hooks' registration)
    machine._reregister_hook(machine.state.buffer)
    assert machine.state[N.HOOK_TARGET] == variant.address
    assert sim.run().exit_code == 0 and machine.state[N.HELD_TOTAL] >= 999_000


def test_without_the_front_the_hook_runs_alone_and_holds_nothing(firmware_build, monkeypatch):
    """Where the front cannot be had (llvmlite or the store amiss), the block hook is registered
    alone, with holds off (its first path counts every repeat): the same results."""
    from mcusim.machine.native import held_front, hooks

    def broken():
        raise RuntimeError("no code generator")

    monkeypatch.setattr(held_front, "_compile", broken)
    monkeypatch.setattr(held_front.STORE, "function_address", lambda key: None)
    monkeypatch.setattr(hooks, "HELD_FRONT", held_front._Front())
    elf = firmware_build / "mcu-d" / "bench-table.elf"
    alone = Simulator(elf, "mcu-d", power_trace=True)
    assert hooks.HELD_FRONT.address is None and alone.machine.state[N.HOLD_REPEATS] == 0
    reported = _reported(alone.run())
    monkeypatch.undo()
    assert reported == _reported(_simulator(elf, "mcu-d", True, power_trace=True).run())
    assert alone.machine.state[N.HELD_TOTAL] == 0


def test_a_loop_whose_holds_end_soon_is_held_no_more(firmware_build):
    """coremark-like's loops of a few runs would each cost a hold that saves less than it costs:
    the block whose hold ended with few repeats held is marked, and the holds that remain pay."""
    sim = _simulator(firmware_build / "mps2-an386" / "coremark-like.elf", "mps2-an386", True)
    sim.run()
    holds, held = sim.machine.state[N.HOLDS], sim.machine.state[N.HELD_TOTAL]
    assert holds > 0 and held / holds >= 2 * N.HOLD_AFTER


def test_pausing_inside_held_loops_changes_nothing(firmware_build):
    elf = firmware_build / "mcu-d" / "bench-table.elf"
    straight = _simulator(elf, "mcu-d", True).run()
    sim = _simulator(elf, "mcu-d", True)
    while sim.step(4_999).reason == "step":
        pass
    result = sim.run()
    assert _reported(result) == _reported(straight)
    assert sim.machine.state[N.HELD_TOTAL] > 100_000  # (held between the pauses too)


STORE_R0_AND_EXIT = """
    ldr r2, =0x20000000      @ r0 kept in RAM for the test
    str r0, [r2]
    movs r0, #0x18           @ SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    b .
    .ltorg
"""

SPIN = RESET + """
    ldr r1, ={count}
    movs r0, #0
spin:
    adds r0, #3
    subs r1, #1
    bne spin
""" + STORE_R0_AND_EXIT


CYCLE_READS = RESET + """
    ldr r5, =0xE0001004      @ DWT CYCCNT, served by the Python model
    ldr r6, =0xE0001000      @ DWT CTRL: CYCCNTENA
    movs r1, #1
    str r1, [r6]
    movs r1, #200
    movs r0, #0
    b reads
reads:
    ldr r2, [r5]
    add r0, r0, r2
    subs r1, #1
    bne reads
""" + STORE_R0_AND_EXIT


NESTED = RESET + """
    ldr r3, ={rounds}
    movs r0, #0
outer:
    movs r1, #{inner}
inner:
    adds r0, #3
    subs r1, #1
    bne inner
    subs r3, #1
    bne outer
""" + STORE_R0_AND_EXIT

VECTORS_TO_TICK = "    .word reset\n    .rept 14\n    .word tick\n    .endr\n"  # (SysTick's is the 16th word)
TICKING = RESET.replace("    .word reset\n", VECTORS_TO_TICK) + """
    ldr r2, =0xE000E014      @ SYST_RVR (ARMv7-M ARM B3.3.3): a SysTick interrupt every {reload} + 1 cycles
    ldr r1, ={reload}
    str r1, [r2]
    ldr r2, =0xE000E010      @ SYST_CSR: ENABLE | TICKINT | CLKSOURCE
    movs r1, #7
    str r1, [r2]
""" + NESTED.split(RESET, 1)[1] + """
    .thumb_func
tick:
    bx lr
"""


def _held_runs(elf, board, **options):
    """The repeats a run of `elf` held; a run counting every repeat reports the same."""
    sim = _simulator(elf, board, True, **options)
    reported = _reported(sim.run())
    assert reported == _reported(_simulator(elf, board, False, **options).run())
    assert reported[0]["exit"]["code"] == 0
    return sim.machine.state[N.HELD_TOTAL]


def test_a_vendor_board_s_short_loops_are_held_between_windows(tmp_path):
    """A sampled timing window's end stops the run inside a loop of 24 repeats, whose count then
    begins again: its first hold ends soon, and marks it short. A loop of it counted to
    SHORT_RETRY repeats shows it long, and it is held for the rest of the run (all runs between
    windows, a power trace's snapshots ending holds)."""
    elf = build_elf(tmp_path, "nested", NESTED.format(stack=0x20001000, rounds=20_000, inner=24), text_address=0)
    assert _held_runs(elf, "mcu-s", power_trace=True) >= 20_000 * 24 // 2


def test_a_loop_stopped_near_its_end_is_held_again(tmp_path):
    """SysTick interrupts stop the run inside loops (every 998 cycles): the same on a board
    without windows."""
    source = TICKING.format(stack=0x20001000, rounds=5_000, inner=24, reload=997)
    elf = build_elf(tmp_path, "ticking", source, text_address=0)
    assert _held_runs(elf, "mps2-an386") >= 5_000 * 24 // 2


def test_a_loop_reading_the_cycle_counter_reads_what_counting_gives(tmp_path):
    """The bus releases held repeats before the DWT model reads the time, and refuses the block
    (it is not held again): the 200 CYCCNT values the loop sums are those of a run that counts
    every repeat."""
    elf = build_elf(tmp_path, "cycle_reads", CYCLE_READS.format(stack=0x20001000), text_address=0)
    sums = []
    for hold in (True, False):
        sim = _simulator(elf, "mps2-an386", hold)
        assert sim.run().exit_code == 0
        sums.append(int.from_bytes(sim.machine.read_memory(0x20000000, 4), "little"))
        assert (sim.machine.state[N.HELD_REFUSED] != 0) == hold
    assert sums[0] == sums[1] != 0


def test_a_cycle_limit_inside_a_held_loop_stops_where_counting_does(tmp_path):
    elf = build_elf(tmp_path, "spin", SPIN.format(stack=0x20001000, count=1_000_000), text_address=0)
    results = []
    for hold in (True, False):
        sim = _simulator(elf, "mps2-an386", hold, max_cycles=1_234_567)
        results.append(_reported(sim.run()))
    assert results[0] == results[1]
    assert results[0][0]["exit"]["reason"] == "max-cycles"


def test_a_stop_asked_from_another_thread_ends_a_held_loop(tmp_path):
    """The ticker thread's and a signal's stop (request_stop) reach a loop whose repeats are held:
    a loop of billions of cycles ends at the time limit, and at an interrupt from another thread."""
    elf = build_elf(tmp_path, "spin", SPIN.format(stack=0x20001000, count=0xFFFFFFFF), text_address=0)
    result = _simulator(elf, "mps2-an386", True, max_seconds=0.3).run()
    assert result.exit_reason == "time-limit"
    sim = _simulator(elf, "mps2-an386", True)
    threading.Timer(0.3, sim.interrupt).start()
    result = sim.run()
    assert result.exit_reason == "interrupted"
    assert sim.machine.state[N.HELD_TOTAL] > 1000
