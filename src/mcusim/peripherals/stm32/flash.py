"""STM32 flash interface: FLASH_ACR (latency, prefetch, caches) drives the flash timing model."""
from __future__ import annotations

from ..base import Peripheral


class FlashInterface(Peripheral):
    """FLASH_ACR kept as written (the STM32F7 ART and its L1 caches belong to the M7 model)."""

    def on_read(self, offset):
        if offset in (self.offset_of("ACR"), self.offset_of("SR"), self.offset_of("CR")):
            return self.get(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.offset_of("ACR"):
            self.set(offset, value)
            self.acr_changed(value)
            return True
        return False

    def acr_changed(self, value: int) -> None:
        """Subclasses pass the new setting to the timing model."""

    @property
    def latency_wait_states(self) -> int:
        return self.get(self.offset_of("ACR")) & 0xF


class FlashL4(FlashInterface):
    """STM32L4 FLASH_ACR (RM0351 3.7.1): LATENCY[2:0], PRFTEN bit 8, ICEN bit 9, DCEN bit 10,
    ICRST bit 11, DCRST bit 12 (a reset acts only while its cache is off, RM0351 3.7.1)."""

    LATENCY_MASK = 0x7
    PRFTEN, ICEN, DCEN, ICRST, DCRST = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12

    def reset(self) -> None:
        self.acr_changed(self.get(self.offset_of("ACR")))

    def acr_changed(self, value: int) -> None:
        flash = self.chip.flash_timing
        if flash is None:
            return
        latency = value & self.LATENCY_MASK
        flash.configure(fetch_wait=latency, data_wait=latency, prefetch=bool(value & self.PRFTEN),
                        icache=bool(value & self.ICEN), dcache=bool(value & self.DCEN))
        if value & self.ICRST and not value & self.ICEN:
            flash.reset_cache(data_side=False)
        if value & self.DCRST and not value & self.DCEN:
            flash.reset_cache(data_side=True)

    @property
    def latency_wait_states(self) -> int:
        return self.get(self.offset_of("ACR")) & self.LATENCY_MASK


class FlashF7(FlashInterface):
    """STM32F7 FLASH_ACR (RM0385 3.7.1): LATENCY[3:0] sets the wait states of both flash ports
    (AXIM and ITCM); PRFTEN (bit 8) and ARTEN (bit 9) switch the ITCM port's prefetch and ART
    accelerator, ARTRST (bit 11) empties the ART while it is off."""

    PRFTEN, ARTEN, ARTRST = 1 << 8, 1 << 9, 1 << 11

    def reset(self) -> None:
        self.acr_changed(self.get(self.offset_of("ACR")))

    def acr_changed(self, value: int) -> None:
        latency = value & 0xF
        for port in self.chip.flash_ports:
            port.configure(fetch_wait=latency, data_wait=latency)
        itcm = next((port for port in self.chip.flash_ports if port.name == "itcm"), None)
        if itcm is not None:
            art = bool(value & self.ARTEN)
            itcm.configure(prefetch=bool(value & self.PRFTEN), icache=art, dcache=art)
            if value & self.ARTRST and not art:
                itcm.reset_cache(data_side=False)
