"""signals.vcd end to end: a pin toggled by a tiny hand-assembled program on each vendor's
board, and the regions of a TinyML model, read back from the VCD."""
import json

import pytest

import mcusim
from asmbuild import RESET, build_elf
from mcusim.analysis.regions import matched
from mcusim.analysis.vcd import ticks
from mcusim.machine import results
from vcdread import edges, read_vcd

TOGGLES = 6
DELAY = 40  # delay loop iterations between toggles

# Per board: where the program is linked, the stack, where it leaves its result, and the
# instructions that make the pin an output (r0 = its port's base), the output register and
# the pin's bit in it.
PROGRAMS = {
    # Nucleo-64 LD2 = PA5: GPIOA MODER (0x48000000 + 0x00) field 5 = 01, ODR at 0x14 (RM0351 8.5)
    "mcu-m": dict(label="LD2", flash=0x08000000, ram=0x20000000, out=0x14, mask=1 << 5, setup="""
    ldr r0, =0x48000000
    ldr r1, [r0]
    bic r1, r1, #(3 << 10)
    orr r1, r1, #(1 << 10)
    str r1, [r0]"""),
    # Nucleo-144 LD1 = PB0: GPIOB at 0x40020400, MODER field 0 = 01, ODR at 0x14 (RM0385 6.4)
    "mcu-d": dict(label="LD1", flash=0x08000000, ram=0x20000000, out=0x14, mask=1 << 0, setup="""
    ldr r0, =0x40020400
    ldr r1, [r0]
    bic r1, r1, #3
    orr r1, r1, #1
    str r1, [r0]"""),
    # Nano 33 BLE LED_BUILTIN = P0.13: P0 DIRSET (0x50000000 + 0x518), OUT at 0x504 (PS 6.8.2)
    "mcu-s": dict(label="LED_BUILTIN", flash=0x00000000, ram=0x20000000, out=0x504, mask=1 << 13, setup="""
    ldr r0, =0x50000000
    mov r1, #(1 << 13)
    str r1, [r0, #0x518]"""),
    # SparkFun Edge LED_RED = pad 46: PADKEY 0x60 = 0x73, CFGF (0x54) OUTCFG of pad 46 (bits 26:25)
    # = push-pull, WTB (0x8C) bit 14
    "mcu-b": dict(label="LED_RED", flash=0x00000000, ram=0x10000000, out=0x8C, mask=1 << 14, setup="""
    ldr r0, =0x40010000
    movs r1, #0x73
    str r1, [r0, #0x60]
    mov r1, #(1 << 25)
    str r1, [r0, #0x54]"""),
}

SOURCE = RESET + """
    ldr r2, =0xE0001000      @ DWT_CTRL.CYCCNTENA
    movs r1, #1
    str r1, [r2]
    ldr r8, =0xE0001004      @ DWT_CYCCNT
    movs r5, #0
{setup}
    movs r4, #{toggles}
loop:
    ldr r1, [r0, #{out}]
    eor r1, r1, #{mask}
    mov r6, r5
    ldr r5, [r8]             @ CYCCNT right before the store that toggles the pin
    str r1, [r0, #{out}]
    ldr r3, ={delay}
delay:
    subs r3, #1
    bne delay
    subs r4, #1
    bne loop
    subs r5, r5, r6          @ cycles between the last two toggles
    ldr r2, ={ram}
    str r5, [r2]
    movs r0, #0x18           @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    b .
    .ltorg
"""


def assemble(tmp_path, board) -> tuple:
    program = PROGRAMS[board]
    source = SOURCE.format(stack=program["ram"] + 0x1000, toggles=TOGGLES, delay=DELAY, **program)
    return build_elf(tmp_path, board, source, program["flash"]), program


@pytest.mark.parametrize("board", sorted(PROGRAMS))
def test_toggled_pin_shows_every_edge_at_its_simulated_time(tmp_path, board):
    elf, program = assemble(tmp_path, board)
    sim = mcusim.Simulator(elf, board, vcd=True)
    result = sim.run()
    assert result.exit_code == 0, result.exit_detail
    machine = sim.machine
    assert machine.clock_changes == []  # the reset clock throughout: seconds = cycles / clock
    result.write_bundle(tmp_path / "bundle")
    assert "signals.vcd" in json.loads((tmp_path / "bundle" / "run.json").read_text())["artifacts"]
    _, changes = read_vcd(tmp_path / "bundle" / "signals.vcd")

    wire = changes[f"mcusim.gpio.{program['label']}"]  # named as the board labels the pin
    assert wire[:2] == [(0, "z"), (wire[1][0], "0")]  # undriven until made an output, driven low
    toggled = edges(wire)
    assert [level for _, level in toggled] == ["1", "0"] * (TOGGLES // 2)

    # every change at the cycle the machine recorded it, converted with the clock
    pin = machine.board.pins[program["label"]]
    recorded = [cycle for cycle, _, name, _ in machine.pin_events if name == pin]
    assert len(recorded) == TOGGLES + 1
    assert [time for time, _ in wire[1:]] == [ticks(cycle / machine.clock_hz) for cycle in recorded]

    # the edges come once per loop turn: the same period each (warm) turn, which is what DWT
    # CYCCNT measured between the last two toggles
    periods = [b - a for a, b in zip(recorded[1:], recorded[2:])]
    assert len(set(periods[1:])) == 1, periods
    measured = int.from_bytes(machine.read_memory(program["ram"], 4), "little")
    assert periods[-1] == measured
    assert DELAY <= measured <= 12 * DELAY  # at best a turn of the delay loop a cycle (M7 dual issue)
    last, before = toggled[-1][0], toggled[-2][0]
    assert abs((last - before) - measured / machine.clock_hz * 1e9) <= 1


@pytest.mark.slow
def test_regions_are_wires_with_the_begin_and_end_times_of_each_run(firmware_build, tmp_path):
    sim = mcusim.Simulator(firmware_build / "mcu-m" / "kws_dscnn-opt.elf", "mcu-m", vcd=True)
    result = sim.run()
    assert result.exit_code == 0 and result.regions
    result.write_bundle(tmp_path)
    _, changes = read_vcd(tmp_path / "signals.vcd")
    machine = sim.machine
    assert machine.clock_changes  # the firmware sets up the PLL: times span a clock change

    expected: dict[str, list[list[int]]] = {}
    for name, _, _, start, end in sorted(matched(machine.regions, results.c_strings(machine)), key=lambda r: r[3]):
        spans = expected.setdefault(name, [])
        if spans and ticks(start) <= spans[-1][1]:  # a nested or back-to-back run of the same name
            spans[-1][1] = max(spans[-1][1], ticks(end))
        else:
            spans.append([ticks(start), ticks(end)])
    assert {row["name"] for row in result.regions} == set(expected)
    for name, spans in expected.items():
        wire = changes[f"mcusim.regions.{name}"]
        toggled = edges(wire)
        assert [time for time, _ in toggled] == [t for span in spans for t in span], name
    current = {value for _, value in changes["mcusim.regions.current"]}
    assert current <= set(expected) | {"-"} and len(current) > 1
