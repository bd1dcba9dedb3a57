"""nRF52 NVMC: READY flags, and the instruction cache (ICACHECNF) with its hit and miss counters.

Register facts: nRF52840 Product Specification v1.7, 4.3.10 "NVMC registers" (see the board TOML).
"""
from __future__ import annotations

from ..base import RegisterFile


class Nvmc(RegisterFile):
    CACHEEN, CACHEPROFEN = 1 << 0, 1 << 8

    def reset(self) -> None:
        self._counter_base = {"IHIT": self._raw("IHIT"), "IMISS": self._raw("IMISS")}  # they reset to 0
        self._configure(self.get(self.offset_of("ICACHECNF")))

    def on_read(self, offset):
        name = self.register_names.get(offset)
        if name in ("IHIT", "IMISS"):
            return self._counter(name)
        return super().on_read(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        name = self.register_names.get(offset)
        if name in ("IHIT", "IMISS"):  # writing sets the counter (firmware clears it with 0)
            self._counter_base[name] = self._raw(name) - value
            return True
        if name == "ICACHECNF":
            self.set(offset, value)
            self._configure(value)
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)

    def _configure(self, value: int) -> None:
        if self.chip.flash_timing is not None:
            self.chip.flash_timing.configure(icache=bool(value & self.CACHEEN))

    def _raw(self, name: str) -> int:
        flash = self.chip.flash_timing
        if flash is None:
            return 0
        return flash.totals()["icache_hits" if name == "IHIT" else "icache_misses"]

    def _counter(self, name: str) -> int:
        """IHIT/IMISS count only while CACHEPROFEN is set (PS 4.3.10); here they count
        whenever the cache is on, and read 0 while profiling is off."""
        if not self.get(self.offset_of("ICACHECNF")) & self.CACHEPROFEN:
            return 0
        return (self._raw(name) - self._counter_base[name]) & 0xFFFFFFFF
