"""The native walk of the encodings the tables hold (machine/native/table_walk.py): it finds
what the tables hold as the Python look-ups do, leaves literal loads and what the tables lack
to the Python walk, and stops at an IT (whose block the Python walk reads in its context).
That the rows it gives are capstone's and the model's is checked where the tables are
(test_thumb16_table.py, test_thumb32_table.py, test_m7_table.py, test_immediate_forms.py)."""
import random

import numpy as np

from mcusim.machine.native.table_walk import (ABSENT, UNRESOLVED, _immediate_free, _may_read_literal, pack_tables,
                                              set_bases, table_walk)
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
    assert rows == [100, 205, 101, 205, UNRESOLVED, ABSENT] and unresolved == 2, "a literal load, one lacking"
    assert offsets == [0, 2, 6, 8, 12, 14] and stop == 16, "stopped at the IT"
    assert _walk(code, tables, 18)[:3] == ([100, 101], [18, 20], 22)
    assert _walk(code[:4], tables)[:3] == ([100], [0], 2), "a 32-bit encoding cut short is left"


def test_a_16_bit_place_of_another_kind_is_left_to_the_python_look_up():
    short = np.full(0xE800, -1, np.int64)
    short[0x2001] = 0  # movs r0, #1, of a kind the walk does not take (the Python look-up's to give)
    tables = set_bases(pack_tables(short, np.array([7], np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                                   FormIndex(np.zeros(0, np.int64), np.zeros(0, np.int64))), 100, 200)
    assert _walk(b"\x01\x20\x02\x20", tables)[0] == [UNRESOLVED, ABSENT]


def test_absent_only_where_the_python_look_up_finds_nothing():
    """ABSENT lets the Python walk describe an encoding without looking it up (Decoder._walk):
    so an encoding is ABSENT exactly where add_wide's search, by its number among the keys and
    then by its immediate-free form (FormIndex.place), finds nothing, and never a literal load."""
    rng = random.Random(12)
    members = _members(13, 3000)
    keys = np.array(sorted(set(rng.sample(members, 1000))), np.int64)
    places = np.array([rng.randrange(50) for _ in keys], np.int64)
    forms = FormIndex(keys, places)
    tables = set_bases(pack_tables(np.zeros(0, np.int64), np.zeros(0, np.int64), keys, places, forms), 0, 0)
    numbers = members + [rng.getrandbits(32) for _ in range(3000)] + [rng.getrandbits(16) for _ in range(3000)]
    absent = 0
    for number in numbers:
        halfword = number & 0xFFFF
        code = number.to_bytes(4, "little")[: 4 if halfword >= 0xE800 else 2]
        if halfword & 0xFF00 == 0xBF00 and halfword & 0xF:
            continue  # (an IT: the walk stops there)
        rows = _walk(code + b"\x00\xbf", tables)[0]
        number = int.from_bytes(code, "little")
        found = number in set(keys.tolist()) or forms.place(code) >= 0
        if _may_read_literal(halfword, len(code)):
            assert rows[0] == UNRESOLVED, code.hex()
        else:
            assert (rows[0] == ABSENT) == (not found), code.hex()
            absent += rows[0] == ABSENT
    assert absent > 1000
