"""The SWO byte stream a trace probe would capture: ITM and DWT packets (ARMv7-M Architecture
Reference Manual, DDI 0403E, Appendix D4 "Debug ITM and DWT Packet Protocol") built from a
run's ITM stimulus writes, exception events and PC samples.

`encode` is a pure function of plain data (cycles, ports, payloads, exception numbers, PCs),
so the packet formats are testable without running firmware. `SwoRecorder` is the bounded
capture the machine fills while running, only when the stream was asked for.

Timestamps are local timestamp (LTS) packets counting core cycles since the previous LTS
(the ITM timestamp counter with TSPrescale 1); the stream starts at cycle 0 (reset).
"""
from __future__ import annotations

import functools
import heapq
from array import array
from collections.abc import Iterable

from .sampling import EXCEPTION_PC, SLEEP_PC

MAX_EVENTS = 4_000_000  # ITM writes + exception events kept (at most 16 bytes each: 64 MB)
# A synchronization packet before the first event after every 2**24 cycles: the period of
# DWT_CTRL.SYNCTAP = 0b01, a tap at CYCCNT bit 24 (ARMv7-M ARM C1.8, DWT_CTRL).
SYNC_PERIOD_CYCLES = 1 << 24
NO_PC = 0xFFFFFFFF      # a PC sample with no instruction address (see sample_events)
LTS_MAX = (1 << 28) - 1  # D4.2.4: a local timestamp holds at most 28 bits (4 payload bytes of 7)

# Exception trace packet FN field (D4.3.2).
ENTER, EXIT, RETURN = 1, 2, 3
# Hardware source packet discriminator IDs (D4.3).
EXCEPTION_TRACE_ID, PC_SAMPLE_ID = 1, 2
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


def pc_sample(pc: int | None) -> bytes:
    """D4.3.3 Periodic PC sample packet, discriminator 2: the sampled PC as a 4-byte payload,
    or (pc None) the 1-byte payload 0x00 that says the core was asleep."""
    if pc is None:
        return hardware_source(PC_SAMPLE_ID, b"\x00")
    return hardware_source(PC_SAMPLE_ID, (pc & 0xFFFFFFFF).to_bytes(4, "little"))


# -- the stream ------------------------------------------------------------------------------
def encode(itm: Iterable = (), exceptions: Iterable = (), pc_samples: Iterable = (), overflows: Iterable = (),
           sync_period: int = SYNC_PERIOD_CYCLES) -> bytes:
    """The packet stream of a run. Each input is in cycle order:
    itm (cycle, port, payload bytes of 1, 2 or 4), exceptions (cycle, number, ENTER/EXIT/RETURN),
    pc_samples (cycle, pc or None asleep), overflows (cycle where packets began to be lost).

    The events of one cycle are followed by one local timestamp; a gap longer than an LTS
    holds is first bridged by timestamps of LTS_MAX (a decoder that adds them up keeps the
    absolute cycle, as when a real ITM emits a timestamp before its counter overflows)."""
    merged = heapq.merge(((c, 0, None) for c in overflows),
                         ((c, 1, exception_trace(n, f)) for c, n, f in exceptions),
                         ((c, 2, instrumentation(p, d)) for c, p, d in itm),
                         ((c, 3, pc_sample(pc)) for c, pc in pc_samples),
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
    `capacity` of them, in flat arrays (a run can write millions); counts what it drops."""

    def __init__(self, capacity: int = MAX_EVENTS):
        self.capacity = capacity
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
