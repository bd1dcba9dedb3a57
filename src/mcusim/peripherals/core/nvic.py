"""NVIC registers (ARMv7-M ARM B3.4): enable, pending, active and priority of external interrupts."""
from __future__ import annotations

from ..base import Peripheral
from ...machine.exceptions import FIRST_IRQ

ISER, ICER, ISPR, ICPR, IABR, IPR = 0x000, 0x080, 0x100, 0x180, 0x200, 0x300


class Nvic(Peripheral):
    """Mapped at 0xE000E100 (ISER0) through 0xE000E4EF (IPR)."""

    def _bank(self, offset: int, start: int):
        if start <= offset < start + 0x40:
            return (offset - start) // 4
        return None

    def _irqs(self, bank: int):
        exc = self.chip.exceptions
        first = FIRST_IRQ + 32 * bank
        return range(first, min(first + 32, exc.count))

    def on_read(self, offset):
        exc = self.chip.exceptions
        for start, source in ((ISER, exc.enabled), (ICER, exc.enabled), (ISPR, exc.pending), (ICPR, exc.pending)):
            bank = self._bank(offset, start)
            if bank is not None:
                return sum(1 << (n - FIRST_IRQ - 32 * bank) for n in self._irqs(bank) if source[n])
        bank = self._bank(offset, IABR)
        if bank is not None:
            return sum(1 << (n - FIRST_IRQ - 32 * bank) for n in self._irqs(bank) if n in exc.active)
        if IPR <= offset < IPR + 0xF0:
            first = FIRST_IRQ + (offset - IPR)
            return sum(exc.priority[n] << (8 * i) for i, n in enumerate(range(first, first + 4)) if n < exc.count)
        return 0  # reserved NVIC space reads as zero

    def on_write(self, offset, value, raw_offset, size, raw_value):
        exc = self.chip.exceptions
        for start, action in ((ISER, "enable"), (ICER, "disable"), (ISPR, "pend"), (ICPR, "unpend")):
            bank = self._bank(offset, start)
            if bank is None:
                continue
            for n in self._irqs(bank):
                if value >> (n - FIRST_IRQ - 32 * bank) & 1:
                    if action == "enable":
                        exc.enabled[n] = True
                        self.chip.request_stop()
                    elif action == "disable":
                        exc.enabled[n] = False
                    elif action == "pend":
                        self.chip.raise_interrupt(n)
                    else:
                        self.chip.clear_interrupt(n)
            return True
        if IPR <= offset < IPR + 0xF0:
            first = FIRST_IRQ + (offset - IPR)
            for i, n in enumerate(range(first, first + 4)):
                if n < exc.count and (raw_offset & ~3) + i >= raw_offset and (raw_offset & ~3) + i < raw_offset + size:
                    exc.set_priority(n, value >> (8 * i))
            self.chip.request_stop()
            return True
        return True  # writes to reserved NVIC space are ignored
