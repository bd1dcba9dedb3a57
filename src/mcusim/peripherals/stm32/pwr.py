"""STM32 power controllers: the voltage scaling and over-drive handshakes of SystemInit."""
from __future__ import annotations

from ..base import Peripheral


class PwrL4(Peripheral):
    """STM32L4 PWR (RM0351 5.4): VOS changes complete at once, so SR2.VOSF reads 0."""

    def reset(self) -> None:
        if self.chip.flash_timing is not None:
            self.chip.flash_timing.set_voltage_range(self.voltage_range)
        self.chip.voltage_scaling_changed(self.voltage_range)

    def on_read(self, offset):
        if offset == self.offset_of("SR2"):
            return 0
        if offset in (self.offset_of("CR1"), self.offset_of("CR2"), self.offset_of("CR3"), self.offset_of("CR4"),
                      self.offset_of("SR1")):
            return self.get(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset in (self.offset_of("CR1"), self.offset_of("CR2"), self.offset_of("CR3"), self.offset_of("CR4"),
                      self.offset_of("SCR")):
            self.set(offset, value)
            if offset == self.offset_of("CR1"):
                if self.chip.flash_timing is not None:
                    self.chip.flash_timing.set_voltage_range(self.voltage_range)
                self.chip.voltage_scaling_changed(self.voltage_range)
            return True
        return False

    @property
    def voltage_range(self) -> int:
        return (self.get(self.offset_of("CR1")) >> 9) & 3


class PwrF7(Peripheral):
    """STM32F7 PWR (RM0385 4.4): over-drive ready flags follow their enable bits at once."""

    ODEN, ODSWEN = 1 << 16, 1 << 17
    VOSRDY = 1 << 14

    def on_read(self, offset):
        if offset == self.offset_of("CSR1"):
            cr1 = self.get(self.offset_of("CR1"))
            value = self.VOSRDY
            if cr1 & self.ODEN:
                value |= 1 << 16  # ODRDY
            if cr1 & self.ODSWEN:
                value |= 1 << 17  # ODSWRDY
            return value
        if offset in (self.offset_of("CR1"), self.offset_of("CR2"), self.offset_of("CSR2")):
            return self.get(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset in (self.offset_of("CR1"), self.offset_of("CR2")):
            self.set(offset, value)
            if offset == self.offset_of("CR1"):
                self.chip.voltage_scaling_changed(self.voltage_scale)
            return True
        return offset == self.offset_of("CSR1")

    @property
    def voltage_scale(self) -> int:
        """PWR_CR1.VOS (RM0385 4.4.1): 1 scale 3, 2 scale 2, 3 scale 1; 4 + VOS with over-drive on."""
        cr1 = self.get(self.offset_of("CR1"))
        return ((cr1 >> 14) & 3) + (4 if cr1 & self.ODEN else 0)
