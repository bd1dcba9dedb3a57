"""SysTick timer (ARMv7-M ARM B3.3): a 24-bit down-counter on the processor or reference clock."""
from __future__ import annotations

from ..base import Peripheral
from ...machine.exceptions import SYSTICK

CSR, RVR, CVR, CALIB = 0x0, 0x4, 0x8, 0xC
ENABLE, TICKINT, CLKSOURCE, COUNTFLAG = 1 << 0, 1 << 1, 1 << 2, 1 << 16


class SysTick(Peripheral):
    """Mapped at 0xE000E010. The count is derived from the cycle counter, never ticked."""

    def __init__(self, *args, external_divider: int = 1, **kwargs):
        self.external_divider = external_divider
        super().__init__(*args, **kwargs)

    def reset(self):
        self.csr = 0
        self.reload = 0
        self.value = 0              # counter value at anchor_cycle
        self.anchor_cycle = 0
        self.countflag = False

    def _divider(self) -> int:
        return 1 if self.csr & CLKSOURCE else self.external_divider

    def _ticks_until_zero(self) -> int | None:
        """Ticks from the anchor to the next 1->0 transition (None: never)."""
        if self.value > 0:
            return self.value
        return self.reload + 1 if self.reload else None

    def current(self, cycle: int) -> int:
        if not self.csr & ENABLE:
            return self.value
        ticks = (cycle - self.anchor_cycle) // self._divider()
        if ticks <= self.value:
            return self.value - ticks
        if not self.reload:
            return 0
        period = self.reload + 1
        since_zero = (ticks - self.value) % period
        return 0 if since_zero == 0 else self.reload + 1 - since_zero

    def next_event_cycle(self) -> int | None:
        if not self.csr & ENABLE:
            return None
        ticks = self._ticks_until_zero()
        return None if ticks is None else self.anchor_cycle + ticks * self._divider()

    def on_time(self, cycle: int) -> None:
        """Called at (or after) the cycle of the counter reaching zero."""
        event = self.next_event_cycle()
        if event is None or cycle < event:
            return
        self.anchor_cycle = event
        self.value = 0
        self.countflag = True
        if self.csr & TICKINT:
            self.chip.raise_interrupt(SYSTICK)

    def _rebase(self) -> None:
        now = self.chip.cycles_now()
        self.value = self.current(now)
        self.anchor_cycle = now

    def peek(self, offset):
        """As on_read, without catching up on time or clearing COUNTFLAG (a debugger's read)."""
        if offset == CSR:
            return self.csr | (COUNTFLAG if self.countflag else 0)
        if offset == CVR:
            return self.current(self.chip.cycles_now())
        return super().peek(offset)

    def on_read(self, offset):
        now = self.chip.cycles_now()
        if offset == CSR:
            self.on_time(now)
            value = self.csr | (COUNTFLAG if self.countflag else 0)
            self.countflag = False
            return value
        if offset == RVR:
            return self.reload
        if offset == CVR:
            self.on_time(now)
            return self.current(now)
        if offset == CALIB:
            # NOREF (bit 31) when the SoC gives SysTick no reference clock; no TENMS value
            return 0 if self.external_divider > 1 else 1 << 31
        return 0

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == CSR:
            self._rebase()
            self.csr = value & (ENABLE | TICKINT | CLKSOURCE)
            self.chip.request_stop()  # its next event moved
        elif offset == RVR:
            self._rebase()
            self.reload = value & 0xFFFFFF
            self.chip.request_stop()  # its next event moved
        elif offset == CVR:
            self.anchor_cycle = self.chip.cycles_now()
            self.value = 0
            self.countflag = False
            self.chip.request_stop()  # its next event moved
        return True
