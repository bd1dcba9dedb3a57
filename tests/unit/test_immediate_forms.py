"""A 32-bit encoding new to a run is found in an encoding table by its immediate-free form
(timing/immediate_forms.py): the rows equal those capstone's detail and the Python model give,
on both cores, and a form whose encodings the table holds with different rows is not used."""
import random

import numpy as np
import pytest

from mcusim.timing import m4_descriptors, m7_descriptors, m7_patterns, thumb32_table
from mcusim.timing.cortex_m7 import is_rotated
from mcusim.timing.immediate_forms import FORMS, ROTATED, SELF_BRANCH, FormIndex, immediate_free, immediate_free_array
from test_m4_native_rows import decoders
from test_m7_table import decode as decode_m7
from test_thumb16_table import decoded_alike


WIDE = [form for form in FORMS if form[1] & 0xFFFF >= 0xE800]  # (the 32-bit encodings' forms)


def _members(seed: int, count: int, forms=FORMS) -> list[int]:
    """`count` random encodings of `forms` (each its bytes as a little-endian number): the bits
    outside a form's mask random, registers r0-r7 and SP, LR, PC alike."""
    rng = random.Random(seed)
    return [value | rng.getrandbits(32) & ~mask for mask, value, _ in (rng.choice(forms) for _ in range(count))]


def _other_immediates(numbers: list[int], seed: int) -> list[int]:
    """Each encoding of `numbers` with its immediate's bits drawn afresh (its registers kept)."""
    rng = random.Random(seed)
    out = []
    for number in numbers:
        immediate = next(bits for mask, value, bits in FORMS if number & mask == value)
        out.append(number & ~immediate | rng.getrandbits(32) & immediate)
    return out


def _code(numbers: list[int]) -> bytes:
    return b"".join(number.to_bytes(2 if number <= 0xFFFF else 4, "little") for number in numbers)


def test_both_ways_of_finding_a_form_agree_and_no_two_forms_share_an_encoding():
    rng = random.Random(3)
    numbers = [rng.getrandbits(32) for _ in range(20000)] + _members(4, 20000) + [SELF_BRANCH]
    assert immediate_free_array(np.array(numbers, np.int64)).tolist() == [immediate_free(n) for n in numbers]
    for number in _members(5, 5000):
        assert sum(number & mask == value for mask, value, _ in FORMS) == 1


def test_a_form_keeps_the_registers_and_the_constants_rotation_and_leaves_the_immediate_out():
    number = lambda text: int.from_bytes(bytes.fromhex(text), "little")  # noqa: E731 (bytes as in memory)
    movw = immediate_free(number("40f20100"))  # movw r0, #1
    assert movw == immediate_free(number("41f23420")) >= 0  # movw r0, #0x1234
    assert movw != immediate_free(number("40f20101"))  # movw r1, #1
    add = immediate_free(number("01f10400"))  # add.w r0, r1, #4
    assert add == immediate_free(number("01f1ff00"))  # add.w r0, r1, #0xff
    assert add != immediate_free(number("01f18040"))  # add.w r0, r1, #0x40000000 (a rotated constant)
    assert immediate_free(number("00f000f8")) == immediate_free(number("ffF7feff"))  # bl: any offset
    assert immediate_free(number("00f000b8")) == immediate_free(number("00f002b8")) >= 0  # b.w
    assert immediate_free(number("fff7febf")) == -1  # b.w to itself (a row of its own)
    assert immediate_free(number("00f00080")) != immediate_free(number("40f00080"))  # beq.w, bne.w
    literal = immediate_free(number("5ff80400"))  # ldr.w r0, [pc, #-4] (its read: literal_read's, apart)
    assert literal == immediate_free(number("5ff8ff00")) != immediate_free(number("dff80400"))  # (U kept)
    assert immediate_free(number("0148")) == immediate_free(number("ff48")) != immediate_free(number("0149"))
    assert immediate_free(number("01680000")) == -1 and immediate_free(number("d1f80430")) == -1  # not a form


def test_a_form_the_table_holds_with_different_rows_is_not_used():
    first, second = 0x0000F240, 0x0100F240  # movw r0, #0 and movw r1, #0
    index = FormIndex([first, second, first | 0x00010000], [5, 6, 7])  # (movw r0, #1: another row)
    code = lambda number: number.to_bytes(4, "little")  # noqa: E731
    assert index.place(code(first | 0x00FF0000)) == -1 and index.place(code(second | 0x00FF0000)) == 6
    assert index.place(code(second)[:3]) == -1, "not a whole encoding"


def _expanded(imm12: int) -> int:
    """ThumbExpandImm (ARMv7-M ARM A5.3.2): the constant a modified immediate i:imm3:imm8 encodes."""
    byte = imm12 & 0xFF
    if imm12 >> 10 == 0:
        return (byte, byte * 0x00010001, byte * 0x01000100, byte * 0x01010101)[imm12 >> 8 & 3]
    unrotated, rotation = 0x80 | imm12 & 0x7F, imm12 >> 7
    return (unrotated >> rotation | unrotated << (32 - rotation)) & 0xFFFFFFFF


def test_the_models_rotated_constant_is_the_forms_rotation():
    """The Cortex-M7 model's shifted constant (cortex_m7.is_rotated, read from capstone's value) is
    an i:imm3 of 4 or more, which the form keeps: 0xXY00XY00 is not rotated."""
    for imm12 in range(1 << 12):
        if imm12 >> 10 == 0 and imm12 >> 8 and not imm12 & 0xFF:
            continue  # (a repeated pattern of 0: UNPREDICTABLE)
        number = 0x0000F000 | (imm12 >> 11) << 10 | (imm12 >> 8 & 7) << 28 | (imm12 & 0xFF) << 16  # and r0, r0, #
        assert is_rotated(_expanded(imm12)) == bool(immediate_free(number) & ROTATED), hex(imm12)


@pytest.fixture
def new_process(monkeypatch):
    monkeypatch.setattr(m4_descriptors, "_shared", {})


def test_cortex_m4_rows_found_by_form_equal_capstones_own(tmp_path, new_process, monkeypatch):
    table_code = _members(21, 1500, WIDE)  # (every 16-bit encoding is in a table of its own: thumb16_table)
    fast, _ = decoders(_code(table_code))
    fast.decode(0x1000, 0x1000 + 4 * len(table_code))
    keys, index, distinct = fast._m4.describe_wide()
    thumb32_table.write_table(tmp_path / thumb32_table.FILE_NAME, keys, index, distinct, m4_descriptors.CORE_NAMES)
    monkeypatch.setattr(m4_descriptors, "_shared", {})
    new = _other_immediates(table_code, 22)
    assert len(set(new) - set(keys.tolist())) > 1000, "most are new to the table"
    assert decoded_alike(_code(new), tmp_path, "add_wide", monkeypatch) > 1300, "found by their form"


def test_cortex_m7_rows_found_by_form_equal_capstones_own(tmp_path, monkeypatch):
    table_code = _members(31, 1500)
    monkeypatch.setattr(m7_descriptors, "_met", set())
    _, fast = decode_m7(_code(table_code), tmp_path / "none", monkeypatch)
    fast._m7.use_file(tmp_path / m7_patterns.FILE_NAME)
    fast._m7.write_table()
    found, _ = decode_m7(_code(_other_immediates(table_code, 32)), tmp_path, monkeypatch)
    assert found > 1300, "found by their form"
