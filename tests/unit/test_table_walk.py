"""The native walk of the encodings the tables hold (machine/native/table_walk.py): it finds
what the tables hold as the Python look-ups do, leaves literal loads and what the tables lack
to the Python walk, and stops at an IT (whose block the Python walk reads in its context).
That the rows it gives are capstone's and the model's is checked where the tables are
(test_thumb16_table.py, test_thumb32_table.py, test_m7_table.py, test_immediate_forms.py)."""
import random

import numpy as np

from mcusim.machine.native.table_walk import (UNRESOLVED, _immediate_free, _may_read_literal, pack_tables, set_bases,
                                              table_walk)
from mcusim.timing.immediate_forms import FORMS, FormIndex, immediate_free
from mcusim.timing.literal_loads import literal_read
from test_immediate_forms import _members


def test_every_literal_read_is_left_to_the_python_walk():
    rng = random.Random(9)
    for halfword in range(1 << 16):
        length = 4 if halfword >= 0xE800 else 2
        for _ in range(4 if length == 4 else 1):
            code = halfword.to_bytes(2, "little") + rng.getrandbits(16).to_bytes(2, "little")[: length - 2]
            assert not literal_read(code) or _may_read_literal(halfword, length), code.hex()


def test_the_native_form_is_immediate_forms_own():
    rng = random.Random(10)
    forms = np.array(FORMS, np.int64).reshape(-1)
    for number in _members(11, 5000) + [rng.getrandbits(32) for _ in range(5000)]:
        assert _immediate_free(forms, number) == immediate_free(number)


def _walk(code: bytes, tables: np.ndarray, offset: int = 0) -> tuple[list, list, int, int]:
    at = np.array([offset, len(code) - 1, 0], np.int64)
    found = np.zeros((2, len(code)), np.int64)
    count = table_walk(np.frombuffer(bytearray(code), np.uint8), tables, at, found)
    return found[0, :count].tolist(), found[1, :count].tolist(), int(at[0]), int(at[2])


def test_the_walk_finds_what_the_tables_hold_and_stops_at_an_it():
    short = np.full(0xE800, -1, np.int64)
    short[0x2001], short[0xBF00], short[0x4801] = 0, 1, 2  # movs r0, #1; nop; ldr r0, [pc, #4]
    kinds = np.array([0, 0, 0], np.int64)
    movw = 0x0000F240 | 0x0001 << 16  # movw r0, #1
    keys, places = np.array([movw], np.int64), np.array([5], np.int64)
    tables = set_bases(pack_tables(short, kinds, keys, places, FormIndex(keys, places)), 100, 200)
    nop, movs, load, it, unknown = b"\x00\xbf", b"\x01\x20", b"\x01\x48", b"\x08\xbf", b"\x02\x20"
    other_movw = (0x0000F240 | 0x00FF << 16).to_bytes(4, "little")  # movw r0, #0xff: found by its form
    code = movs + movw.to_bytes(4, "little") + nop + other_movw + load + unknown + it + movs + nop
    rows, offsets, stop, unresolved = _walk(code, tables)
    assert rows == [100, 205, 101, 205, UNRESOLVED, UNRESOLVED] and unresolved == 2
    assert offsets == [0, 2, 6, 8, 12, 14] and stop == 16, "stopped at the IT"
    assert _walk(code, tables, 18)[:3] == ([100, 101], [18, 20], 22)
    assert _walk(code[:4], tables)[:3] == ([100], [0], 2), "a 32-bit encoding cut short is left"
