"""The PC-relative data reads an instruction makes, read from its encoding: literal loads
(LDR, LDRB, LDRH, LDRSB, LDRSH, LDRD and VLDR with PC as the base) and the table reads of
TBB/TBH [PC, Rm]. Their address is known before they run, so the block hook times them from
the decode tables (the F_LITERAL field) instead of a memory hook, which would send every load
and store of the program to Unicorn's slow path (docs/timing.md, "Memory timing").

Encodings: ARMv7-M Architecture Reference Manual, A7.7 (LDR (literal) T1/T2, LDRB, LDRH, LDRSB,
LDRSH (literal) T1, LDRD (literal) T1, TBB/TBH T1) and A7.7.231 (VLDR T1/T2).
"""
from __future__ import annotations

from ..machine.native.encoding import LITERAL_INDEX_SHIFT, LITERAL_OFFSET_BIAS, LITERAL_OFFSET_SHIFT


def pack(offset: int, size: int, accesses: int, aligned: bool, index_register: int = -1) -> int:
    """F_LITERAL (packed as machine/native/encoding.py says) of a read at base + offset, base
    being Align(PC, 4) (`aligned`: literal loads) or PC (the table of TBB/TBH), PC the
    instruction's address + 4: `accesses` reads of `size` bytes, 4 bytes apart (LDRD makes two
    word reads, VLDR.64 one of 8 bytes); a table's entry is chosen by `index_register`."""
    return (1 | int(aligned) << 1 | (size.bit_length() - 1) << 2 | (accesses - 1) << 4
            | (index_register + 1) << LITERAL_INDEX_SHIFT | (offset + LITERAL_OFFSET_BIAS) << LITERAL_OFFSET_SHIFT)


LITERAL_LOADS = ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrd", "vldr", "tbb", "tbh")  # the operations encoded below
_SIZES = {0xF85F: 4, 0xF81F: 1, 0xF91F: 1, 0xF83F: 2, 0xF93F: 2}  # LDR, LDRB, LDRSB, LDRH, LDRSH (literal), U masked


def literal_read(code: bytes) -> int:
    """F_LITERAL of the instruction encoded by `code` (2 or 4 bytes), or 0 if it makes no
    PC-relative data read. TBB/TBH read the entry their index register chooses: the block hook
    reads that register when the table branch starts its block (as it does after the bounds
    check's branch), else times a read of the table's first entry."""
    if len(code) == 2:
        if code[1] & 0xF8 == 0x48:  # LDR (literal) T1
            return pack(code[0] * 4, 4, 1, True)
        return 0
    if not code or code[0] & 0xF != 0xF:  # (each 32-bit one below has Rn = PC: most encodings leave here)
        return 0
    first = int.from_bytes(code[:2], "little")
    second = int.from_bytes(code[2:4], "little")
    up = 1 if first & 0x0080 else -1
    masked = first & 0xFF7F
    target = second >> 12
    if masked in _SIZES and (masked == 0xF85F or target != 15):  # (Rt = 15 there: PLD/PLI, hints)
        return pack(up * (second & 0xFFF), _SIZES[masked], 1, True)
    if masked == 0xE95F:  # LDRD (literal) T1, P = 1, W = 0
        return pack(up * (second & 0xFF) * 4, 4, 2, True)
    if first & 0xFF3F == 0xED1F and (second >> 9) & 7 == 0b101:  # VLDR T1 (.64) / T2 (.32), Rn = PC
        return pack(up * (second & 0xFF) * 4, 8 if second & 0x100 else 4, 1, True)
    if first == 0xE8DF and second & 0xFFE0 == 0xF000:  # TBB (H = 0) / TBH (H = 1), Rn = PC
        index = second & 0xF  # (SP or PC as the index: unpredictable, timed at the table's start)
        return pack(0, 2 if second & 0x10 else 1, 1, False, -1 if index in (13, 15) else index)
    return 0
