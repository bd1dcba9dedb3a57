"""nRF52 CLOCK (nRF52840 PS 5.4.3): oscillator start tasks complete at once."""
from __future__ import annotations

from ..base import RegisterFile


class Clock(RegisterFile):
    def on_write(self, offset, value, raw_offset, size, raw_value):
        r = self.registers
        if offset == r["TASKS_HFCLKSTART"] and value & 1:
            self.set(r["EVENTS_HFCLKSTARTED"], 1)
            self.set(r["HFCLKSTAT"], (1 << 16) | 1)  # STATE running, SRC Xtal
            self.set(r["HFCLKRUN"], 1)
            return True
        if offset == r["TASKS_HFCLKSTOP"] and value & 1:
            self.set(r["HFCLKSTAT"], 0)
            self.set(r["HFCLKRUN"], 0)
            return True
        if offset == r["TASKS_LFCLKSTART"] and value & 1:
            self.set(r["EVENTS_LFCLKSTARTED"], 1)
            self.set(r["LFCLKSTAT"], (1 << 16) | (self.get(r["LFCLKSRC"]) & 3))
            self.set(r["LFCLKRUN"], 1)
            return True
        return super().on_write(offset, value, raw_offset, size, raw_value)
