"""trace.swo of real firmware, read back with pyOCD's SWO parser (pyocd.trace.swo.SWOParser,
the one `pyocd` runs on a probe's SWO data): what it decodes must be what mcusim captured.

pyOCD is a test dependency (pyproject `test` extra): without it this module fails, it is
never skipped.
"""
import base64
from itertools import pairwise

import pytest
from asmbuild import build_elf
from pyocd.trace import events
from pyocd.trace.sink import TraceEventSink
from pyocd.trace.swo import SWOParser

from mcusim.analysis import swo
from mcusim.analysis.sampling import EXCEPTION_PC, SLEEP_PC
from mcusim.api import Simulator
from mcusim.peripherals.core.dwt import CYCCNT, EVENT_FLAGS


class _Core:
    """The parser asks its core only for exception names."""

    def exception_number_to_name(self, number):
        return f"exception {number}"


class _Events(TraceEventSink):
    def __init__(self):
        self.received = []

    def receive(self, event):
        self.received.append(event)


def decode(stream: bytes) -> list:
    sink = _Events()
    parser = SWOParser(_Core(), sink)
    parser.parse(stream)
    assert parser.bytes_parsed == len(stream)
    return sink.received


def of_type(decoded, kind):
    return [event for event in decoded if isinstance(event, kind)]


def expected_pcs(pcs):
    """Run PCs as the stream carries them: the sleep packet decodes as PC 0."""
    return [0 if pc == SLEEP_PC else 0xFFFFFFFF if pc == EXCEPTION_PC else pc for pc in pcs.tolist()]


