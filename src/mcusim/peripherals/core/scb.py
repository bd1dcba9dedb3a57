"""System control block and its neighbours (ARMv7-M ARM B3.2): ICSR, VTOR, AIRCR, SCR, CCR,
SHPR, SHCSR, fault status, CPACR, STIR, FP context control, cache maintenance, CoreDebug DEMCR."""
from __future__ import annotations

from ..base import Peripheral
from ...machine.exceptions import (FIRST_IRQ, NMI, PENDSV, SYSTICK, SVCALL, MEMMANAGE, BUSFAULT,
                                   USAGEFAULT, SHCSR_BUSFAULTENA, SHCSR_MEMFAULTENA, SHCSR_USGFAULTENA)

ICSR, VTOR, AIRCR, SCR, CCR = 0x04, 0x08, 0x0C, 0x10, 0x14
SHPR1, SHPR2, SHPR3, SHCSR = 0x18, 0x1C, 0x20, 0x24
CFSR, HFSR, DFSR, MMFAR, BFAR, AFSR = 0x28, 0x2C, 0x30, 0x34, 0x38, 0x3C
CLIDR, CTR, CCSIDR, CSSELR, CPACR = 0x78, 0x7C, 0x80, 0x84, 0x88

SCR_SLEEPONEXIT, SCR_SLEEPDEEP, SCR_SEVONPEND = 1 << 1, 1 << 2, 1 << 4


class Scb(Peripheral):
    """Mapped at 0xE000ED00."""

    @property
    def fpu_enabled(self) -> bool:
        """CP10 and CP11 both allow at least privileged access (CPACR bits 23:20)."""
        return (self.cpacr >> 20) & 0x5 == 0x5

    def reset(self):
        self.scr = 0
        self.cpacr = 0
        self.csselr = 0

    def on_read(self, offset):
        exc = self.chip.exceptions
        if offset == 0x00:
            return self.chip.board.cpuid
        if offset == ICSR:
            active = exc.active[-1] if exc.active else 0
            pending = exc.best_pending() or 0
            value = active | (pending << 12)
            if any(exc.pending[FIRST_IRQ:]):
                value |= 1 << 22
            if exc.pending[PENDSV]:
                value |= 1 << 28
            if exc.pending[SYSTICK]:
                value |= 1 << 26
            if exc.pending[NMI]:
                value |= 1 << 31
            if len(exc.active) == 1:
                value |= 1 << 11  # RETTOBASE: in a handler, returning would reach Thread mode
            return value
        if offset == VTOR:
            return exc.vtor
        if offset == AIRCR:
            return 0xFA050000 | (exc.prigroup << 8)
        if offset == SCR:
            return self.scr
        if offset == CCR:
            return exc.ccr
        if SHPR1 <= offset <= SHPR3:
            first = 4 + (offset - SHPR1)
            return sum(exc.priority[n] << (8 * i) for i, n in enumerate(range(first, first + 4)))
        if offset == SHCSR:
            value = exc.shcsr
            for number, bit in ((MEMMANAGE, 0), (BUSFAULT, 1), (USAGEFAULT, 3), (SVCALL, 7), (PENDSV, 10),
                                (SYSTICK, 11)):
                if number in exc.active:
                    value |= 1 << bit
            for number, bit in ((USAGEFAULT, 12), (MEMMANAGE, 13), (BUSFAULT, 14), (SVCALL, 15)):
                if exc.pending[number]:
                    value |= 1 << bit
            return value
        if offset == CFSR:
            return exc.cfsr
        if offset == HFSR:
            return exc.hfsr
        if offset == MMFAR:
            return exc.mmfar
        if offset == BFAR:
            return exc.bfar
        if offset in (DFSR, AFSR):
            return 0
        if offset == CPACR:
            return self.cpacr
        if offset == CSSELR:
            return self.csselr
        if offset in (CLIDR, CTR, CCSIDR):
            return self._cache_id(offset)
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        chip = self.chip
        exc = chip.exceptions
        if offset == ICSR:
            if value & (1 << 31):
                chip.raise_interrupt(NMI)
            if value & (1 << 28):
                chip.raise_interrupt(PENDSV)
            if value & (1 << 27):
                chip.clear_interrupt(PENDSV)
            if value & (1 << 26):
                chip.raise_interrupt(SYSTICK)
            if value & (1 << 25):
                chip.clear_interrupt(SYSTICK)
            return True
        if offset == VTOR:
            exc.vtor = value & 0xFFFFFF80
            return True
        if offset == AIRCR:
            if value >> 16 != 0x05FA:
                return True  # writes without VECTKEY are ignored
            exc.prigroup = (value >> 8) & 7
            chip.request_stop()
            if value & (1 << 2):
                chip.request_reset("SYSRESETREQ written to AIRCR")
            return True
        if offset == SCR:
            self.scr = value & (SCR_SLEEPONEXIT | SCR_SLEEPDEEP | SCR_SEVONPEND)
            return True
        if offset == CCR:
            exc.ccr = value & 0x3031B | 0x200
            chip.divide_trap_changed()
            l1 = l1_caches(chip)
            if l1 is not None:  # CCR.IC (bit 17) and CCR.DC (bit 16) switch a Cortex-M7's L1 caches (B3.2.8)
                l1.configure(icache=bool(exc.ccr & 1 << 17), dcache=bool(exc.ccr & 1 << 16))
            return True
        if SHPR1 <= offset <= SHPR3:
            first = 4 + (offset - SHPR1)
            for i, n in enumerate(range(first, first + 4)):
                if raw_offset <= (offset + i) < raw_offset + size:
                    exc.set_priority(n, value >> (8 * i))
            chip.request_stop()
            return True
        if offset == SHCSR:
            exc.shcsr = value & (SHCSR_MEMFAULTENA | SHCSR_BUSFAULTENA | SHCSR_USGFAULTENA)
            return True
        if offset == CFSR:
            exc.cfsr &= ~value  # write-one-to-clear
            return True
        if offset == HFSR:
            exc.hfsr &= ~value
            return True
        if offset in (MMFAR, BFAR):
            return True
        if offset == CPACR:
            self.cpacr = value & (0xF << 20)
            chip.set_fpu_enabled(self.fpu_enabled)
            return True
        if offset == CSSELR:
            self.csselr = value & 0xF
            return True
        return False

    def _cache_id(self, offset: int) -> int:
        """CLIDR, CTR and CCSIDR (ARMv7-M ARM B4.8) of a core with L1 caches, from their geometry."""
        spec = next((port for port in self.chip.board.flash_ports if port.core_caches), None)  # (timed or not)
        if spec is None:
            return 0
        if offset == CLIDR:  # separate L1 I and D caches (Ctype1 = 3), LoUU = LoC = 1
            return 0x09000003
        line_words = spec.line_bytes // 4
        log_words = line_words.bit_length() - 1
        if offset == CTR:    # format ARMv7, CWG = DminLine = IminLine = log2(line words), L1Ip PIPT
            return 0x80000000 | log_words << 24 | log_words << 16 | 0b11 << 14 | log_words
        cache = spec.icache if self.csselr & 1 else spec.dcache
        if cache is None:
            return 0
        # CCSIDR: write-through, write-back, read- and write-allocate supported; sets, ways, line size
        return 0xF0000000 | (cache.sets - 1) << 13 | (cache.ways - 1) << 3 | (log_words - 2)


