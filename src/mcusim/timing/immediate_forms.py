"""An encoding with its immediate left out, so that an encoding new to a run is found in an
encoding table (timing/thumb32_table.py, timing/m7_table.py) by another of its form with the
same registers and another immediate.

Compiled code writes constants, offsets and branch targets into the encodings it uses most:
MOVW/MOVT, ADD.W/SUB.W/EOR.W with a constant, ADDW/SUBW, BL and B.W, literal loads. Each new
one went through capstone's cheap text, its register pattern and the renamed descriptor (tens
of microseconds of Python; docs/performance.md, "Twenty-ninth pass"). Neither model reads an
immediate (timing/register_pattern.py) but whether a modified immediate is a rotated constant
(the Cortex-M7's early shifter), so an encoding's immediate-free form keeps that instead of
the constant; a literal load's read, which its offset makes, the decoder adds from the bytes
(literal_loads.literal_read). The forms are encodings of the ARMv7-M Architecture Reference
Manual (A5.3 and A6.7): data processing with a modified immediate; ADDW, SUBW, MOVW and MOVT;
BL, B.W and B<c>.W (T4 and T3); LDR (literal) T1 and T2. A branch to itself is left out (it has
a row of its own). An index groups a table's encodings by form and uses a form only where
every encoding of it the table holds has the same row: the table only saves time, never
changes a result (tests/unit/test_immediate_forms.py).
"""
from __future__ import annotations

from bisect import bisect_left

import numpy as np

# (mask, value: the 32-bit encodings of a form, the first halfword in the low 16 bits; its
# immediate's bits, left out)
FORMS = (
    (0x8000_FA00, 0x0000_F000, 0x70FF_0400),  # data processing (modified immediate): i, imm3, imm8
    (0x8000_FBF0, 0x0000_F200, 0x70FF_0400),  # ADDW (T4): i, imm3, imm8
    (0x8000_FBF0, 0x0000_F2A0, 0x70FF_0400),  # SUBW (T4)
    (0x8000_FBF0, 0x0000_F240, 0x70FF_040F),  # MOVW (T3): imm4, i, imm3, imm8
    (0x8000_FBF0, 0x0000_F2C0, 0x70FF_040F),  # MOVT (T1)
    (0xD000_F800, 0xD000_F000, 0x2FFF_07FF),  # BL (T1): S, imm10, J1, J2, imm11
    (0xD000_F800, 0x9000_F000, 0x2FFF_07FF),  # B.W (T4)
    # B<c>.W (T3), one form per condition (1110 and 1111 are other encodings): S, imm6, J1, J2, imm11
    *((0xD000_FBC0, 0x8000_F000 | condition << 6, 0x2FFF_043F) for condition in range(14)),
    (0x0000_FFFF, 0x0000_F85F, 0x0FFF_0000),  # LDR.W (literal, T2), U = 0: imm12
    (0x0000_FFFF, 0x0000_F8DF, 0x0FFF_0000),  # ... U = 1
    (0xFFFF_F800, 0x0000_4800, 0x0000_00FF),  # LDR (literal, T1), 16-bit: imm8
)
MODIFIED = FORMS[0]  # the form whose constant may be rotated
ROTATED = 0x4000_0000  # i:imm3 = 0b0100 (a rotated constant) in a form with the immediate left out
SELF_BRANCH = 0xBFFE_F7FF  # B.W to itself: left out


def immediate_free(number: int) -> int:
    """The immediate-free form of the encoding `number` (its bytes as a little-endian number),
    or -1 where it has none."""
    for mask, value, immediate in FORMS:  # (no two forms share an encoding)
        if number & mask == value:
            if number == SELF_BRANCH:
                return -1
            free = number & ~immediate
            if mask == MODIFIED[0] and _rotated(number):
                free |= ROTATED
            return free
    return -1


def immediate_free_array(numbers: np.ndarray) -> np.ndarray:
    """immediate_free of each of `numbers` (int64)."""
    numbers = numbers.astype(np.int64)
    free = np.full(len(numbers), -1, np.int64)
    for mask, value, immediate in FORMS:  # (no two forms share an encoding)
        match = numbers & mask == value
        free[match] = numbers[match] & ~immediate
        if mask == MODIFIED[0]:
            free[match & _rotated(numbers)] |= ROTATED
    free[numbers == SELF_BRANCH] = -1
    return free


def _rotated(number):
    """Whether a modified immediate's i:imm3 makes it a rotated constant (4 and above: ARMv7-M
    ARM A5.3.2); below, the constant is imm8 or imm8 repeated, never rotated."""
    return ((number >> 7 & 0x8) | (number >> 28 & 0x7)) >= 4


class FormIndex:
    """A table's encodings by immediate-free form: the place (the table's row, or pair) of each
    form all of whose encodings there share one."""

    def __init__(self, keys: np.ndarray, places: np.ndarray):
        free = immediate_free_array(np.asarray(keys, np.int64))
        places = np.asarray(places, np.int64)
        chosen = free >= 0
        free, places = free[chosen], places[chosen]
        order = np.lexsort((places, free))
        free, places = free[order], places[order]
        forms, first, counts = np.unique(free, return_index=True, return_counts=True)
        alike = places[first] == places[first + counts - 1]  # (sorted by place within a form)
        self.forms = forms[alike]  # (int64 arrays, searched by bisection)
        self.places = places[first][alike]

    @classmethod
    def kept(cls, forms: np.ndarray, places: np.ndarray, limit: int) -> "FormIndex | None":
        """The index a table file kept (made when the table was written: building it again
        costs a process a millisecond or two), or None where it does not check out: forms not
        increasing, or a place not below `limit`."""
        forms, places = np.asarray(forms, np.int64), np.asarray(places, np.int64)
        if len(forms) != len(places) or len(forms) and (
                np.any(np.diff(forms) <= 0) or places.min() < 0 or places.max() >= limit):
            return None
        index = cls.__new__(cls)
        index.forms, index.places = forms, places
        return index

    def place(self, code: bytes) -> int:
        """The place of encoding `code`'s form, or -1 (no form, or none the table holds alike, or
        not a whole 16- or 32-bit encoding)."""
        free = immediate_free(int.from_bytes(code, "little")) if len(code) in (2, 4) else -1
        if free < 0:
            return -1
        at = bisect_left(self.forms, free)
        return int(self.places[at]) if at < len(self.forms) and self.forms[at] == free else -1
