"""trace.swo of real firmware, read back with pyOCD's SWO parser (pyocd.trace.swo.SWOParser,
the one `pyocd` runs on a probe's SWO data): what it decodes must be what mcusim captured.

pyOCD is a test dependency (pyproject `test` extra): without it this module fails, it is
never skipped.
"""
from pyocd.trace import events
from pyocd.trace.sink import TraceEventSink
from pyocd.trace.swo import SWOParser

from mcusim.analysis import swo
from mcusim.analysis.sampling import EXCEPTION_PC, SLEEP_PC
from mcusim.api import Simulator


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
    assert {str(port): data.decode(errors="replace") for port, data in by_port.items()} == result.itm
    assert {event.width for event in itm} == {4}

    samples = of_type(decoded, events.TracePeriodicPC)
    assert [s.pc for s in samples] == expected_pcs(result.pc_sample_pcs)
    assert len(samples) == len(result.pc_sample_functions) > 400


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
