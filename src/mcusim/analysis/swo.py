"""The SWO byte stream a trace probe would capture: ITM and DWT packets (ARMv7-M Architecture
Reference Manual, DDI 0403E, Appendix D4 "Debug ITM and DWT Packet Protocol") built from a
run's ITM stimulus writes, exception events, PC samples and DWT counter events.

`encode` is a pure function of plain data (cycles, ports, payloads, exception numbers, PCs,
counter flags), so the packet formats are testable without running firmware. `SwoRecorder` is
the bounded capture the machine fills while running, only when the stream was asked for, and
`CounterEvents` its part for the DWT event counter packets.

Timestamps are local timestamp (LTS) packets counting core cycles since the previous LTS
(the ITM timestamp counter with TSPrescale 1); the stream starts at cycle 0 (reset).
"""
from __future__ import annotations

import functools
import heapq
from array import array
from collections.abc import Iterable
from itertools import islice, takewhile

import numpy as np

from ..machine import native as N
from .sampling import EXCEPTION_PC, SLEEP_PC

MAX_EVENTS = 4_000_000  # ITM writes + exception events kept (at most 16 bytes each: 64 MB)
# A synchronization packet before the first event after every 2**24 cycles: the period of
# DWT_CTRL.SYNCTAP = 0b01, a tap at CYCCNT bit 24 (ARMv7-M ARM C1.8, DWT_CTRL).
SYNC_PERIOD_CYCLES = 1 << 24
NO_PC = 0xFFFFFFFF      # a PC sample with no instruction address (see sample_events)
LTS_MAX = (1 << 28) - 1  # D4.2.4: a local timestamp holds at most 28 bits (4 payload bytes of 7)
PYOCD_TIMESTAMP_LIMIT = 128  # cycles: a timestamp this long takes 2+ payload bytes, which pyOCD 0.46 reverses

# Exception trace packet FN field (D4.3.2).
ENTER, EXIT, RETURN = 1, 2, 3
# Hardware source packet discriminator IDs (D4.3).
EVENT_COUNTER_ID, EXCEPTION_TRACE_ID, PC_SAMPLE_ID = 0, 1, 2
# Event counter packet payload bits (D4.3.1): the DWT counter that wrapped from 255 to 0, or (CYC)
# the POSTCNT counter that reloaded.
CPI, EXC, SLEEP, LSU, FOLD, CYC = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
COUNTER_FLAGS = (CPI, EXC, SLEEP, LSU, FOLD, CYC)
MAX_COUNTER_EVENTS = 1 << 20  # counter wraps and POSTCNT reloads kept (8 MB table of the native ones)
# Size field SS of source packets (D4.2.8, D4.2.9): payload of 1, 2 or 4 bytes.
_SIZE_BITS = {1: 0b01, 2: 0b10, 4: 0b11}


# -- packets ---------------------------------------------------------------------------------
def sync() -> bytes:
    """D4.2.1 Synchronization packet: at least 47 zero bits then a one bit; as bytes, five
    0x00 then 0x80."""
    return b"\x00\x00\x00\x00\x00\x80"


def overflow() -> bytes:
    """D4.2.3 Overflow packet: the single header byte 0x70 (no payload); says that packets
    were lost before the packet that follows it."""
    return b"\x70"


@functools.lru_cache(maxsize=1024)  # most deltas repeat (the sampling period)
def local_timestamp(delta: int, relation: int = 0) -> bytes:
    """D4.2.4 Local timestamp packets: time since the previous one, output after the packets
    it refers to. Format 2 (one byte 0b0TTT0000) holds 1..6 with the timestamp synchronous to
    the data. Format 1: header 0b11RR0000 (RR = TC, the data relation: 0b00 synchronous) and 1
    to 4 payload bytes, 7 bits each, least significant first, bit 7 set on every byte but the
    last."""
    if not 0 <= delta <= LTS_MAX:
        raise ValueError(f"a local timestamp holds 0..{LTS_MAX}, not {delta}")
    if 1 <= delta <= 6 and relation == 0:
        return bytes([delta << 4])
    out = bytearray([0xC0 | (relation & 0b11) << 4])
    while True:
        low, delta = delta & 0x7F, delta >> 7
        out.append(low | (0x80 if delta else 0))
        if not delta:
            return bytes(out)


def instrumentation(port: int, payload: bytes) -> bytes:
    """D4.2.8 Instrumentation packet (ITM software source): header bits [7:3] the stimulus
    port A (0..31, page 0), bit 2 zero, bits [1:0] SS the size; then the payload as written,
    little-endian."""
    if not 0 <= port < 32:
        raise ValueError(f"stimulus port {port}: the ITM has ports 0..31")
    return bytes([port << 3 | _SIZE_BITS[len(payload)]]) + payload


