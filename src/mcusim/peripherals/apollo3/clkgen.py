"""Apollo3 clock generator and burst mode (TurboSPOT): 48 MHz HFRC, 96 MHz in burst mode.

Register facts: Apollo3 Blue datasheet, CLKGEN and MCUCTRL register chapters (see the board TOML).
"""
from __future__ import annotations

from ..base import RegisterFile

NORMAL_HZ = 48_000_000   # Apollo3 Blue datasheet: HFRC 48 MHz core clock (CORESEL = 0)
BURST_HZ = 96_000_000    # Apollo3 Blue datasheet: TurboSPOT burst mode 96 MHz


class ClkGen(RegisterFile):
    BURSTREQ, BURSTACK, BURSTSTATUS = 1 << 0, 1 << 1, 1 << 2

    def on_write(self, offset, value, raw_offset, size, raw_value):
        r = self.registers
        if offset == r["FREQCTRL"]:
            burst = bool(value & self.BURSTREQ)
            self.set(offset, (self.BURSTREQ | self.BURSTACK | self.BURSTSTATUS) if burst else 0)
            self._update_clock()
            return True
        if offset == r["CCTRL"]:
            self.set(offset, value & 1)
            self._update_clock()
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)

    def _update_clock(self) -> None:
        r = self.registers
        hz = BURST_HZ if self.get(r["FREQCTRL"]) & self.BURSTSTATUS else NORMAL_HZ
        if self.get(r["CCTRL"]) & 1:  # CORESEL = HFRC/2
            hz //= 2
        self.chip.set_clock(hz, "CLKGEN")


class McuCtrl(RegisterFile):
    """FEATUREENABLE burst handshake: BURSTREQ is acknowledged and burst is available."""

    BURSTREQ, BURSTACK, BURSTAVAIL = 1 << 4, 1 << 5, 1 << 6

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.registers["FEATUREENABLE"]:
            if value & self.BURSTREQ:
                value |= self.BURSTACK | self.BURSTAVAIL
            else:
                value &= ~self.BURSTACK
            self.set(offset, value)
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)
