"""SWO packets byte for byte, each expected value worked out by hand from the ARMv7-M ARM
(DDI 0403E) Appendix D4 formats, and the stream built from a run's events."""
import numpy as np
import pytest
from elfgen import program

import mcusim
from mcusim.analysis import swo
from mcusim.analysis.sampling import EXCEPTION_PC, SLEEP_PC
from mcusim.machine import native as N

SYNC = bytes.fromhex("000000000080")  # D4.2.1: 47 zero bits, then a one bit


def test_synchronization_and_overflow_packets():
    assert swo.sync() == SYNC
    assert swo.overflow() == b"\x70"  # D4.2.3


@pytest.mark.parametrize("port, payload, expected", [
    (0, b"A", "01 41"),                  # A=0 (bits 7:3), bit 2 = 0, SS=01
    (5, b"\x00", "29 00"),               # 00101 0 01
    (1, b"\x34\x12", "0a 34 12"),        # 00001 0 10, halfword little-endian as written
    (17, b"\xff\xee", "8a ff ee"),       # 10001 0 10
    (31, bytes.fromhex("efbeadde"), "fb ef be ad de"),  # 11111 0 11
    (30, bytes.fromhex("24010008"), "f3 24 01 00 08"),  # 11110 0 11: a region-begin word
])
def test_instrumentation_packets(port, payload, expected):
    assert swo.instrumentation(port, payload) == bytes.fromhex(expected)


def test_instrumentation_rejects_what_the_itm_cannot_send():
    with pytest.raises(ValueError):
        swo.instrumentation(32, b"x")
    with pytest.raises(KeyError):
        swo.instrumentation(0, b"abc")  # no 3-byte size encoding


@pytest.mark.parametrize("pc, expected", [
    (0x08000124, "17 24 01 00 08"),   # ID 2 = 00010, bit 2 = 1, SS=11, PC little-endian
    (0x20001F3C, "17 3c 1f 00 20"),
    (0xFFFFFFFF, "17 ff ff ff ff"),
    (None, "15 00"),                  # asleep: SS=01 and a 0x00 payload
])
def test_periodic_pc_sample_packets(pc, expected):
    assert swo.pc_sample(pc) == bytes.fromhex(expected)


@pytest.mark.parametrize("number, function, expected", [
    (15, swo.ENTER, "0e 0f 10"),     # ID 1 = 00001, bit 2 = 1, SS=10; SysTick, FN=01 in bits 13:12
    (16, swo.EXIT, "0e 10 20"),      # IRQ0 exited, FN=10
    (0, swo.RETURN, "0e 00 30"),     # returned to Thread mode, FN=11
    (11, swo.RETURN, "0e 0b 30"),    # returned to SVCall
    (3, swo.ENTER, "0e 03 10"),      # HardFault
    (256, swo.ENTER, "0e 00 11"),    # IRQ240: exception number bit 8 in payload bit 8
])
def test_exception_trace_packets(number, function, expected):
    assert swo.exception_trace(number, function) == bytes.fromhex(expected)


@pytest.mark.parametrize("delta, expected", [
    (1, "10"),                        # format 2: 0 TTT 0000
    (5, "50"),
    (6, "60"),
    (0, "c0 00"),                     # format 1 (0 has no format 2 encoding: 0x00 is sync)
    (7, "c0 07"),                     # 7 has none either (0x70 is overflow)
    (127, "c0 7f"),
    (128, "c0 80 01"),                # 7 bits a byte, least significant first, C=1 but on the last
    (201, "c0 c9 01"),
    (1000, "c0 e8 07"),               # 1000 = 7 * 128 + 104
    (16383, "c0 ff 7f"),
    (16384, "c0 80 80 01"),
    (1 << 21, "c0 80 80 80 01"),
    (1 << 24, "c0 80 80 80 08"),
    (swo.LTS_MAX, "c0 ff ff ff 7f"),  # 28 bits, the most four payload bytes hold
])
def test_local_timestamp_packets(delta, expected):
    assert swo.local_timestamp(delta) == bytes.fromhex(expected)


def test_local_timestamp_data_relation_and_range():
    assert swo.local_timestamp(3, relation=0b01) == bytes.fromhex("d0 03")  # TC=01: timestamp delayed
    with pytest.raises(ValueError):
        swo.local_timestamp(swo.LTS_MAX + 1)


