"""DWT counters (ARMv7-M ARM C1.8): CYCCNT and the 8-bit profiling counters, derived from the
machine's cycle totals at the accessing instruction; and, in an SWO capture (`--swo`), their
event counter packets (D4.3.1): one each time a counter whose DWT_CTRL.<counter>EVTENA is set
wraps from 255 to 0, and with CYCEVTENA one each time POSTCNT reloads."""
from __future__ import annotations

from ..base import Peripheral
from .itm import ITMENA

CTRL, CYCCNT, CPICNT, EXCCNT, SLEEPCNT, LSUCNT, FOLDCNT, PCSR = (0x00, 0x04, 0x08, 0x0C, 0x10, 0x14,
                                                                0x18, 0x1C)
COUNTER_NAMES = {CYCCNT: "CYCCNT", CPICNT: "CPICNT", EXCCNT: "EXCCNT", SLEEPCNT: "SLEEPCNT", LSUCNT: "LSUCNT",
                 FOLDCNT: "FOLDCNT"}  # the names native/counters.py knows them by
CYCCNTENA = 1 << 0
ENABLE_BITS = {CPICNT: 1 << 17, EXCCNT: 1 << 18, SLEEPCNT: 1 << 19, LSUCNT: 1 << 20, FOLDCNT: 1 << 21}
# NUMCOMP (bits 31:28): 4 comparators on Cortex-M4/M7 (Cortex-M4 TRM r0p1 and Cortex-M7 TRM, DWT chapters).
NUMCOMP = 4 << 28
# Event counter packets: each counter's bit in the payload (ARMv7-M ARM D4.3.1), and the POSTCNT
# fields of DWT_CTRL (C1.8.7): POSTPRESET [4:1] its reload value, POSTINIT [8:5] its initial
# value, CYCTAP [9] its tap on CYCCNT (bit 6 or bit 10), PCSAMPLENA [12], CYCEVTENA [22].
EVENT_FLAGS = {CPICNT: 0x01, EXCCNT: 0x02, SLEEPCNT: 0x04, LSUCNT: 0x08, FOLDCNT: 0x10}
CYC_FLAG = 0x20
CYCTAP, PCSAMPLENA, CYCEVTENA = 1 << 9, 1 << 12, 1 << 22