def hardware_source(discriminator: int, payload: bytes) -> bytes:
    """D4.2.9 Hardware source packet (DWT): header bits [7:3] the discriminator ID, bit 2
    one, bits [1:0] SS the size; then the payload, little-endian."""
    return bytes([discriminator << 3 | 0b100 | _SIZE_BITS[len(payload)]]) + payload


def exception_trace(number: int, function: int) -> bytes:
    """D4.3.2 Exception trace packet, discriminator 1, 2-byte payload: ExceptionNumber in bits
    [8:0] (1 Reset .. 15 SysTick, 16 + n IRQn), FN in bits [13:12]: 1 entered, 2 exited,
    3 returned to (number 0: Thread mode)."""
    value = (number & 0x1FF) | (function & 0b11) << 12
    return hardware_source(EXCEPTION_TRACE_ID, value.to_bytes(2, "little"))


def event_counter(flags: int) -> bytes:
    """D4.3.1 Event counter packet, discriminator 0, 1-byte payload: a bit per DWT counter that
    wrapped (bit 0 CPI, 1 Exc, 2 Sleep, 3 LSU, 4 Fold) and bit 5 Cyc, POSTCNT reloaded."""
    if not 0 < flags < 0x40:
        raise ValueError(f"event counter flags 0x{flags:x}: bits 0..5, at least one")
    return hardware_source(EVENT_COUNTER_ID, bytes([flags]))


def counter_packets(events: Iterable) -> Iterable:
    """(cycle, flags) of the event counter packets for (cycle, flags) counter events in cycle
    order: the events of one cycle share packets, as many as the counter that wrapped most often
    then (two CPI wraps and an LSU wrap at one cycle: CPI | LSU, then CPI)."""
    current, counts = None, {}
    for cycle, flags in events:
        if cycle != current:
            yield from _shared(current, counts)
            current, counts = cycle, {}
        for flag in COUNTER_FLAGS:
            if flags & flag:
                counts[flag] = counts.get(flag, 0) + 1
    yield from _shared(current, counts)


def _shared(cycle, counts: dict):
    for k in range(max(counts.values(), default=0)):
        yield cycle, sum(flag for flag, count in counts.items() if count > k)


def pc_sample(pc: int | None) -> bytes:
    """D4.3.3 Periodic PC sample packet, discriminator 2: the sampled PC as a 4-byte payload,
    or (pc None) the 1-byte payload 0x00 that says the core was asleep."""
    if pc is None:
        return hardware_source(PC_SAMPLE_ID, b"\x00")
    return hardware_source(PC_SAMPLE_ID, (pc & 0xFFFFFFFF).to_bytes(4, "little"))


