"""nRF52 UARTE with EasyDMA (nRF52840 PS 6.34): STARTTX sends TXD.MAXCNT bytes from TXD.PTR at once."""
from __future__ import annotations

from ..base import RegisterFile

ENABLED = 8  # ENABLE register value that enables the UARTE (PS 6.34 UARTE, register ENABLE)


class Uarte(RegisterFile):
    def on_write(self, offset, value, raw_offset, size, raw_value):
        r = self.registers
        if offset == r["TASKS_STARTTX"] and value & 1:
            self.set(r["EVENTS_TXSTARTED"], 1)
            count = self.get(r["TXD_MAXCNT"]) & 0xFFFF
            if self.get(r["ENABLE"]) == ENABLED and count:
                data = self.chip.read_memory(self.get(r["TXD_PTR"]), count)
                self.chip.uart_write(self.name, data)
            self.set(r["TXD_AMOUNT"], count)
            self.set(r["EVENTS_ENDTX"], 1)
            return True
        if offset == r["TASKS_STOPTX"] and value & 1:
            self.set(r["EVENTS_TXSTOPPED"], 1)
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)
