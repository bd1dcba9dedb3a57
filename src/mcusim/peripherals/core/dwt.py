"""DWT counters (ARMv7-M ARM C1.8): CYCCNT and the 8-bit profiling counters, derived from the
machine's cycle totals at the accessing instruction."""
from __future__ import annotations

from ..base import Peripheral

CTRL, CYCCNT, CPICNT, EXCCNT, SLEEPCNT, LSUCNT, FOLDCNT, PCSR = (0x00, 0x04, 0x08, 0x0C, 0x10, 0x14,
                                                                0x18, 0x1C)
CYCCNTENA = 1 << 0
ENABLE_BITS = {CPICNT: 1 << 17, EXCCNT: 1 << 18, SLEEPCNT: 1 << 19, LSUCNT: 1 << 20, FOLDCNT: 1 << 21}
# NUMCOMP (bits 31:28): 4 comparators on Cortex-M4/M7 (Cortex-M4 TRM r0p1 and Cortex-M7 TRM, DWT chapters).
NUMCOMP = 4 << 28


class Dwt(Peripheral):
    """Mapped at 0xE0001000. Each counter is (total at enable time, value at enable time)."""

    def reset(self):
        self.ctrl = NUMCOMP
        # per counter: (running, value when last frozen or anchored, total at anchor)
        self.counters = {reg: [False, 0, 0] for reg in (CYCCNT, *ENABLE_BITS)}

    def _total(self, reg: int) -> int:
        return self.machine.counter_total(reg)

    def _enabled(self, reg: int) -> bool:
        if not self.machine.core_debug.demcr & (1 << 24):
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

    def on_read(self, offset):
        if offset == CTRL:
            return self.ctrl
        if offset in self.counters:
            return self._value(offset)
        if offset == PCSR:
            return self.machine.current_pc()
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == CTRL:
            self._sync()
            self.ctrl = (value & 0x0FFFFFFF) | NUMCOMP
            self._sync()
            return True
        if offset == 0xFB0:  # LAR: the CoreSight software lock key (Cortex-M7); nothing is locked here
            return True
        if offset in self.counters:
            mask = 0xFFFFFFFF if offset == CYCCNT else 0xFF
            self.counters[offset] = [self._enabled(offset), value & mask, self._total(offset)]
            return True
        return False
