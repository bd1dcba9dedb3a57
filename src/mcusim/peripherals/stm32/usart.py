"""STM32 USART (L4 and F7 share the register layout: RM0351 40.8, RM0385 31.8), transmit side."""
from __future__ import annotations

from ..base import Peripheral

CR1_UE, CR1_RE, CR1_TE = 1 << 0, 1 << 2, 1 << 3
ISR_TC, ISR_TXE, ISR_TEACK, ISR_REACK = 1 << 6, 1 << 7, 1 << 21, 1 << 22


class Usart(Peripheral):
    """Transmission is instantaneous: TXE and TC always read as set."""

    def on_read(self, offset):
        if offset == self.offset_of("ISR"):
            cr1 = self.get(self.offset_of("CR1"))
            value = ISR_TC | ISR_TXE
            if cr1 & CR1_TE:
                value |= ISR_TEACK
            if cr1 & CR1_RE:
                value |= ISR_REACK
            return value
        if offset == self.offset_of("RDR"):
            return 0
        if offset in (self.offset_of("CR1"), self.offset_of("CR2"), self.offset_of("CR3"), self.offset_of("BRR")):
            return self.get(offset)
        return None

    def fast_registers(self):
        """(status offset, its value, data offset, whether a write transmits): machine/console_uart.py."""
        isr = self.offset_of("ISR")
        cr1 = self.get(self.offset_of("CR1"))
        return isr, self.on_read(isr), self.offset_of("TDR"), bool(cr1 & CR1_UE and cr1 & CR1_TE)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.offset_of("TDR"):
            cr1 = self.get(self.offset_of("CR1"))
            if cr1 & CR1_UE and cr1 & CR1_TE:
                self.chip.uart_write(self.name, bytes([raw_value & 0xFF]))
            return True
        if offset in (self.offset_of("CR1"), self.offset_of("CR2"), self.offset_of("CR3"), self.offset_of("BRR"),
                      self.offset_of("ICR"), self.offset_of("RQR")):
            self.set(offset, value)
            return True
        return False
