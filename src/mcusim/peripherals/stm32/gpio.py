"""STM32 GPIO port: the L4 (RM0351 8.5) and the F7 (RM0385 6.4) share the layout; BRR exists
on the L4 only, so the model handles it where the board data names it."""
from __future__ import annotations

from ..gpio import GpioPort

MODE_OUTPUT = 0b01  # MODER field: general purpose output (RM0351 8.5.1, RM0385 6.4.1)
PULL_UP = 0b01      # PUPDR field: pull-up (RM0351 8.5.4, RM0385 6.4.4)
PINS = 16


class Stm32Gpio(GpioPort):
    """A pin in output mode drives its ODR bit; IDR reads that level for outputs, the pull-up
    level for the other pins (0 without a pull-up). Not modelled: open-drain outputs (OTYPER)
    show as driving both levels, pins in alternate function mode as undriven, LCKR is storage
    (no locking), and the port works with its RCC clock off."""

    def _modes(self) -> list[int]:
        moder = self.get(self.offset_of("MODER"))
        return [(moder >> 2 * n) & 3 for n in range(PINS)]

    def driven_levels(self):
        odr = self.get(self.offset_of("ODR"))
        port = self.name[-1]  # GPIOA -> PA0..PA15
        return {f"P{port}{n}": (odr >> n) & 1 for n, mode in enumerate(self._modes()) if mode == MODE_OUTPUT}

    def _input(self) -> int:
        odr, pupdr = self.get(self.offset_of("ODR")), self.get(self.offset_of("PUPDR"))
        value = 0
        for n, mode in enumerate(self._modes()):
            level = (odr >> n) & 1 if mode == MODE_OUTPUT else int((pupdr >> 2 * n) & 3 == PULL_UP)
            value |= level << n
        return value

    def on_read(self, offset):
        if offset == self.offset_of("IDR"):
            return self._input()
        if offset in (self.offset_of("BSRR"), self.registers.get("BRR")):
            return 0  # write-only
        return super().on_read(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        odr = self.offset_of("ODR")
        if offset == self.offset_of("BSRR"):  # set bits win over reset bits (RM0351 8.5.7)
            self.set(odr, ((self.get(odr) & ~(value >> 16)) | value) & 0xFFFF)
        elif offset == self.registers.get("BRR"):
            self.set(odr, self.get(odr) & ~value & 0xFFFF)
        elif offset == self.offset_of("IDR"):
            return True  # read-only
        elif not super().on_write(offset, value, raw_offset, size, raw_value):
            return False
        self.update()
        return True