def test_stream_orders_events_and_stamps_each_cycle_once():
    stream = swo.encode(itm=[(5, 0, b"h"), (5, 0, b"i"), (12, 31, bytes(4))],
                        exceptions=[(8, 15, swo.ENTER), (10, 15, swo.EXIT), (12, 0, swo.RETURN)],
                        pc_samples=[(8, 0x100), (16, None)])
    assert stream == SYNC + bytes.fromhex(
        "01 68 01 69 50"               # cycle 5: two ITM bytes, then LTS 5
        "0e 0f 10 17 00 01 00 00 30"   # cycle 8: SysTick entered, PC sample, LTS 3
        "0e 0f 20 20"                  # cycle 10: SysTick exited, LTS 2
        "0e 00 30 fb 00 00 00 00 20"   # cycle 12: returned to Thread, ITM word, LTS 2
        "15 00 40")                    # cycle 16: asleep, LTS 4


def test_stream_without_events_is_one_sync():
    assert swo.encode() == SYNC


def test_stream_bridges_long_gaps_and_resynchronizes():
    gap = swo.encode(itm=[(swo.LTS_MAX + 6, 2, b"x")])
    # the sync of cycle 2**24 passed, a full LTS_MAX before the packet, then the 6 left: format 2
    assert gap == SYNC + SYNC + bytes.fromhex("c0 ff ff ff 7f 11 78 60")
    periodic = swo.encode(itm=[(1, 0, b"a"), (swo.SYNC_PERIOD_CYCLES + 1, 0, b"b")])
    assert periodic == SYNC + bytes.fromhex("01 61 10") + SYNC + bytes.fromhex("01 62 c0 80 80 80 08")


def test_overflow_comes_before_the_packets_of_its_cycle():
    stream = swo.encode(itm=[(3, 0, b"a")], pc_samples=[(3, 0x200)], overflows=[3])
    assert stream == SYNC + bytes.fromhex("70 01 61 17 00 02 00 00 30")


def test_events_out_of_cycle_order_are_refused():
    with pytest.raises(ValueError):
        swo.encode(itm=[(9, 0, b"a"), (4, 0, b"b")])


def test_pc_sample_markers_become_sleep_and_no_pc_packets():
    cycles = np.array([10, 20, 30], dtype=np.int64)
    pcs = np.array([0x08000010, SLEEP_PC, EXCEPTION_PC], dtype=np.int64)
    assert list(swo.sample_events(cycles, pcs, chunk=2)) == [(10, 0x08000010), (20, None), (30, 0xFFFFFFFF)]


def test_recorder_keeps_the_first_events_and_counts_the_rest():
    recorder = swo.SwoRecorder(capacity=3)
    recorder.itm(4, 0, b"a")
    recorder.exception(6, 15, swo.ENTER)
    recorder.itm(7, 1, b"\x01\x02")
    recorder.exception(9, 15, swo.EXIT)
    recorder.itm(11, 0, b"b")
    assert list(recorder.itm_events()) == [(4, 0, b"a"), (7, 1, b"\x01\x02")]
    assert list(recorder.exception_events()) == [(6, 15, swo.ENTER)]
    assert (recorder.dropped, recorder.first_dropped_cycle) == (2, 9)


def test_run_captures_only_when_asked(tmp_path):
    path = tmp_path / "exit.elf"
    path.write_bytes(program("exit7"))
    off = mcusim.run(path, "mps2-an386")
    assert off.swo is None
    off.write_bundle(tmp_path / "off")
    assert not (tmp_path / "off" / "trace.swo").exists()
    on = mcusim.run(path, "mps2-an386", swo=True)
    assert on.swo == SYNC  # no ITM writes, exceptions or samples in this program
    on.write_bundle(tmp_path / "on")
    assert (tmp_path / "on" / "trace.swo").read_bytes() == SYNC
    framed = mcusim.run(path, "mps2-an386", swo=True, swo_format="tpiu")
    framed.write_bundle(tmp_path / "framed")
    assert framed.swo == SYNC and framed.capture["swo_format"] == "tpiu"  # (framed as it is written)
    assert _deframe((tmp_path / "framed" / "trace.swo").read_bytes())[swo.ITM_SOURCE_ID].startswith(SYNC)
    with pytest.raises(ValueError, match="swo_format"):
        mcusim.Simulator(path, "mps2-an386", swo=True, swo_format="manchester")


