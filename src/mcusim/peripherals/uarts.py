"""Simple byte UARTs shared by several boards: Arm PL011 (Apollo3 UART0) and CMSDK APB UART (MPS2)."""
from __future__ import annotations

from .base import RegisterFile


class Pl011(RegisterFile):
    """Arm PrimeCell PL011 (DDI 0183) transmit side: never busy, FIFO never full."""

    UARTEN, TXE = 1 << 0, 1 << 8
    TXFE = 1 << 7

    def reset(self):
        self.storage.setdefault(0x30, 0x300)  # CR reset: TXE | RXE (PL011 TRM 3.3.8)

    def on_read(self, offset):
        if offset == self.registers["FR"]:
            return self.TXFE
        if offset == self.registers["DR"]:
            return 0
        return super().on_read(offset)

    def fast_registers(self):
        """(status offset, its value, data offset, whether a write transmits): machine/console_uart.py."""
        cr = self.get(self.registers["CR"])
        return self.registers["FR"], self.TXFE, self.registers["DR"], bool(cr & self.UARTEN and cr & self.TXE)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.registers["DR"]:
            cr = self.get(self.registers["CR"])
            if cr & self.UARTEN and cr & self.TXE:
                self.chip.uart_write(self.name, bytes([raw_value & 0xFF]))
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)


class CmsdkUart(RegisterFile):
    """Arm CMSDK APB UART (DDI 0479, as QEMU's cmsdk-apb-uart): transmits when CTRL.TX_EN is set."""

    TX_EN = 1 << 0

    def on_read(self, offset):
        if offset == self.registers["STATE"]:
            return 0  # TX buffer never full
        if offset == self.registers["DATA"]:
            return 0
        return super().on_read(offset)

    def fast_registers(self):
        """(status offset, its value, data offset, whether a write transmits): machine/console_uart.py."""
        return (self.registers["STATE"], 0, self.registers["DATA"],
                bool(self.get(self.registers["CTRL"]) & self.TX_EN))

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.registers["DATA"]:
            if self.get(self.registers["CTRL"]) & self.TX_EN:
                self.chip.uart_write(self.name, bytes([raw_value & 0xFF]))
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)
