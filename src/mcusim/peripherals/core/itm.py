"""ITM stimulus ports (ARMv7-M ARM C1.7). Port 0 is text for stdout; ports 30 and 31 carry
region markers (firmware/include/mcusim.h).

mcusim behaves like a board with a trace probe attached that has set up SWO: the ITM is
enabled (TCR.ITMENA) and every port is enabled (TER) at reset, as a debugger's SWO viewer
would leave them; firmware may change both.
"""
from __future__ import annotations

from ..base import Peripheral

TER, TPR, TCR, LAR, LSR = 0xE00, 0xE40, 0xE80, 0xFB0, 0xFB4
ITMENA = 1 << 0
REGION_BEGIN_PORT, REGION_END_PORT = 30, 31


class Itm(Peripheral):
    """Mapped at 0xE0000000. `core_debug` (DEMCR.TRCENA) and `dwt` are linked in by the builder."""

    core_debug = None
    dwt = None

    def reset(self):
        self.ter = 0xFFFFFFFF
        self.tcr = ITMENA
        self.tpr = 0
        self.port_bytes: dict[int, int] = {}

    def _active(self, port: int) -> bool:
        return bool(self.tcr & ITMENA and self.ter >> port & 1
                    and self.core_debug.demcr & (1 << 24))

    def on_read(self, offset):
        if not self.core_debug.demcr & (1 << 24):
            return 0  # DEMCR.TRCENA clear: the ITM is off (ARMv7-M ARM C1.6.5), its registers read 0
        if offset < 0x80:
            return 1 if self._active(offset // 4) else 0  # FIFOREADY
        return {TER: self.ter, TPR: self.tpr, TCR: self.tcr, LSR: 0}.get(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset < 0x80:
            port = offset // 4
            if self._active(port):
                data = (raw_value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                self.port_bytes[port] = self.port_bytes.get(port, 0) + size
                self.chip.itm_write(port, data)
                if port in (REGION_BEGIN_PORT, REGION_END_PORT):
                    if size == 4:
                        self.chip.region_marker(port == REGION_BEGIN_PORT, raw_value & 0xFFFFFFFF)
                    else:
                        self.chip.warn_once("itm-region-size", f"a {size}-byte write to ITM port {port}: "
                                            "region markers are 32-bit words (firmware/include/mcusim.h); kept "
                                            "as raw ITM output only")
            return True
        if offset == TER:
            self.ter = value
        elif offset == TPR:
            self.tpr = value
        elif offset == TCR:
            self.tcr = value
            self.dwt.events_changed()  # ITMENA gates the DWT's event counter packets
        elif offset != LAR:
            return False
        return True