def test_pc_samples_pyocd_misreads_are_warned_about(tmp_path):
    """pyOCD 0.46 reverses multi-byte local timestamps: a raw trace.swo with PC samples 128 or
    more cycles apart says so; one at 100 cycles, or TPIU-framed, does not."""
    path = tmp_path / "exit.elf"
    path.write_bytes(program("exit7"))
    warned = lambda **options: any("pyOCD" in w for w in mcusim.run(path, "mps2-an386", swo=True,  # noqa: E731
                                                                   **options).warnings)
    assert warned(pc_sample_cycles=128)
    assert not warned(pc_sample_cycles=100) and not warned(pc_sample_cycles=1000, swo_format="tpiu")


@pytest.mark.parametrize("flags, expected", [
    (swo.CPI, "05 01"),                  # ID 0 = 00000, bit 2 = 1, SS=01; payload bit 0 CPI
    (swo.EXC, "05 02"),
    (swo.SLEEP, "05 04"),
    (swo.LSU, "05 08"),
    (swo.FOLD, "05 10"),
    (swo.CYC, "05 20"),                  # POSTCNT reloaded
    (swo.CPI | swo.LSU, "05 09"),        # two counters wrapped at once: one packet
    (0x3F, "05 3f"),
])
def test_event_counter_packets(flags, expected):
    assert swo.event_counter(flags) == bytes.fromhex(expected)


def test_event_counter_packets_need_a_counter():
    for flags in (0, 0x40):
        with pytest.raises(ValueError):
            swo.event_counter(flags)


def test_counter_events_of_a_cycle_share_packets():
    wraps = [(3, swo.CPI), (3, swo.CPI), (3, swo.LSU), (3, swo.CPI), (8, swo.FOLD), (9, swo.CYC), (9, swo.EXC)]
    assert list(swo.counter_packets(wraps)) == [(3, swo.CPI | swo.LSU), (3, swo.CPI), (3, swo.CPI), (8, swo.FOLD),
                                                (9, swo.CYC | swo.EXC)]
    assert list(swo.counter_packets([])) == []


def test_stream_puts_counter_packets_in_cycle_order():
    stream = swo.encode(itm=[(5, 0, b"a")], exceptions=[(9, 15, swo.ENTER)],
                        counters=[(5, swo.CPI), (5, swo.CPI), (7, swo.CYC), (9, swo.SLEEP)])
    assert stream == SYNC + bytes.fromhex(
        "01 61 05 01 05 01 50"     # cycle 5: the ITM byte, two CPI wraps, LTS 5
        "05 20 20"                 # cycle 7: POSTCNT reloaded, LTS 2
        "0e 0f 10 05 04 20")       # cycle 9: SysTick entered, SLEEPCNT wrapped, LTS 2