def l1_caches(chip):
    """The flash port whose caches are the core's L1 caches (its timing model), if any."""
    return next((port for port in chip.flash_ports if port.spec.core_caches), None)


# Data cache maintenance by set/way and by address (ARMv7-M ARM B2.2.7, registers at
# 0xE000EF00 + offset): offset -> (by set/way, clean, invalidate).
DCACHE_OPERATIONS = {0x5C: (False, False, True),   # DCIMVAC
                     0x60: (True, False, True),    # DCISW
                     0x64: (False, True, False),   # DCCMVAU
                     0x68: (False, True, False),   # DCCMVAC
                     0x6C: (True, True, False),    # DCCSW
                     0x70: (False, True, True),    # DCCIMVAC
                     0x74: (True, True, True)}     # DCCISW


class ScbExtension(Peripheral):
    """Mapped at 0xE000EF00: STIR, FPCCR/FPCAR/FPDSCR, cache maintenance operations."""

    STIR, FPCCR, FPCAR, FPDSCR = 0x00, 0x34, 0x38, 0x3C

    def on_read(self, offset):
        exc = self.chip.exceptions
        if offset == self.FPCCR:
            return exc.fpccr
        if offset == self.FPCAR:
            return exc.fpcar
        if offset == self.STIR:
            return 0
        if 0x50 <= offset <= 0x78:
            return 0  # cache maintenance operations are write-only
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        exc = self.chip.exceptions
        if offset == self.STIR:
            self.chip.raise_interrupt(FIRST_IRQ + (value & 0x1FF))
            return True
        if offset == self.FPCCR:
            exc.fpccr = (exc.fpccr & ~0xC0000000) | (value & 0xC0000000)
            return True
        if offset == self.FPCAR:
            exc.fpcar = value & ~7
            return True
        if 0x50 <= offset <= 0x78:
            self._cache_maintenance(offset, value)
            return True
        return False

    def _cache_maintenance(self, offset: int, value: int) -> None:
        """Cache maintenance writes: ICIALLU empties the instruction cache; the data cache
        operations clean (write back a dirty line) and/or invalidate one line, by set and way
        (set from bit log2(line bytes), way in the top bits) or by address."""
        flash = l1_caches(self.chip)
        if flash is None:
            return
        if offset == 0x50:    # ICIALLU
            flash.reset_cache(data_side=False)
        elif offset in DCACHE_OPERATIONS and flash.spec.dcache is not None:
            by_set_way, clean, invalidate = DCACHE_OPERATIONS[offset]
            if by_set_way:
                sets, ways = flash.spec.dcache.sets, flash.spec.dcache.ways
                way_shift = 32 - max(1, (ways - 1).bit_length())
                set_shift = flash.spec.line_bytes.bit_length() - 1
                flash.maintain_line((value >> set_shift) & (sets - 1), value >> way_shift if ways > 1 else 0,
                                    clean, invalidate)
            else:
                flash.maintain_address(value, clean, invalidate)


class SystemControlMisc(Peripheral):
    """Mapped at 0xE000E000: ICTR (interrupt controller type) and ACTLR."""

    def on_read(self, offset):
        if offset == 0x04:
            return max(0, (self.chip.exceptions.count - FIRST_IRQ + 31) // 32 - 1)
        return None


class CoreDebug(Peripheral):
    """Mapped at 0xE000EDF0: DHCSR (no debugger halts here) and DEMCR (TRCENA gates DWT/ITM;
    `dwt` is linked in by the builder: dwt.link_trace)."""

    dwt = None
    DHCSR, DCRSR, DCRDR, DEMCR = 0x0, 0x4, 0x8, 0xC
    TRCENA = 1 << 24

    def reset(self):
        self.demcr = self.TRCENA  # a trace probe is attached (see itm.py)

    def on_read(self, offset):
        if offset == self.DHCSR:
            return 0
        if offset == self.DEMCR:
            return self.demcr
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset == self.DEMCR:
            self.demcr = value & 0x010F07F1
            self.dwt.trace_enabled_changed()
            return True
        return offset == self.DHCSR
