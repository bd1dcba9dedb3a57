"""timing/literal_loads.py reads the PC-relative data reads of an instruction from its encoding
(ARMv7-M ARM A7.7): the address the block hook times each literal load or table read at must be
the one the instruction reads, for every encoding, and nothing else may be taken for one."""
import pytest

from mcusim.machine.native.encoding import LITERAL_INDEX_SHIFT, LITERAL_OFFSET_BIAS, LITERAL_OFFSET_SHIFT
from mcusim.timing.literal_loads import literal_read


def unpack(info: int) -> dict:
    return {"aligned": bool(info & 2), "size": 1 << ((info >> 2) & 3), "accesses": ((info >> 4) & 1) + 1,
            "index": ((info >> LITERAL_INDEX_SHIFT) & 15) - 1,
            "offset": (info >> LITERAL_OFFSET_SHIFT) - LITERAL_OFFSET_BIAS}


def thumb(*halfwords: int) -> bytes:
    return b"".join(h.to_bytes(2, "little") for h in halfwords)


READS = {  # encoding -> (offset, size, accesses, aligned base, index register)
    "ldr r0, [pc, #12]": (thumb(0x4803), (12, 4, 1, True, -1)),
    "ldr.w r1, [pc, #-8]": (thumb(0xF85F, 0x1008), (-8, 4, 1, True, -1)),
    "ldr.w r1, [pc, #4095]": (thumb(0xF8DF, 0x1FFF), (4095, 4, 1, True, -1)),
    "ldrb.w r2, [pc, #1]": (thumb(0xF89F, 0x2001), (1, 1, 1, True, -1)),
    "ldrsb.w r2, [pc, #-3]": (thumb(0xF91F, 0x2003), (-3, 1, 1, True, -1)),
    "ldrh.w r2, [pc, #2]": (thumb(0xF8BF, 0x2002), (2, 2, 1, True, -1)),
    "ldrsh.w r2, [pc, #6]": (thumb(0xF9BF, 0x2006), (6, 2, 1, True, -1)),
    "ldrd r0, r1, [pc, #16]": (thumb(0xE9DF, 0x0104), (16, 4, 2, True, -1)),
    "ldrd r0, r1, [pc, #-16]": (thumb(0xE95F, 0x0104), (-16, 4, 2, True, -1)),
    "vldr d0, [pc, #8]": (thumb(0xED9F, 0x0B02), (8, 8, 1, True, -1)),
    "vldr s0, [pc, #-4]": (thumb(0xED1F, 0x0A01), (-4, 4, 1, True, -1)),
    "tbb [pc, r3]": (thumb(0xE8DF, 0xF003), (0, 1, 1, False, 3)),
    "tbh [pc, r2, lsl #1]": (thumb(0xE8DF, 0xF012), (0, 2, 1, False, 2)),
    "tbb [pc, lr]": (thumb(0xE8DF, 0xF00E), (0, 1, 1, False, 14)),
}


@pytest.mark.parametrize("name", list(READS))
def test_a_pc_relative_read_is_read_from_its_encoding(name):
    code, (offset, size, accesses, aligned, index) = READS[name]
    assert unpack(literal_read(code)) == {"aligned": aligned, "size": size, "accesses": accesses,
                                          "index": index, "offset": offset}


NOT_READS = {
    "ldr r0, [r1]": thumb(0x6808),
    "ldr.w r0, [r1, #8]": thumb(0xF8D1, 0x0008),
    "pld [pc, #4]": thumb(0xF89F, 0xF004),       # LDRB (literal) encoding with Rt = PC: a hint
    "pli [pc, #4]": thumb(0xF99F, 0xF004),
    "tbb [r1, r3]": thumb(0xE8D1, 0xF003),       # a table elsewhere: read through a register
    "adr r0, label": thumb(0xA001),               # PC-relative, but no read
    "vldr d0, [r1, #8]": thumb(0xED91, 0x0B02),
    "ldrex r0, [r1]": thumb(0xE851, 0x0F00),
    "str r0, [sp, #4]": thumb(0x9001),
}


@pytest.mark.parametrize("name", list(NOT_READS))
def test_an_instruction_without_a_pc_relative_read_has_none(name):
    assert literal_read(NOT_READS[name]) == 0


@pytest.mark.parametrize("code", [b"", b"\x9f"])
def test_bytes_short_of_an_instruction_have_no_read(code):
    """Fewer bytes than an instruction (what is left at the end of readable memory) read nothing."""
    assert literal_read(code) == 0
