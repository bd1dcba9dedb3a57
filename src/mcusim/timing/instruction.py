"""Capstone instructions as plain Python objects, each distinct encoding read out of capstone once.

Reading a capstone detail instruction goes through ctypes on every attribute (operands and
register lists are rebuilt each time), which made decoding new code cost tens of microseconds
an instruction. Here one cheap pass without detail (`disasm_lite`) names every instruction, and
only an encoding not seen before in this process is disassembled with detail and copied into an
`Instruction`. Everything the timing models read depends on the bytes and what capstone printed
for them (the mnemonic carries an IT block's condition, the operands a branch's target), so
that triple is the key and `key` numbers it. The timing models and the decoder memoise their
analysis by `shape`, which numbers what that analysis reads (see Instruction._shape_key): the
encodings of one operation on the same registers with different offsets or targets share it.
An encoding not seen before whose text says it has a known shape (`alike_key`: a call to
another target, a load at another offset) is copied from the first of that shape with its own
address, bytes and text, without capstone's detail (an image has far fewer shapes than
encodings). Such a copy's operands are the first one's: their immediates (a target,
an offset) are not its own, and nothing reads them but a modified immediate, which the key keeps.
"""
from __future__ import annotations

import re

from .cortex_m4 import base_mnemonic
from .cortex_m7 import MODIFIED_IMMEDIATE
from .lazy_capstone import arm, thumb

MAX_KNOWN = 1 << 16  # distinct encodings kept (code running away through data must not grow this without end)
UNDECODABLE, PLAIN, IT, NO_IT_SLOT = -1, 0, 1, 2  # an encoding's kind, for the decoder's IT tracking (decoder._walk)
_known: dict[tuple, "Instruction"] = {}
_register_names: dict[int, str] = {}
_next_key = [0]
_shapes: dict[tuple, int] = {}
_next_shape = [0]
IMMEDIATE = re.compile(r"#[^,\]}!]*")  # an immediate in capstone's operand text
_alike: dict[tuple, "Instruction"] = {}  # alike_key -> an Instruction with it
OFFSET = re.compile(r"(?<!lsl )(?<!lsr )(?<!asr )(?<!ror )#[^,\]}!]*")  # an immediate that is not a shift amount
_SHIFTS = ("lsl", "lsr", "asr", "ror")


def thumb_length(halfword: int) -> int:
    """Byte length of the Thumb instruction whose first halfword is `halfword`."""
    return 4 if (halfword >> 11) in (0b11101, 0b11110, 0b11111) else 2


class _Memory:
    __slots__ = ("base", "index")

    def __init__(self, base: int, index: int):
        self.base, self.index = base, index


class _Shift:
    __slots__ = ("type", "value")

    def __init__(self, type_: int, value: int):
        self.type, self.value = type_, value


class Operand:
    """One capstone operand (capstone.arm.ArmOp), copied (`reg`, `imm` and `mem` read the same
    union as capstone's). Never changed: equal operands are one object (_operand), so the
    Instructions decoding keeps add few objects for Python's garbage collector to walk."""

    __slots__ = ("type", "reg", "imm", "mem", "shift")

    def __init__(self, type_: int, reg: int, imm: int, mem: _Memory, shift: _Shift):
        self.type, self.reg, self.imm, self.mem, self.shift = type_, reg, imm, mem, shift


_operands: dict[tuple, Operand] = {}  # (type, reg, imm, base, index, shift type, shift value) -> the Operand


def _operand(op) -> Operand:
    """The Operand of capstone's `op`: the one made before for equal values."""
    value, shift = op.value, op.shift
    key = (op.type, value.reg, value.imm, value.mem.base, value.mem.index, shift.type, shift.value)
    found = _operands.get(key)
    if found is None:
        if len(_operands) >= MAX_KNOWN:
            _operands.clear()
        found = _operands[key] = Operand(key[0], key[1], key[2], _Memory(key[3], key[4]), _Shift(key[5], key[6]))
    return found


