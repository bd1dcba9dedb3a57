"""STM32 flash interface: FLASH_ACR (latency, prefetch, caches) kept for the memory timing model."""
from __future__ import annotations

from ..base import Peripheral


class FlashInterface(Peripheral):
    def on_read(self, offset):
        if offset in (self.offset_of("ACR"), self.offset_of("SR"), self.offset_of("CR")):
            return self.get(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.offset_of("ACR"):
            self.set(offset, value)
            return True
        return False

    @property
    def latency_wait_states(self) -> int:
        return self.get(self.offset_of("ACR")) & 0xF