def test_exceptions_and_pc_samples_decode_with_their_cycles(firmware_build, tmp_path):
    """A sampling period under 128 cycles keeps every local timestamp to one payload byte, so
    pyOCD's running timestamp is the event's cycle (pyOCD 0.46 reads multi-byte ones most
    significant byte first, against D4.2.4)."""
    sim = Simulator(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", pc_sample_cycles=100, swo=True)
    result = sim.run()
    assert result.exit_code == 0
    result.write_bundle(tmp_path)
    stream = (tmp_path / "trace.swo").read_bytes()
    assert stream == result.swo and stream.startswith(swo.sync())
    decoded = decode(stream)
    assert not of_type(decoded, events.TraceOverflow)

    samples = of_type(decoded, events.TracePeriodicPC)
    assert len(samples) == len(result.pc_sample_pcs) > 2000
    assert [s.pc for s in samples] == expected_pcs(result.pc_sample_pcs)
    assert [s.timestamp for s in samples] == result.pc_sample_cycles_at.tolist()
    assert 0xFFFFFFFF in [s.pc for s in samples]  # time in exception entry and return

    trace = of_type(decoded, events.TraceExceptionEvent)
    captured = list(sim.machine.swo.exception_events())
    assert [(e.timestamp, e.exception_number, e.action) for e in trace] == captured
    entered = [e.exception_number for e in trace if e.action == events.TraceExceptionEvent.ENTERED]
    assert len(entered) == result.exceptions_taken == 10
    # SysTick, SVCall, PendSV, IRQ0 nested in PendSV, the recovered HardFault (programs/exceptions)
    assert set(entered) == {15, 11, 14, 16, 3}
    active = []  # enter / exit / return nest like the handlers did
    for e in trace:
        if e.action == events.TraceExceptionEvent.ENTERED:
            active.append(e.exception_number)
        elif e.action == events.TraceExceptionEvent.EXITED:
            assert active.pop() == e.exception_number
        else:
            assert e.exception_number == (active[-1] if active else 0)
    assert active == []


def test_itm_markers_and_samples_of_a_model(firmware_build):
    sim = Simulator(firmware_build / "mcu-m" / "odd_shapes-opt.elf", "mcu-m", pc_sample_cycles=1000, swo=True)
    result = sim.run()
    assert result.exit_code == 0
    decoded = decode(result.swo)

    itm = of_type(decoded, events.TraceITMEvent)
    by_port: dict[int, bytearray] = {}
    for event in itm:
        by_port.setdefault(event.port, bytearray()).extend(event.data.to_bytes(event.width, "little"))
    raw = {port: bytes(data) for port, data in sim.machine.outputs.itm.items()}
    assert set(raw) == {30, 31}  # region markers: one 32-bit word per begin and end
    assert {port: bytes(data) for port, data in by_port.items()} == raw
    kept = {port: base64.b64decode(record["data"]) if record["encoding"] == "base64" else record["data"].encode()
            for port, record in result.itm.items()}
    assert kept == {str(port): bytes(data) for port, data in by_port.items()}  # run.json keeps them losslessly
    assert {event.width for event in itm} == {4}

    samples = of_type(decoded, events.TracePeriodicPC)
    assert [s.pc for s in samples] == expected_pcs(result.pc_sample_pcs)
    assert len(samples) == len(result.pc_sample_functions) > 150  # one per 1,000 of its ~240,000 cycles


def test_a_full_capture_ends_in_an_overflow_packet(firmware_build):
    sim = Simulator(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", swo=True)
    sim.machine.swo.capacity = 5
    result = sim.run()
    decoded = decode(result.swo)
    assert len(of_type(decoded, events.TraceExceptionEvent)) == 5
    assert len(of_type(decoded, events.TraceOverflow)) == 1
    assert isinstance(decoded[-1], events.TraceOverflow)  # nothing kept after the first dropped event
    assert not of_type(decoded, events.TracePeriodicPC)  # no --pc-sample-cycles: no samples
    assert any("25 ITM writes and exception events beyond the first 5" in w for w in result.warnings)


def test_sleep_samples_and_small_itm_writes_decode():
    """What the kit's programs do not do (sleep, 1- and 2-byte stimulus writes), as a stream
    built from plain events."""
    stream = swo.encode(itm=[(3, 0, b"o"), (3, 0, b"k"), (9, 7, b"\x34\x12")],
                        exceptions=[(20, 16, swo.ENTER), (30, 16, swo.EXIT), (40, 0, swo.RETURN)],
                        pc_samples=[(10, 0x08000100), (20, None), (50, None)])
    decoded = decode(stream)
    assert [(e.timestamp, e.port, e.data, e.width) for e in of_type(decoded, events.TraceITMEvent)] == [
        (3, 0, ord("o"), 1), (3, 0, ord("k"), 1), (9, 7, 0x1234, 2)]
    assert [(e.timestamp, e.pc) for e in of_type(decoded, events.TracePeriodicPC)] == [
        (10, 0x08000100), (20, 0), (50, 0)]
    assert [(e.timestamp, e.exception_number, e.action) for e in of_type(decoded, events.TraceExceptionEvent)] == [
        (20, 16, 1), (30, 16, 2), (40, 0, 3)]


# A program that turns every DWT event counter packet on (ARMv7-M ARM C1.8.7 DWT_CTRL:
# CYCCNTENA, POSTPRESET = 3, CPI/EXC/SLEEP/LSU/FOLD/CYCEVTENA), runs a loop of loads and taken
# branches (LSUCNT, CPICNT), then sleeps through SysTick interrupts (SLEEPCNT, EXCCNT).
EVENTS_CTRL = 1 | 3 << 1 | 0b111111 << 17
EVENTS_SOURCE = """
    .syntax unified
    .cpu cortex-m4
    .thumb
    .text
    .word 0x20001000
    .word reset
    .rept 13
    .word fault
    .endr
    .word systick
    .global reset
    .thumb_func
    .type reset, %function
reset:
    ldr r0, =0xE000EDFC      @ DEMCR.TRCENA
    mov r1, #0x01000000
    str r1, [r0]
    ldr r0, =0xE0001000      @ DWT_CTRL
    ldr r1, ={ctrl}
    str r1, [r0]
    ldr r2, =0x20000100
    ldr r3, ={iterations}
1:  ldr r4, [r2]
    ldrb r5, [r2, #4]        @ a byte load: the ADD waits for it on the Cortex-M7 too (CPICNT)
    add r4, r5
    subs r3, #1
    bne 1b
    ldr r0, =0xE000E010      @ SysTick: reload, current, then CLKSOURCE | TICKINT | ENABLE
    ldr r1, ={reload}
    str r1, [r0, #4]
    movs r1, #0
    str r1, [r0, #8]
    movs r6, #0
    movs r1, #7
    str r1, [r0]
2:  wfi
    cmp r6, #{ticks}
    blt 2b
    movs r1, #0
    str r1, [r0]
    movs r0, #0x18           @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    .thumb_func
    .type systick, %function
systick:
    adds r6, #1
    bx lr
    .thumb_func
    .type fault, %function
fault:
    b .
    .ltorg
"""


def counter_program(tmp_path) -> str:
    return str(build_elf(tmp_path, "events", EVENTS_SOURCE.format(ctrl=EVENTS_CTRL, iterations=3000, reload=999,
                                                                  ticks=40)))


@pytest.mark.parametrize("board", ["mcu-m", "mcu-d"])
def test_event_counter_packets_count_every_wrap(tmp_path, board):
    """One packet bit per wrap of each counter since the program enabled it (its total then is
    the counter's anchor: the counters start at 0), and per POSTCNT reload: the first at the first
    transition of CYCCNT bit 6 (POSTINIT 0), then every (POSTPRESET + 1) x 64 cycles."""
    sim = Simulator(counter_program(tmp_path), board, swo=True)
    result = sim.run()
    assert result.exit_code == 0
    machine = sim.machine
    decoded = decode(result.swo)
    packets = of_type(decoded, events.TraceEventCounter)
    assert not of_type(decoded, events.TraceOverflow)

    dwt = machine.dwt
    wraps = {}
    for register, flag in EVENT_FLAGS.items():
        running, start_value, anchor = dwt.counters[register]
        assert running and start_value == 0
        wraps[flag] = (machine.counter_total(register) - anchor) // 256
    enabled_at = dwt.counters[CYCCNT][2]
    first, period = enabled_at + 64, 4 * 64
    wraps[swo.CYC] = (result.cycles - first) // period + 1
    found = {flag: sum(1 for p in packets if p.counter_mask & flag) for flag in wraps}
    assert found == wraps
    assert all(wraps[flag] > 2 for flag in (swo.CPI, swo.EXC, swo.SLEEP, swo.CYC))
    # the loop's second load: pipelined on the M4 (an LSUCNT cycle), dual-issued on the M7 (FOLDCNT)
    assert wraps[swo.LSU if board == "mcu-m" else swo.FOLD] > 10

    captured, lost = machine.swo.counters.events()
    captured = list(captured)
    assert lost is None
    assert [p.counter_mask for p in packets] == [flags for _, flags in swo.counter_packets(captured)]
    cycles = [cycle for cycle, _ in captured]
    assert cycles == sorted(cycles) and enabled_at < cycles[0] and cycles[-1] <= result.cycles
    assert [c for c, f in captured if f == swo.CYC] == [first + k * period for k in range(wraps[swo.CYC])]
    # SLEEPCNT wraps every 256 cycles of sleep: within the sleep, evenly spaced
    sleep = [c for c, f in captured if f == swo.SLEEP]
    assert sum(1 for a, b in pairwise(sleep) if b - a == 256) > len(sleep) // 2


def test_event_counter_packets_decode():
    stream = swo.encode(counters=[(4, swo.CPI), (4, swo.CPI), (4, swo.LSU), (9, swo.CYC | swo.FOLD),
                                  (12, swo.EXC), (12, swo.SLEEP)])
    decoded = of_type(decode(stream), events.TraceEventCounter)
    assert [(e.timestamp, e.counter_mask) for e in decoded] == [
        (4, swo.CPI | swo.LSU), (4, swo.CPI), (9, swo.CYC | swo.FOLD), (12, swo.EXC | swo.SLEEP)]