class Instruction:
    """What the timing models and the decoder read of a capstone detail instruction."""

    def __init__(self, key: int, address: int, code: bytes, mnemonic: str, op_str: str, arm, access):
        self.key = key
        self.address = address
        self.size = len(code)
        self.bytes = code
        self.mnemonic = mnemonic
        self.op_str = op_str
        self.cc = arm.cc
        self.update_flags = arm.update_flags
        self.writeback = arm.writeback
        self.operands = tuple(_operand(arm.operands[i]) for i in range(arm.op_count))
        self._access = access  # (registers read, written), or None where capstone gave none
        self.shape = _shape(self)

    def _shape_key(self) -> tuple:
        """All the timing models and the decoder's static row read of an instruction (not its
        address, bytes, branch target or load offset): equal keys are analysed alike."""
        keep_immediate = self.size == 4 and base_mnemonic(self) in MODIFIED_IMMEDIATE  # a shifted constant?
        operands = tuple((op.type, op.reg if op.type == arm.ARM_OP_REG else None,
                          (op.mem.base, op.mem.index) if op.type == arm.ARM_OP_MEM else None, op.shift.type,
                          op.shift.value, op.imm if keep_immediate and op.type == arm.ARM_OP_IMM else None)
                         for op in self.operands)
        access = None if self._access is None else (tuple(self._access[0]), tuple(self._access[1]))
        return (self.size, self.mnemonic, IMMEDIATE.sub("#", self.op_str), self.cc, self.update_flags,
                self.writeback, access, operands)

    def alike(self, key: int, address: int, code: bytes, op_str: str) -> "Instruction":
        """Another encoding of the same shape (alike_key): its own address, bytes and operand
        text; everything the shape covers shared."""
        copy = self.at(address)
        copy.key, copy.bytes, copy.op_str = key, code, op_str
        return copy

    def at(self, address: int) -> "Instruction":
        """The same instruction at `address` (the rest is shared, and never changed)."""
        copy = object.__new__(Instruction)
        copy.__dict__ = dict(self.__dict__)
        copy.address = address
        return copy

    def regs_access(self):
        if self._access is None:
            raise ValueError("capstone gave no register access for this instruction")
        return self._access

    @staticmethod
    def reg_name(register: int) -> str:
        name = _register_names.get(register)
        if name is None:
            name = _register_names[register] = thumb(True).reg_name(register)
        return name

    def __repr__(self) -> str:
        return f"<Instruction 0x{self.address:x}: {self.mnemonic} {self.op_str}>"


def _shape(insn: Instruction) -> int:
    """The number of `insn`'s shape key; never reused, also after the table is emptied."""
    key = insn._shape_key()
    shape = _shapes.get(key)
    if shape is None:
        if len(_shapes) >= MAX_KNOWN:
            _shapes.clear()
        shape = _shapes[key] = _next_shape[0]
        _next_shape[0] += 1
    return shape


def alike_key(code: bytes, mnemonic: str, op_str: str) -> tuple:
    """What capstone's text and an encoding's form say of its shape: its size, the form bits of
    its halfwords (capstone prints some encodings of different forms alike, e.g. a conditional
    and an unconditional B in an IT block, which differ in their register access), the mnemonic
    and the operands with the immediates that are not shift amounts left out (branch targets,
    load and store offsets, 16-bit and unmodified immediates), except for a 32-bit operation
    that may take a modified immediate (kept in the shape), and shifts, whose amount capstone
    may give as an immediate operand. Equal keys have equal shapes: checked on every instruction
    of a spread of the kit's builds (tests/integration/test_instruction_shapes.py), so an
    encoding not seen before whose key is known needs no detail disassembly."""
    form = (code[1] >> 3, code[3] >> 4) if len(code) == 4 else code[1] >> 3
    if mnemonic.startswith(_SHIFTS) or len(code) == 4 and mnemonic.startswith(MODIFIED_IMMEDIATE):
        return form, mnemonic, op_str  # (the prefix test also keeps ADDW, MOVW...: only fewer shared)
    return form, mnemonic, OFFSET.sub("#", op_str)


def known(code: bytes, address: int, mnemonic: str, op_str: str) -> Instruction | None:
    """The Instruction for encoding `code` printed as `mnemonic op_str`, if seen before, at `address`."""
    template = _known.get((code, mnemonic, op_str))
    return template.at(address) if template is not None else None


def _remember(raw, engine) -> Instruction:
    """The Instruction for capstone's cs_insn `raw` (detail on), read straight from capstone's
    structures: made the first time its encoding is seen, else the one made then."""
    code = bytes(raw.bytes[: raw.size])
    mnemonic, op_str = raw.mnemonic.decode("ascii"), raw.op_str.decode("ascii")
    key = (code, mnemonic, op_str)
    template = _known.get(key)
    if template is None:
        template = _keep(key, Instruction(_next_key[0], raw.address, code, mnemonic, op_str,
                                          raw.detail.contents.arch.arm, engine.regs_access(raw)))
        _next_key[0] += 1
        alike = alike_key(code, mnemonic, op_str)
        if alike not in _alike:
            if len(_alike) >= MAX_KNOWN:
                _alike.clear()
            _alike[alike] = template
        return template
    return template.at(raw.address)