class Dwt(Peripheral):
    """Mapped at 0xE0001000. Each counter is (total at enable time, value at enable time).
    Linked in by the builder (link_trace): `core_debug` (DEMCR.TRCENA), `itm` (TCR.ITMENA), and
    in an SWO capture `counter_events`, where the event counter packets go."""

    core_debug = None
    itm = None
    counter_events = None

    def reset(self):
        self.ctrl = NUMCOMP
        # per counter: (running, value when last frozen or anchored, total at anchor)
        self.counters = {reg: [False, 0, 0] for reg in (CYCCNT, *ENABLE_BITS)}
        if not hasattr(self, "postcnt"):
            self.postcnt = None  # POSTCNT running: (cycle of its next reload, cycles between reloads, tap, emits)
            self.wrap_in: dict[int, int | None] = {}  # EXCCNT, SLEEPCNT with events on: counts to their next wrap
        self.events_changed()

    def _total(self, reg: int) -> int:
        return self.chip.counter_total(reg)

    def _enabled(self, reg: int) -> bool:
        if not self.core_debug.demcr & (1 << 24):
            return False
        bit = CYCCNTENA if reg == CYCCNT else ENABLE_BITS[reg]
        return bool(self.ctrl & bit)

    def _value(self, reg: int) -> int:
        running, value, anchor = self.counters[reg]
        if running:
            value += self._total(reg) - anchor
        return value & (0xFFFFFFFF if reg == CYCCNT else 0xFF)

    def _sync(self) -> None:
        """Re-anchor every counter after an enable bit changed."""
        for reg, state in self.counters.items():
            value = self._value(reg)
            state[:] = [self._enabled(reg), value, self._total(reg)]

    def trace_enabled_changed(self) -> None:
        self._sync()
        self.events_changed()

    # event counter packets (only in an SWO capture) ---------------------------------------
    def events_changed(self) -> None:
        """Where the events stand after what they depend on changed (DWT_CTRL, a counter written,
        DEMCR.TRCENA, ITM_TCR.ITMENA): a counter's events are on while it counts (TRCENA and its
        EVTENA bit) and the ITM is enabled. CPICNT, LSUCNT, FOLDCNT wrap in the native hook,
        EXCCNT and SLEEPCNT in python_time, POSTCNT reloads every (POSTPRESET + 1) transitions of
        its CYCCNT tap bit (every 64 or 1024 cycles), the first after POSTINIT + 1."""
        events = self.counter_events
        if events is None or self.core_debug is None:
            return  # no capture (or the trace components are not linked yet)
        now = self.chip.cycles_now()
        emitting = bool(self.itm.tcr & ITMENA)
        events.configure({EVENT_FLAGS[reg]: (self._total(reg), self._value(reg), emitting and self.counters[reg][0])
                          for reg in (CPICNT, LSUCNT, FOLDCNT)}, now)
        for reg in (EXCCNT, SLEEPCNT):
            self.wrap_in[reg] = 256 - self._value(reg) if emitting and self.counters[reg][0] else None
        postcnt = None
        if self.postcnt is not None:  # its reloads so far; then where it stands
            due, period, tap, emits = self.postcnt
            if due <= now:
                count = (now - due) // period + 1
                if emits:
                    events.run(CYC_FLAG, due, period, count)
                due += count * period
            postcnt = (due - now - 1) // tap  # tap transitions before the reload due
            self.postcnt = None
        ctrl = self.ctrl
        if self.counters[CYCCNT][0] and ctrl & (CYCEVTENA | PCSAMPLENA):
            tap = 1024 if ctrl & CYCTAP else 64
            if postcnt is None:
                postcnt = (ctrl >> 5) & 0xF  # POSTINIT
            due = now + tap - self._value(CYCCNT) % tap + postcnt * tap
            self.postcnt = (due, (((ctrl >> 1) & 0xF) + 1) * tap, tap,
                            emitting and bool(ctrl & CYCEVTENA) and not ctrl & PCSAMPLENA)

    def python_time(self, start: int, cycles: int, counter: int | None) -> None:
        """The machine moves time on by itself from cycle `start` (exception entry or return:
        `counter` EXCCNT; sleep: SLEEPCNT; a skipped `b .` loop: None): the native counters'
        wraps up to here, and the counter's wraps in these cycles (it counts every one)."""
        events = self.counter_events
        events.observe()
        left = self.wrap_in.get(counter)
        if left is None:
            return
        if cycles < left:
            self.wrap_in[counter] = left - cycles
            return
        events.run(EVENT_FLAGS[counter], start + left, 256, (cycles - left) // 256 + 1)
        self.wrap_in[counter] = 256 - (cycles - left) % 256

    def finish_events(self) -> None:
        """At the end of the run: the events up to its last cycle."""
        self.counter_events.observe()
        self.events_changed()

    def on_read(self, offset):
        if offset == CTRL:
            return self.ctrl
        if offset in self.counters:
            return self._value(offset)
        if offset == PCSR:
            return self.chip.current_pc()
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == CTRL:
            self._sync()
            self.ctrl = (value & 0x0FFFFFFF) | NUMCOMP
            self._sync()
            self.events_changed()
            return True
        if offset == 0xFB0:  # LAR: the CoreSight software lock key (Cortex-M7); nothing is locked here
            return True
        if offset in self.counters:
            mask = 0xFFFFFFFF if offset == CYCCNT else 0xFF
            self.counters[offset] = [self._enabled(offset), value & mask, self._total(offset)]
            self.events_changed()
            return True
        return False


def link_trace(itm, dwt: Dwt, core_debug, counter_events=None) -> None:
    """The trace components see each other: DEMCR.TRCENA gates the ITM and the DWT counters,
    ITM_TCR.ITMENA the DWT's event counter packets (into `counter_events`, an SWO capture's)."""
    itm.core_debug = dwt.core_debug = core_debug
    itm.dwt = core_debug.dwt = dwt
    dwt.itm = itm
    dwt.counter_events = counter_events