# -- the stream ------------------------------------------------------------------------------
def encode(itm: Iterable = (), exceptions: Iterable = (), pc_samples: Iterable = (), overflows: Iterable = (),
           sync_period: int = SYNC_PERIOD_CYCLES, counters: Iterable = ()) -> bytes:
    """The packet stream of a run. Each input is in cycle order:
    itm (cycle, port, payload bytes of 1, 2 or 4), exceptions (cycle, number, ENTER/EXIT/RETURN),
    pc_samples (cycle, pc or None asleep), overflows (cycle where packets began to be lost),
    counters (cycle, CPI/EXC/SLEEP/LSU/FOLD/CYC flags): one event each (see counter_packets).

    The events of one cycle are followed by one local timestamp; a gap longer than an LTS
    holds is first bridged by timestamps of LTS_MAX (a decoder that adds them up keeps the
    absolute cycle, as when a real ITM emits a timestamp before its counter overflows)."""
    merged = heapq.merge(((c, 0, None) for c in overflows),
                         ((c, 1, exception_trace(n, f)) for c, n, f in exceptions),
                         ((c, 2, instrumentation(p, d)) for c, p, d in itm),
                         ((c, 3, pc_sample(pc)) for c, pc in pc_samples),
                         ((c, 4, event_counter(f)) for c, f in counter_packets(counters)),
                         key=lambda event: event[0])
    out = bytearray(sync())
    stamped = 0      # cycle of the last local timestamp (the counter starts at reset)
    current = None   # cycle of the events being written
    next_sync = sync_period
    for cycle, kind, packet in merged:
        if cycle != current:
            if current is not None:
                if cycle < current:
                    raise ValueError(f"events out of cycle order: {cycle} after {current}")
                out += local_timestamp(current - stamped)
                stamped = current
            if cycle >= next_sync:
                out += sync()
                next_sync = (cycle // sync_period + 1) * sync_period
            while cycle - stamped > LTS_MAX:
                out += local_timestamp(LTS_MAX)
                stamped += LTS_MAX
            current = cycle
        out += overflow() if kind == 0 else packet
    if current is not None:
        out += local_timestamp(current - stamped)
    return bytes(out)


# -- TPIU framing ---------------------------------------------------------------------------------
# CoreSight trace formatter (CoreSight Architecture Specification, "Trace Formatter"): 16-byte
# frames; an even byte is an ID change ((id << 1) | 1) or data with its bit 0 moved to byte 15
# (bit k for byte 2k), an odd byte is always data; a full-frame sync (FF FF FF 7F) sits between
# frames. ID 0 is the null source, used to pad the last frame.
FRAME_SYNC = b"\xff\xff\xff\x7f"
ITM_SOURCE_ID = 1  # the ID a probe's TPIU usually gives the ITM (orbuculum's and OpenOCD's default)
SYNC_EVERY_FRAMES = 64
_DATA_PER_FRAME = 14  # byte 0 carries the ID change; bytes 1-14 data; byte 15 the bit-0s


def tpiu_frames(stream: bytes, source_id: int = ITM_SOURCE_ID) -> bytes:
    """`stream` (the ITM/DWT packets) in TPIU formatter frames from source `source_id`, for tools
    that expect a probe's formatted output. Each frame starts with the ID, so any frame decodes
    alone; an ITM synchronization packet of 6 or 7 bytes pads the stream so its end falls where
    the last frame can switch to the null source."""
    if not 0 < source_id < 0x70:
        raise ValueError("a TPIU source ID is 1 to 0x6F")
    data = bytes(stream)
    for pad in (b"", sync(), b"\x00" + sync()):  # (6 or 7 bytes: one of the two ends on an odd byte)
        left = (len(data) + len(pad)) % _DATA_PER_FRAME
        if left == 0 or left % 2 == 1:
            data += pad
            break
    out = bytearray(FRAME_SYNC)
    for number, start in enumerate(range(0, len(data), _DATA_PER_FRAME)):
        if number and number % SYNC_EVERY_FRAMES == 0:
            out += FRAME_SYNC
        chunk = data[start:start + _DATA_PER_FRAME]
        frame, aux = bytearray(16), 0
        frame[0] = (source_id << 1) | 1  # (aux bit 0 clear: the new ID applies from byte 1 on)
        for index, byte in enumerate(chunk, start=1):
            if index % 2 == 0:
                frame[index] = byte & 0xFE
                aux |= (byte & 1) << (index // 2)
            else:
                frame[index] = byte
        if len(chunk) < _DATA_PER_FRAME:  # the end: the null source for the rest of the frame
            frame[len(chunk) + 1] = 0x01
        frame[15] = aux
        out += frame
    return bytes(out)


def sample_events(cycles, pcs, chunk: int = 1 << 16):
    """(cycle, pc or None) for `encode` from the run's PC sample arrays (analysis/sampling.py).

    SLEEP_PC becomes None: the DWT's sleep packet. EXCEPTION_PC (exception entry and return,
    when no instruction runs) becomes NO_PC, 0xFFFFFFFF: the value the DWT gives for a PC
    sample without a recently executed instruction address (ARMv7-M ARM C1.8, DWT_PCSR); a
    packet per sample keeps the stream's sampling period even."""
    for start in range(0, len(cycles), chunk):
        for cycle, pc in zip(cycles[start:start + chunk].tolist(), pcs[start:start + chunk].tolist()):
            yield cycle, None if pc == SLEEP_PC else NO_PC if pc == EXCEPTION_PC else pc


class SwoRecorder:
    """ITM stimulus writes and exception events with their cycles, for `encode`: the first
    `capacity` of them, in flat arrays (a run can write millions); counts what it drops. With
    the machine's native `state`, also the DWT event counter packets (`counters`)."""

    def __init__(self, capacity: int = MAX_EVENTS, state=None):
        self.capacity = capacity
        self.counters = CounterEvents(state) if state is not None else None
        self.itm_cycles, self.itm_ports, self.itm_sizes, self.itm_values = (array("q"), array("B"), array("B"),
                                                                            array("I"))
        self.exception_cycles, self.exception_codes = array("q"), array("H")  # number | FN << 12
        self.dropped = 0
        self.first_dropped_cycle: int | None = None

    def _room(self, cycle: int) -> bool:
        if len(self.itm_cycles) + len(self.exception_cycles) < self.capacity:
            return True
        if not self.dropped:
            self.first_dropped_cycle = cycle
        self.dropped += 1
        return False

    def itm(self, cycle: int, port: int, data: bytes) -> None:
        if self._room(cycle):
            self.itm_cycles.append(cycle)
            self.itm_ports.append(port)
            self.itm_sizes.append(len(data))
            self.itm_values.append(int.from_bytes(data, "little"))

    def exception(self, cycle: int, number: int, function: int) -> None:
        if self._room(cycle):
            self.exception_cycles.append(cycle)
            self.exception_codes.append(number | function << 12)

    def itm_events(self):
        """(cycle, port, payload bytes), in order."""
        for cycle, port, size, value in zip(self.itm_cycles, self.itm_ports, self.itm_sizes, self.itm_values):
            yield cycle, port, value.to_bytes(size, "little")

    def exception_events(self):
        """(cycle, exception number, ENTER/EXIT/RETURN), in order."""
        for cycle, code in zip(self.exception_cycles, self.exception_codes):
            yield cycle, code & 0x1FF, code >> 12


class CounterEvents:
    """The DWT event counter packets of a run (ARMv7-M ARM C1.8.7, D4.3.1): the wraps of CPICNT,
    LSUCNT and FOLDCNT, which the native block hook records (native.counter_events), and runs of
    evenly spaced events Python works out itself: EXCCNT and SLEEPCNT count every cycle of the
    time the machine moves on (exception entry and return, sleep), POSTCNT reloads every so many
    cycles. peripherals/core/dwt.py says when each counter's events are on and where it stands.

    Bounded: the first `capacity` events in cycle order (and the native table holds as many);
    `events` says from which cycle on the rest were left out."""

    def __init__(self, state, capacity: int = MAX_COUNTER_EVENTS):
        self.state = state
        self.capacity = capacity
        self.table = state.reserve(N.EV_RECORDS + capacity)
        state[self.table + N.EV_CAPACITY] = capacity
        for i in range(len(N.EV_FLAGS)):
            state[self.table + N.EV_COUNTERS + N.EV_COUNTER * i + N.EV_WRAP_AT] = N.EV_NEVER
        self.runs = {flag: array("q") for flag in COUNTER_FLAGS}  # (first cycle, step, count) triples

    def configure(self, native: dict, now: int) -> None:
        """The native counters' events from now (cycle) on: per flag CPI, LSU, FOLD (total, counter
        value, event on) at the instruction that changed them."""
        st, t = self.state, self.table
        was_on = st[N.COUNTER_EVENTS] != 0
        if not was_on:  # the native hook starts observing from here
            st[t + N.EV_SINCE] = st[N.CYCLES]
            for i, total_slot in enumerate((N.CPI_TOTAL, N.LSU_TOTAL, N.FOLD_TOTAL)):
                st[t + N.EV_COUNTERS + N.EV_COUNTER * i + N.EV_LAST_TOTAL] = st[total_slot]
        on = False
        for i, flag in enumerate(N.EV_FLAGS):
            slot = t + N.EV_COUNTERS + N.EV_COUNTER * i + N.EV_WRAP_AT
            total, value, enabled = native[flag]
            wrap = total + 256 - value if enabled else N.EV_NEVER
            old = st[slot] if was_on else N.EV_NEVER
            if old <= total:  # wrapped since the hook last looked, before this instruction
                if enabled and (wrap - old) % 256 == 0:
                    wrap = old  # counting on as before: the hook records them
                else:
                    self.run(flag, now, 0, (total - old) // 256 + 1)
            st[slot] = wrap
            on = on or wrap != N.EV_NEVER
        st[N.COUNTER_EVENTS] = t if on else 0

    def observe(self) -> None:
        """Record the native counters' wraps up to now (before Python moves time on)."""
        if self.state[N.COUNTER_EVENTS]:
            N.counter_events(self.state.buffer)

    def run(self, flag: int, first: int, step: int, count: int) -> None:
        """`count` events of one counter from cycle `first` on, every `step` cycles."""
        if count > 0:
            self.runs[flag].extend((first, step, count))

    def _native(self):
        st, t = self.state, self.table
        records = st.buffer[t + N.EV_RECORDS: t + N.EV_RECORDS + st[t + N.EV_COUNT]]
        cycles = records & ((1 << 56) - 1)
        order = np.argsort(cycles, kind="stable")  # (one observation records counter by counter)
        return zip(cycles[order].tolist(), (records[order] >> 56).tolist())

    def _runs(self, flag: int):
        runs = self.runs[flag]
        for i in range(0, len(runs), 3):
            first, step, count = runs[i: i + 3]
            for k in range(count):
                yield first + k * step, flag

    def _merged(self, until: int | None):
        merged = heapq.merge(self._native(), *(self._runs(flag) for flag in COUNTER_FLAGS),
                             key=lambda event: event[0])
        return merged if until is None else takewhile(lambda event: event[0] < until, merged)

    def events(self):
        """((cycle, flag) of the events in cycle order, for `encode`; the cycle from which on
        events were left out, or None)."""
        st, t = self.state, self.table
        lost = st[t + N.EV_FIRST_DROPPED] if st[t + N.EV_DROPPED] else None
        total = st[t + N.EV_COUNT] + sum(sum(runs[2::3]) for runs in self.runs.values())
        if total > self.capacity:
            beyond = next(islice(self._merged(lost), self.capacity, None), None)
            if beyond is not None:
                lost = beyond[0]
        return self._merged(lost), lost
