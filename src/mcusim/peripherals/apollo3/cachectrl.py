"""Apollo3 CACHECTRL: the flash cache (CACHECFG) and the flash read wait states (FLASHCFG).

Register facts: Apollo3 Blue datasheet, CACHECTRL registers, as in AmbiqSuite's apollo3.h
(CACHECFG: ENABLE bit 0, CONFIG bits 7:4, ICACHE_ENABLE bit 8, DCACHE_ENABLE bit 9;
FLASHCFG: RD_WAIT bits 3:0; CTRL: INVALIDATE bit 0, CACHE_READY bit 2).
"""
from __future__ import annotations

from ..base import RegisterFile

# CACHECFG.CONFIG -> (sets, ways) of 16-byte lines (apollo3.h: 4 = direct-mapped 512 entries,
# 5 = 2-way 512 entries, 8 = direct-mapped 1024 entries).
GEOMETRY = {4: (512, 1), 5: (512, 2), 8: (1024, 1)}


class CacheCtrl(RegisterFile):
    ENABLE, ICACHE_ENABLE, DCACHE_ENABLE = 1 << 0, 1 << 8, 1 << 9
    INVALIDATE, CACHE_READY = 1 << 0, 1 << 2

    def reset(self) -> None:
        self._apply()

    def on_read(self, offset):
        if offset == self.offset_of("CTRL"):
            enabled = self.get(self.offset_of("CACHECFG")) & self.ENABLE
            return self.CACHE_READY if enabled else 0
        return super().on_read(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.offset_of("CTRL"):
            if value & self.INVALIDATE and self.chip.flash_timing is not None:
                self.chip.flash_timing.reset_cache(data_side=False)
            return True
        handled = super().on_write(offset, value, raw_offset, size, raw_value)
        if offset in (self.offset_of("CACHECFG"), self.offset_of("FLASHCFG")):
            self._apply()
        return handled

    def _apply(self) -> None:
        flash = self.chip.flash_timing
        if flash is None:
            return
        config = self.get(self.offset_of("CACHECFG"))
        wait = self.get(self.offset_of("FLASHCFG")) & 0xF
        geometry = GEOMETRY.get((config >> 4) & 0xF)
        enabled = bool(config & self.ENABLE) and geometry is not None
        if config & self.ENABLE and geometry is None:
            self.chip.warn_once("apollo3-cache-config", f"CACHECTRL.CACHECFG CONFIG {(config >> 4) & 0xF} is "
                                "not a documented geometry; the cache is left off")
        if enabled:  # a new geometry starts empty; the same one keeps its lines (CTRL.INVALIDATE empties it)
            flash.set_cache_geometry(*geometry)
        flash.configure(fetch_wait=wait, data_wait=wait, icache=enabled and bool(config & self.ICACHE_ENABLE),
                        dcache=enabled and bool(config & self.DCACHE_ENABLE))
