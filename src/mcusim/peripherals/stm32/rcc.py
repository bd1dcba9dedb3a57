"""STM32 reset and clock control: oscillator/PLL ready flags and the system clock they produce.

Every write that can change SYSCLK recomputes it and tells the machine, so a firmware clock
switch changes the simulated clock.
"""
from __future__ import annotations

from ..base import Peripheral

# AHB prescaler HPRE encoding (RM0351 6.4.3, RM0385 5.3.3): 0xxx = /1, 1000.. = /2../512.
AHB_DIVIDERS = {0b1000: 2, 0b1001: 4, 0b1010: 8, 0b1011: 16, 0b1100: 64, 0b1101: 128, 0b1110: 256, 0b1111: 512}


class _StmRcc(Peripheral):
    # (enable bit, ready bit) pairs of RCC_CR, per family
    READY_PAIRS: tuple[tuple[int, int], ...] = ()
    MODELLED = ("CR", "CFGR", "PLLCFGR")

    def on_read(self, offset):
        if offset == self.offset_of("CR"):
            value = self.get(offset)
            for enable, ready in self.READY_PAIRS:
                value = value | (1 << ready) if value >> enable & 1 else value & ~(1 << ready)
            return value
        if offset == self.offset_of("CFGR"):
            cfgr = self.get(offset)
            return (cfgr & ~0b1100) | ((cfgr & 0b11) << 2)  # SWS follows SW at once
        if offset in self.registers.values():
            return self.get(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset in self.registers.values():
            self.set(offset, value)
            if offset in (self.offset_of(r) for r in self.MODELLED):
                self.chip.set_clock(self.hclk_hz(), "RCC")
            return True
        return False

    def hclk_hz(self) -> int:
        hpre = (self.get(self.offset_of("CFGR")) >> 4) & 0xF
        return self.sysclk_hz() // AHB_DIVIDERS.get(hpre, 1)

    def sysclk_hz(self) -> int:
        raise NotImplementedError


class RccL4(_StmRcc):
    """STM32L4 RCC (RM0351 6.4)."""

    # MSION/MSIRDY 0/1, HSION/HSIRDY 8/10, HSEON/HSERDY 16/17, PLLON/PLLRDY 24/25,
    # PLLSAI1ON/RDY 26/27, PLLSAI2ON/RDY 28/29 (RM0351 6.4.1)
    READY_PAIRS = ((0, 1), (8, 10), (16, 17), (24, 25), (26, 27), (28, 29))
    # MSIRANGE 0-11 (RM0351 6.4.1): 100 kHz .. 48 MHz
    MSI_HZ = (100_000, 200_000, 400_000, 800_000, 1_000_000, 2_000_000, 4_000_000, 8_000_000,
              16_000_000, 24_000_000, 32_000_000, 48_000_000)
    HSI16_HZ = 16_000_000  # RM0351 6.2.2

    def _msi_hz(self) -> int:
        cr = self.get(self.offset_of("CR"))
        index = (cr >> 4) & 0xF if cr & (1 << 3) else (self.get(self.offset_of("CSR")) >> 8) & 0xF or 6
        return self.MSI_HZ[min(index, 11)]

    def _pll_hz(self) -> int:
        cfg = self.get(self.offset_of("PLLCFGR"))
        source = {1: self._msi_hz(), 2: self.HSI16_HZ, 3: self.chip.board.clocks.get("hse_hz", 0)}.get(cfg & 3, 0)
        m = ((cfg >> 4) & 7) + 1
        n = (cfg >> 8) & 0x7F
        r = 2 * (((cfg >> 25) & 3) + 1)
        return source * n // m // r

    def sysclk_hz(self) -> int:
        sw = self.get(self.offset_of("CFGR")) & 3
        return [self._msi_hz(), self.HSI16_HZ, self.chip.board.clocks.get("hse_hz", 0), self._pll_hz()][sw]


class RccF7(_StmRcc):
    """STM32F7 RCC (RM0385 5.3)."""

    # HSION/HSIRDY 0/1, HSEON/HSERDY 16/17, PLLON/PLLRDY 24/25, PLLI2SON/RDY 26/27, PLLSAION/RDY 28/29
    READY_PAIRS = ((0, 1), (16, 17), (24, 25), (26, 27), (28, 29))
    HSI_HZ = 16_000_000  # RM0385 5.2.2

    def _pll_hz(self) -> int:
        cfg = self.get(self.offset_of("PLLCFGR"))
        source = self.chip.board.clocks.get("hse_hz", 0) if cfg & (1 << 22) else self.HSI_HZ
        m = cfg & 0x3F
        n = (cfg >> 6) & 0x1FF
        p = 2 * (((cfg >> 16) & 3) + 1)
        return source * n // max(m, 1) // p

    def sysclk_hz(self) -> int:
        sw = self.get(self.offset_of("CFGR")) & 3
        return [self.HSI_HZ, self.chip.board.clocks.get("hse_hz", 0), self._pll_hz(), self.HSI_HZ][sw]
