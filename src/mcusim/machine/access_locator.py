"""Finds which instruction of the executing block made an MMIO access.

Unicorn does not bring PC up to date before an MMIO callback (it still holds the block's
start), but it does write the general registers back, so each load/store of the block can
recompute the address it would access. The first instruction after the previous match whose
address range covers the access is the one executing: accesses arrive in program order.
"""
from __future__ import annotations

from ..timing.lazy_capstone import arm as cs_arm, thumb
from .registers import UNICORN_REGISTERS as _REGISTERS

# multiple-register transfers: (lowest address relative to the base, in words per register)
_DESCENDING = ("push", "stmdb", "ldmdb", "vpush", "stmfd", "ldmea")
_MULTIPLE = ("push", "pop", "ldm", "stm", "ldmia", "stmia", "ldmdb", "stmdb", "ldmfd", "stmea", "vpush", "vpop",
             "vldmia", "vstmia", "vldmdb", "vstmdb")


_DECODED: dict[tuple[int, bytes], list] = {}  # (block, its code) -> _decoded's: the same in every machine
_MAX_DECODED = 4096  # blocks kept (a process running many images starts afresh past it)


class AccessLocator:
    def __init__(self, uc, read_memory):
        self.uc = uc
        self.read_memory = read_memory
        self._blocks: dict[tuple[int, int], list] = {}
        self._cursor: tuple[tuple, int, int, int] | None = None  # execution, index, range start, length

    def _decode(self, block: int, size: int) -> list:
        """Per instruction: (address, address function or None, address registers, is_store,
        (register, constant) it loads from a literal or immediate, or None)."""
        key = (block, size)
        if key not in self._blocks:
            self._blocks[key] = [(address, function, registers, is_store, self._constant(constant))
                                 for address, function, registers, is_store, constant
                                 in _decoded(block, self.read_memory(block, size))]
        return self._blocks[key]

    def _constant(self, constant):
        """(register, value) from _decoded's (register, literal address, None) or (register, None, value)."""
        if constant is None:
            return None
        target, literal, value = constant
        if literal is None:
            return target, value
        try:
            return target, int.from_bytes(self.read_memory(literal, 4), "little")
        except Exception:
            return None

    def locate(self, block: int, size: int, execution: tuple, address: int, is_write: bool) -> int | None:
        """PC of the instruction in [block, block+size) that accesses `address` now."""
        entries = self._decode(block, size)
        start = 0
        if self._cursor and self._cursor[0] == execution:
            _, index, low, length = self._cursor
            if low <= address < low + length:  # the next word of the same LDM/STM/LDRD
                return entries[index][0]
            start = index + 1
        read = self.uc.reg_read
        for index in range(start, len(entries)):
            pc, function, registers, is_store, _ = entries[index]
            if function is None or is_store != is_write:
                continue
            low, length = function(read)
            if not low <= address < low + length or self._overwritten_later(entries, index, registers, read):
                continue
            self._cursor = (execution, index, address + 1, low + length - address - 1)
            return pc
        return None

    @staticmethod
    def _overwritten_later(entries, index, registers, read) -> bool:
        """A later instruction loads a constant into one of these address registers, and the
        register already holds it: that load has run, so this earlier access is not the one."""
        for _, _, _, _, constant in entries[index + 1:]:
            if constant and constant[0] in registers and read(_REGISTERS[constant[0]]) == constant[1]:
                return True
        return False


def _decoded(block: int, code: bytes) -> list:
    """AccessLocator._decode's entries for the block at `block` of `code`, with (register,
    literal address, None) or (register, None, value) for the constant each loads: the same in
    every machine of the process (capstone's detailed decode, a tenth of a millisecond a block,
    made once; the literal read per machine)."""
    key = (block, code)
    if key not in _DECODED:
        if len(_DECODED) >= _MAX_DECODED:
            _DECODED.clear()
        entries = []
        for insn in thumb(True).disasm(code, block):
            function, registers = _address_function(insn)
            mnemonic = insn.mnemonic.split(".")[0]
            is_store = mnemonic.startswith(("str", "stm", "push", "vstr", "vstm", "vpush"))
            entries.append((insn.address, function, registers, is_store, _constant_write(insn)))
        _DECODED[key] = entries
    return _DECODED[key]


def _constant_write(insn):
    """`ldr rX, [pc, #n]` (a literal) or `mov(w) rX, #imm`: the register and where its value is."""
    operands = insn.operands
    if len(operands) != 2 or operands[0].type != cs_arm.ARM_OP_REG:
        return None
    target = insn.reg_name(operands[0].reg)
    mnemonic = insn.mnemonic.split(".")[0]
    if mnemonic == "ldr" and operands[1].type == cs_arm.ARM_OP_MEM and insn.reg_name(operands[1].mem.base) == "pc":
        return target, ((insn.address + 4) & ~3) + operands[1].mem.disp, None
    if mnemonic in ("mov", "movw", "movs") and operands[1].type == cs_arm.ARM_OP_IMM:
        return target, None, operands[1].imm & 0xFFFFFFFF
    return None


def _address_function(insn):
    """(function regs -> (start, length) of the memory the instruction touches, its registers)."""
    mnemonic = insn.mnemonic.split(".")[0]
    if mnemonic in _MULTIPLE or mnemonic.rstrip("wb") in _MULTIPLE:
        registers = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
        if mnemonic in ("push", "pop", "vpush", "vpop"):
            base, count = "sp", len(registers)
        else:
            base, count = insn.reg_name(registers[0].reg), len(registers) - 1
        width = 8 if any(insn.reg_name(op.reg).startswith("d") for op in registers) else 4
        length = count * width
        descending = mnemonic in _DESCENDING or mnemonic.endswith("db")
        if base not in _REGISTERS:
            return None, ()
        reg = _REGISTERS[base]
        return (lambda read: ((read(reg) - length) if descending else read(reg), length)), (base,)
    memory = [op for op in insn.operands if op.type == cs_arm.ARM_OP_MEM]
    if not memory:
        return None, ()
    op = memory[0].mem
    base = insn.reg_name(op.base) if op.base else None
    if base not in _REGISTERS:
        return None, ()  # PC-relative literal loads never reach MMIO
    index = insn.reg_name(op.index) if op.index else None
    shift = getattr(op, "lshift", 0) or 0
    displacement = op.disp
    subtracted = bool(getattr(memory[0], "subtracted", False))
    width = _access_width(mnemonic)
    base_reg = _REGISTERS[base]
    index_reg = _REGISTERS.get(index) if index else None
    post_indexed = bool(getattr(insn, "post_index", False))

    def address(read):
        value = read(base_reg)
        if not post_indexed:
            if index_reg is not None:
                offset = read(index_reg) << shift
                value = value - offset if subtracted else value + offset
            value += displacement
        return value & 0xFFFFFFFF, width
    return address, tuple(r for r in (base, index) if r)


def _access_width(mnemonic: str) -> int:
    if mnemonic.startswith(("ldrd", "strd", "ldrexd", "strexd")) or mnemonic.startswith("vldr") or \
            mnemonic.startswith("vstr"):
        return 8
    if mnemonic.startswith(("ldrb", "strb", "ldrsb", "ldrexb", "strexb", "ldab", "ldrbt")):
        return 1
    if mnemonic.startswith(("ldrh", "strh", "ldrsh", "ldrexh", "strexh")):
        return 2
    return 4
