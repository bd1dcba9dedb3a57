"""Apollo3 power control: device power domains and memories switch on at once.

DEVPWREN bits and DEVPWRSTATUS domains: Apollo3 Blue datasheet, PWRCTRL registers
(HCPA = IOS/UART0/UART1/SCARD, HCPB = IOM0-2, HCPC = IOM3-5; apollo3.h).
"""
from __future__ import annotations

from ..base import RegisterFile

# DEVPWRSTATUS bit -> DEVPWREN bits that power it
DOMAINS = {2: (0, 7, 8, 10), 3: (1, 2, 3), 4: (4, 5, 6), 5: (9,), 6: (11,), 7: (12,), 8: (13,)}
MCUL, MCUH = 1 << 0, 1 << 1


class PwrCtrl(RegisterFile):
    def on_read(self, offset):
        if offset == self.registers["DEVPWRSTATUS"]:
            enabled = self.get(self.registers["DEVPWREN"])
            status = MCUL | MCUH
            for bit, sources in DOMAINS.items():
                if any(enabled >> s & 1 for s in sources):
                    status |= 1 << bit
            return status
        if offset == self.registers["MEMPWRSTATUS"]:
            return self.get(self.registers["MEMPWREN"])  # memories power up at once
        return super().on_read(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        return super().on_write(offset, value, raw_offset, size, raw_value)
