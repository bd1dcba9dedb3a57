"""Apollo3 Blue GPIO (Apollo3 Blue datasheet, "GPIO and Pad Configuration" registers; the
offsets in the board data are those of AmbiqSuite's apollo3.h). Pads 0-31 are the bits of
the *A registers, pads 32-49 the bits of the *B registers."""
from __future__ import annotations

from ..gpio import GpioPort

PADS = 50
# CFGA..CFGG: 4 bits per pad, 8 pads a register: INCFG [0], OUTCFG [2:1], INTD [3]
OUTCFG_PUSH_PULL, OUTCFG_OPEN_DRAIN, OUTCFG_TRISTATE = 1, 2, 3
PADREG_PULL = 1 << 0  # PADREGx: 8 bits per pad, PADnPULL (pull-up) is bit 0


class Apollo3Gpio(GpioPort):
    """A pad whose OUTCFG is push-pull or open drain, or tri-state with its EN bit set, drives
    its WT bit; RDA/RDB read that level for driven pads, the pull-up level for the others.
    WTS*/WTC* and ENS*/ENC* set and clear bits of WT* and EN*. Not modelled: PADKEY locking,
    the pad function select (a pad with an output configuration is taken to be a GPIO), open
    drain shows as driving both levels."""

    def _vector(self, stem: str) -> int:
        """WT, EN or RD as one 50-bit value."""
        return self.get(self.offset_of(stem + "A")) | self.get(self.offset_of(stem + "B")) << 32

    def _set_vector(self, stem: str, value: int) -> None:
        self.set(self.offset_of(stem + "A"), value & 0xFFFFFFFF)
        self.set(self.offset_of(stem + "B"), (value >> 32) & ((1 << (PADS - 32)) - 1))

    def _outcfg(self, pad: int) -> int:
        cfg = self.get(self.offset_of("CFGA") + 4 * (pad // 8))
        return (cfg >> (4 * (pad % 8) + 1)) & 3

    def _driven(self) -> list[int]:
        enabled = self._vector("EN")
        return [pad for pad in range(PADS) if self._outcfg(pad) in (OUTCFG_PUSH_PULL, OUTCFG_OPEN_DRAIN)
                or (self._outcfg(pad) == OUTCFG_TRISTATE and enabled >> pad & 1)]

    def driven_levels(self):
        written = self._vector("WT")
        return {f"GPIO{pad}": written >> pad & 1 for pad in self._driven()}

    def _input(self) -> int:
        written, value = self._vector("WT"), 0
        driven = set(self._driven())
        for pad in range(PADS):
            if pad in driven:
                value |= (written >> pad & 1) << pad
            elif self.get(self.offset_of("PADREGA") + 4 * (pad // 4)) >> (8 * (pad % 4)) & PADREG_PULL:
                value |= 1 << pad
        return value

    def on_read(self, offset):
        if offset in (self.offset_of("RDA"), self.offset_of("RDB")):
            value = self._input()
            return value & 0xFFFFFFFF if offset == self.offset_of("RDA") else value >> 32
        return super().on_read(offset)

    def _set_or_clear(self, offset: int):
        """(register stem, bit shift, set?) of a WTS*/WTC*/ENS*/ENC* register, or None."""
        for stem in ("WT", "EN"):
            for half, shift in (("A", 0), ("B", 32)):
                if offset == self.offset_of(f"{stem}S{half}"):
                    return stem, shift, True
                if offset == self.offset_of(f"{stem}C{half}"):
                    return stem, shift, False
        return None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        found = self._set_or_clear(offset)
        if found:
            stem, shift, setting = found
            current = self._vector(stem)
            self._set_vector(stem, current | value << shift if setting else current & ~(value << shift))
        elif offset in (self.offset_of("RDA"), self.offset_of("RDB")):
            return True  # read-only
        elif not super().on_write(offset, value, raw_offset, size, raw_value):
            return False
        self.update()
        return True