def _keep(key: tuple, insn: Instruction) -> Instruction:
    """`insn` as the template of encoding `key` (bytes, mnemonic, operand text)."""
    if len(_known) >= MAX_KNOWN:
        _known.clear()
    _known[key] = insn
    return insn


def _detail_disasm(code: bytes, address: int, count: int = 0):
    """Capstone's disassembly with detail, as Instructions (read straight from the library's
    structures: copying every structure into Python first, as capstone's CsInsn does, is most of
    its cost)."""
    engine = thumb(True)
    insns, found = engine.raw_disasm(code, address, count)
    try:
        return [_remember(insns[i], engine) for i in range(found)]
    finally:
        engine.free(insns, found)


def lite_runs(code: bytes, start: int, end: int):
    """(address, size, mnemonic, op_str) of the instructions of code[: end - start] at `start`, in one
    capstone pass per run of decodable code (capstone stops at an encoding it does not know:
    skip that and go on). Capstone reads what it is given whole before the first item, so it is
    given the bytes up to `end` and the second half of an instruction there, no more."""
    offset = 0
    stop = end - start + 2
    while start + offset < end and offset + 2 <= len(code):
        last = None
        for item in thumb().disasm_lite(code[offset: stop], start + offset):
            if item[0] >= end:
                break
            yield item
            last = item
        if last is None or last[0] + last[1] >= end:
            if last is not None:
                break
            offset += thumb_length(int.from_bytes(code[offset: offset + 2], "little"))
        else:
            offset = last[0] + last[1] - start
            offset += thumb_length(int.from_bytes(code[offset: offset + 2], "little")) if offset + 2 <= len(code) else 2


def disassemble(code: bytes, start: int, end: int) -> dict[int, Instruction]:
    """Instructions of code[: end - start] (the bytes at `start`) by address: capstone's detail
    disassembly of the range, made of known encodings where it can be (capstone stops at an
    encoding it does not know: that is skipped and the rest decoded)."""
    return instructions_of(list(lite_runs(code, start, end)), code, start, end)


def disassemble_run(code: bytes, start: int) -> list[Instruction]:
    """What capstone's detail disassembly of `code` at `start` gives (up to the first encoding it
    does not know), made of known encodings where it can be."""
    items = list(thumb().disasm_lite(code, start))
    found = instructions_of(items, code, start, start + len(code))
    return [found[item[0]] for item in items if item[0] in found]


def instructions_of(items: list, code: bytes, start: int, end: int, copies: bool = True) -> dict[int, Instruction]:
    """The Instructions of `items` (lite_runs' items of code[: end - start] at `start`, in order)
    by address. `copies=False`: an encoding met before gives the Instruction made then, at the
    address it was met at (for a reader of no addresses; its branch target and address agree)."""
    found = {}
    missing = []
    for index, (address, size, mnemonic, op_str) in enumerate(items):
        offset = address - start
        encoding = code[offset: offset + size]
        template = _known.get((encoding, mnemonic, op_str))
        if template is not None:
            found[address] = template.at(address) if copies else template
            continue
        shaped = _alike.get(alike_key(encoding, mnemonic, op_str))
        if shaped is not None:
            found[address] = _keep((encoding, mnemonic, op_str), shaped.alike(_next_key[0], address, encoding, op_str))
            _next_key[0] += 1
        else:
            missing.append(index)
    if missing and not _fill_missing(found, items, missing, code, start):
        _fill_whole(found, items, code, start, end)
    return found


def detail_of(items: list, place: int, code: bytes, start: int, end: int) -> Instruction | None:
    """capstone's detail Instruction of lite_runs' item `place` (of code[: end - start] at
    `start`), read from an IT among the 4 items before it (capstone may read it as open)."""
    begin = next((back for back in range(place - 1, max(-1, place - 5), -1) if items[back][2].startswith("it")), place)
    return instructions_of(items[begin: place + 1], code, start, end, copies=False).get(items[place][0])


