"""The encodings of a code range that the encoding tables hold, found in one native call.

The decoder's walk (timing/decoder.py, Decoder._walk) looks each instruction up by its bytes
and IT context. Most of a first run's instructions are encodings `mcusim prepare` described
(timing/thumb16_table.py, thumb32_table.py, m7_table.py), and a few microseconds of Python each
found them (docs/performance.md, "Twenty-ninth pass"). This walks a range from an offset to the
first IT (whose block the Python walk reads in its context) and gives each instruction's
descriptor row where the tables hold its encoding as it is or by its immediate-free form
(timing/immediate_forms.py), else UNRESOLVED for the Python walk to look up (a possible literal
load, whose read the decoder adds; a 16-bit table's place of another kind) or ABSENT where the
tables lack it (the Python walk's look-up in them, the same search, would find nothing: it
describes the encoding at once). A few arguments only: numba's call unpacks each one, and runs
once per IT block.
"""
from __future__ import annotations

import numpy as np

from ...timing.immediate_forms import FORMS, ROTATED, SELF_BRANCH, FormIndex
from ...timing.instruction import PLAIN, UNDECODABLE
from ...timing.thumb16_table import HALFWORDS
from .jit import njit

UNRESOLVED = -(1 << 40)  # a row the walk leaves to the Python walk to look up
ABSENT = UNRESOLVED - 1  # ... and one the tables lack
# The tables' array: a header (each part's length, where the 16-bit table's rows and the other's
# start in the descriptor table), then each halfword's place in the 16-bit table (-1: none), each
# place's kind, the encodings (sorted numbers: 32-bit, and 16-bit ones where there is no 16-bit
# table) and each one's place, immediate_forms.FORMS (mask, value, immediate: 3 each), and the
# immediate-free forms the table holds alike (sorted, FormIndex.forms) and each one's place.
T_SHORT, T_KINDS, T_KEYS, T_FORM_KINDS, T_FORMS, T_SHORT_BASE, T_BASE, T_HEADER = range(8)


def pack_tables(short_places: np.ndarray, short_kinds: np.ndarray, keys: np.ndarray, places: np.ndarray,
                forms) -> np.ndarray:
    """The tables' array table_walk reads (set_bases places its rows); `forms`: the keys'
    immediate_forms.FormIndex."""
    lengths = np.zeros(T_HEADER, np.int64)  # (the bases: set_bases)
    lengths[[T_SHORT, T_KINDS, T_KEYS, T_FORM_KINDS, T_FORMS]] = (len(short_places), len(short_kinds), len(keys),
                                                                  len(FORMS), len(forms.forms))
    return np.concatenate([lengths, short_places, short_kinds, keys, places, np.array(FORMS, np.int64).reshape(-1),
                           forms.forms, forms.places]).astype(np.int64)


def set_bases(tables: np.ndarray, short_base: int, base: int) -> np.ndarray:
    tables[T_SHORT_BASE], tables[T_BASE] = short_base, base
    return tables


@njit
def table_walk(code, tables, at, found):
    """From offset at[0] while below at[1], each instruction of `code` (uint8) up to the first
    IT or one cut short by the end of `code`: its descriptor row into found[0] (a 16-bit one
    by its halfword's place in the 16-bit table, if there is one, whose kind is PLAIN or
    UNDECODABLE; else by its number's place among the keys; ABSENT where the tables have none,
    UNRESOLVED where it may be a literal load or its 16-bit place is of another kind) and its
    offset into found[1]. Returns how many; at[0]: the offset it stopped at, at[2]: how many are
    UNRESOLVED or ABSENT."""
    shorts, kinds_at = T_HEADER, T_HEADER + tables[T_SHORT]
    keys_at = kinds_at + tables[T_KINDS]
    keys_end = places_at = keys_at + tables[T_KEYS]
    form_kinds_at = places_at + tables[T_KEYS]
    forms_at = form_kinds_at + 3 * tables[T_FORM_KINDS]
    forms_end = forms_at + tables[T_FORMS]
    offset, limit, size = at[0], at[1], code.shape[0]
    count = unresolved = 0
    while offset < limit:
        halfword = code[offset] | np.int64(code[offset + 1]) << 8
        length = 4 if halfword >= HALFWORDS else 2
        if offset + length > size or halfword & 0xFF00 == 0xBF00 and halfword & 0xF:  # (cut short; an IT)
            break
        row = UNRESOLVED
        if _may_read_literal(halfword, length):
            pass
        elif length == 2 and tables[T_SHORT]:
            place = tables[shorts + halfword]
            if place < 0:
                row = ABSENT
            elif tables[kinds_at + place] == PLAIN or tables[kinds_at + place] == UNDECODABLE:
                row = tables[T_SHORT_BASE] + place
        else:
            number = halfword if length == 2 else halfword | (code[offset + 2] | np.int64(code[offset + 3]) << 8) << 16
            i = keys_at + np.searchsorted(tables[keys_at: keys_end], number)
            if i < keys_end and tables[i] == number:
                row = tables[T_BASE] + tables[places_at + i - keys_at]
            else:
                free = _immediate_free(tables[form_kinds_at: forms_at], number)
                i = forms_at + np.searchsorted(tables[forms_at: forms_end], free)
                if i < forms_end and tables[i] == free:  # (no form: -1, none of the forms)
                    row = tables[T_BASE] + tables[i + tables[T_FORMS]]
                else:
                    row = ABSENT
        if row == UNRESOLVED or row == ABSENT:
            unresolved += 1
        found[0, count] = row
        found[1, count] = offset
        count += 1
        offset += length
    at[0] = offset
    at[2] = unresolved
    return count


@njit
def _immediate_free(forms, number):
    """immediate_forms.immediate_free of `number`, from its FORMS (3 values each; the first,
    MODIFIED, the one whose constant may be rotated)."""
    for k in range(0, forms.shape[0], 3):
        mask, value, immediate = forms[k], forms[k + 1], forms[k + 2]
        if number & mask == value:
            if number == SELF_BRANCH:
                return -1
            free = number & ~immediate
            if k == 0 and ((number >> 7 & 0x8) | (number >> 28 & 0x7)) >= 4:
                free |= ROTATED
            return free
    return -1


@njit
def _may_read_literal(halfword, length):
    """Whether an encoding whose first halfword is `halfword` may make a PC-relative data read
    (timing/literal_loads.literal_read: LDR, LDRB/H, LDRSB/H, LDRD and VLDR (literal), TBB/TBH)."""
    if length == 2:
        return halfword & 0xF800 == 0x4800
    masked = halfword & 0xFF7F
    return (masked == 0xF85F or masked == 0xF81F or masked == 0xF91F or masked == 0xF83F or masked == 0xF93F
            or masked == 0xE95F or halfword & 0xFF3F == 0xED1F or halfword == 0xE8DF)


def compile_ahead() -> None:
    """table_walk compiled (or loaded) for the kinds of arguments the decoder gives it (mcusim
    prepare: no example it runs has tables)."""
    empty = np.zeros(0, np.int64)
    table_walk(np.zeros(2, np.uint8), pack_tables(empty, empty, empty, empty, FormIndex(empty, empty)),
               np.zeros(3, np.int64), np.zeros((2, 1), np.int64))