def _ceil_at(since, now, before, total, wrap):
    return since + -(-(now - since) * (wrap - before) // (total - before))


def _native_counters(cpi=(0, 0, False), lsu=(0, 0, False), fold=(0, 0, False)):
    return {swo.CPI: cpi, swo.LSU: lsu, swo.FOLD: fold}


def test_native_counter_wraps_are_interpolated_and_bounded():
    """native.counter_events, as the block hook calls it: each wrap at the cycle where the
    counter's total crossed it, linearly between two observations; the first `capacity` kept."""
    state = N.NativeState()
    events = swo.CounterEvents(state, capacity=4)
    assert state[N.COUNTER_EVENTS] == 0  # nothing enabled: the hook does not look
    state[N.CYCLES], state[N.CPI_TOTAL] = 100, 50
    events.configure(_native_counters(cpi=(50, 10, True)), now=100)  # CPICNT 10: wraps at total 296
    assert state[N.COUNTER_EVENTS] == events.table
    state[N.CYCLES], state[N.CPI_TOTAL] = 1100, 550
    events.observe()
    state[N.CYCLES], state[N.CPI_TOTAL] = 1110, 560
    events.observe()
    state[N.CYCLES], state[N.CPI_TOTAL] = 2000, 560 + 5 * 256
    events.observe()
    kept, lost = events.events()
    expected = [_ceil_at(100, 1100, 50, 550, 296), _ceil_at(1100, 1110, 550, 560, 552)] + [
        _ceil_at(1110, 2000, 560, 1840, wrap) for wrap in (808, 1064, 1320, 1576, 1832)]
    assert expected[:2] == [592, 1102]
    assert list(kept) == [(cycle, swo.CPI) for cycle in expected[:4]]
    assert lost == expected[4]  # the first one the table had no room for
    assert state[events.table + N.EV_DROPPED] == 3


def test_native_counter_events_follow_the_firmware():
    state = N.NativeState()
    events = swo.CounterEvents(state)
    state[N.CYCLES], state[N.LSU_TOTAL], state[N.FOLD_TOTAL] = 10, 0, 0
    events.configure(_native_counters(lsu=(0, 0, True), fold=(0, 250, True)), now=10)  # FOLDCNT wraps in 6
    state[N.CYCLES], state[N.LSU_TOTAL], state[N.FOLD_TOTAL] = 20, 300, 6
    # an MMIO write in the block that ran: LSU still counting (its next wrap stays), FOLD's event
    # off after its wrap (kept, at the write)
    events.configure(_native_counters(lsu=(280, 24, True), fold=(6, 0, False)), now=15)
    state[N.CYCLES] = 30
    events.observe()
    assert list(events.events()[0]) == [(15, swo.FOLD), (_ceil_at(10, 30, 0, 300, 256), swo.LSU)]
    events.configure(_native_counters(lsu=(300, 44, False)), now=30)
    assert state[N.COUNTER_EVENTS] == 0  # all off: the hook stops looking


def test_counter_event_runs_merge_with_the_native_wraps():
    state = N.NativeState()
    events = swo.CounterEvents(state, capacity=5)
    events.run(swo.CYC, 64, 256, 3)      # 64, 320, 576
    events.run(swo.SLEEP, 300, 256, 2)   # 300, 556
    events.run(swo.EXC, 400, 256, 0)     # nothing
    kept, lost = events.events()
    assert list(kept) == [(64, swo.CYC), (300, swo.SLEEP), (320, swo.CYC), (556, swo.SLEEP), (576, swo.CYC)]
    assert lost is None
    events.run(swo.EXC, 600, 256, 1)
    kept, lost = events.events()
    assert len(list(kept)) == 5 and lost == 600


def _deframe(data: bytes) -> dict[int, bytes]:
    """A TPIU formatter decoder written from the CoreSight Architecture Specification's frame
    layout: sync-aligned 16-byte frames; per even byte an ID change (bit 0 set; aux bit 1 = the
    next byte still belongs to the old ID) or data (bit 0 from byte 15); odd bytes data."""
    out: dict[int, bytearray] = {}
    assert data[:4] == swo.FRAME_SYNC
    at, current = 4, None
    while at < len(data):
        if data[at:at + 4] == swo.FRAME_SYNC:
            at += 4
            continue
        frame = data[at:at + 16]
        assert len(frame) == 16, "a partial frame"
        aux = frame[15]
        for pair in range(8):
            even = frame[2 * pair]
            delayed = None
            if even & 1:
                new = even >> 1
                if (aux >> pair) & 1:
                    delayed = new
                else:
                    current = new
            else:
                out.setdefault(current, bytearray()).append(even | ((aux >> pair) & 1))
            if pair < 7:
                out.setdefault(current, bytearray()).append(frame[2 * pair + 1])
            if delayed is not None:
                current = delayed
        at += 16
    return {source: bytes(value) for source, value in out.items()}


@pytest.mark.parametrize("length", [0, 1, 2, 13, 14, 15, 27, 28, 29, 64 * 14 + 3, 5000])
def test_tpiu_frames_unframe_to_the_stream(length):
    """Every length (a whole last frame, an odd or even remainder, beyond the periodic syncs):
    the ITM source's bytes are the stream, then at most an ITM synchronization packet; what
    pads the last frame belongs to the null source 0."""
    stream = bytes((7 * i + 3) & 0xFF for i in range(length))
    framed = swo.tpiu_frames(stream)
    assert (len(framed) - 4 * (1 + max(0, (len(framed) // 16 - 1) // 64))) % 16 == 0
    sources = _deframe(framed)
    itm = sources.get(swo.ITM_SOURCE_ID, b"")
    assert itm[:length] == stream and itm[length:] in (b"", swo.sync(), b"\x00" + swo.sync())
    assert set(sources) <= {swo.ITM_SOURCE_ID, 0} and not any(sources.get(0, b""))
    assert framed.count(swo.FRAME_SYNC) >= 1 + (len(stream) // 14) // 64


def test_tpiu_source_id_is_checked():
    with pytest.raises(ValueError, match="source ID"):
        swo.tpiu_frames(b"x", source_id=0x70)