def _fill_missing(found: dict, items: list, missing: list[int], code: bytes, start: int) -> bool:
    """Disassemble the unknown encodings with detail, each run of them from the IT instruction
    that may govern its first (an IT block's condition shows in its instructions); False if
    that did not give what the lite pass printed."""
    run_start = 0
    for n, index in enumerate(missing):
        if n + 1 < len(missing) and missing[n + 1] == index + 1 \
                and items[index][0] + items[index][1] == items[index + 1][0]:
            continue  # the run goes on
        first = missing[run_start]
        run_start = n + 1
        begin = first
        for back in range(first - 1, max(-1, first - 5), -1):
            if items[back][0] + items[back][1] != items[back + 1][0]:
                break
            if items[back][2].startswith("it"):
                begin = back
                break
        address = items[begin][0]
        stop = items[index][0] + items[index][1]
        decoded = _detail_disasm(code[address - start: stop - start], address, index - begin + 1)
        for insn, item in zip(decoded, items[begin: index + 1]):
            if (insn.address, insn.size, insn.mnemonic, insn.op_str) != item:
                return False
            if item[0] >= items[first][0]:
                found[insn.address] = insn
    return all(item[0] in found for item in items)


def _fill_whole(found: dict, items: list, code: bytes, start: int, end: int) -> None:
    """The whole range's detail disassembly (the way the decoder always did it) for what is missing."""
    wanted = {item[0] for item in items if item[0] not in found}
    for insn in decodable_runs(_detail_disasm, code, start, end):
        if not wanted:
            break
        if insn.address in wanted:
            found[insn.address] = insn
            wanted.discard(insn.address)


def decodable_runs(disasm, code: bytes, start: int, end: int):
    """Every instruction `disasm(code, address)` gives in code[: end - start] at `start`, one
    pass per run of decodable code (capstone stops at an encoding it does not know: skip it, go on)."""
    offset = 0
    while start + offset < end and offset + 2 <= len(code):
        last = None
        for insn in disasm(code[offset:], start + offset):
            if insn.address >= end:
                break
            yield insn
            last = insn
        if last is None or last.address + last.size >= end:
            if last is not None:
                break
            offset += thumb_length(int.from_bytes(code[offset: offset + 2], "little"))
        else:
            offset = last.address + last.size - start
            offset += thumb_length(int.from_bytes(code[offset: offset + 2], "little")) if offset + 2 <= len(code) else 2


def it_block_length(halfword: int) -> int:
    """How many instructions the IT instruction `halfword` governs (0: not an IT, e.g. a NOP hint)."""
    mask = halfword & 0xF
    if halfword & 0xFF00 != 0xBF00 or mask == 0:
        return 0
    return 4 - ((mask & -mask).bit_length() - 1)


CONDITIONS = ("eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le")  # as capstone prints
AL = 14  # the condition "always", which capstone leaves out


def slot_condition(context: tuple[int, int]) -> int:
    """The condition of the instruction at `context` (the IT's halfword, its slot from 1): the
    IT's first condition, its low bit replaced from the mask for the slots after the first
    (ARMv7-M ARM A7.3.3, ITSTATE)."""
    halfword, slot = context
    first = (halfword >> 4) & 15
    return first if slot <= 1 else (first & 14) | ((halfword >> (5 - slot)) & 1)


_takes_it_slot: dict[bytes, bool] = {}


def takes_it_slot(code: bytes) -> bool:
    """Whether capstone counts encoding `code` as one of an IT block's instructions. It does not
    for some it decodes unconditionally (ARMv8 floating-point, dot-product and other encodings
    not in ARMv7E-M: only data read as code), whose slot then goes to the next instruction. Asked
    of capstone itself: a NOP after the encoding in a one-instruction IT EQ block prints as NOPEQ
    if the encoding took no slot."""
    found = _takes_it_slot.get(code)
    if found is None:
        items = list(thumb().disasm_lite(b"\x08\xbf" + code + b"\x00\xbf", 0))
        found = not (len(items) == 3 and items[2][2] != "nop")
        if len(_takes_it_slot) >= MAX_KNOWN:
            _takes_it_slot.clear()
        _takes_it_slot[code] = found
    return found


def disassemble_one(code: bytes, address: int) -> Instruction | None:
    """The first instruction of `code` at `address`, decoded on its own (no IT context), or None."""
    item = next(thumb().disasm_lite(code, address, 1), None)
    if item is None:
        return None
    insn = known(code[: item[1]], address, item[2], item[3])
    if insn is None:
        insn = next(iter(_detail_disasm(code[: item[1]], address, 1)), None)
    return insn
