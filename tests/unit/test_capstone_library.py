"""timing/capstone_library.py: capstone's C library called without its Python package reads the
library's structures where capstone's own binding reads them, and gives what the package gives."""
import ctypes
import ctypes.util
import random

import capstone
import pytest
from capstone import arm as package_arm

from mcusim.timing import capstone_library as library
from mcusim.timing import lazy_capstone


def _layout(structure) -> list:
    return [(name, getattr(structure, name).offset, getattr(structure, name).size) for name, *_ in structure._fields_]


@pytest.mark.parametrize("mine, theirs", [
    (library.Insn, capstone._cs_insn), (library.Arm, package_arm.CsArm), (library.Operand, package_arm.ArmOp),
    (library.Memory, package_arm.ArmOpMem), (library.Shift, package_arm.ArmOpShift)])
def test_each_structure_is_laid_out_as_capstones_binding_lays_it_out(mine, theirs):
    assert _layout(mine) == _layout(theirs)
    assert ctypes.sizeof(mine) == ctypes.sizeof(theirs) and ctypes.alignment(mine) == ctypes.alignment(theirs)


def test_the_arm_detail_sits_where_capstones_binding_finds_it():
    assert _layout(library.Detail)[:-1] == _layout(capstone._cs_detail)[:-1]
    assert library.Detail.arch.offset == capstone._cs_detail.arch.offset


def test_the_constants_are_capstones():
    for name in ("ARM_CC_INVALID", "ARM_CC_AL", "ARM_OP_REG", "ARM_OP_IMM", "ARM_OP_MEM", "ARM_SFT_INVALID"):
        assert getattr(library, name) == getattr(package_arm, name), name
    for name in ("CS_ARCH_ARM", "CS_MODE_THUMB", "CS_MODE_MCLASS", "CS_OPT_DETAIL", "CS_OPT_ON", "CS_ERR_OK"):
        assert getattr(library, name) == getattr(capstone, name), name
    assert capstone.CS_API_MAJOR == library.MAJOR_VERSION


def _encodings():
    """Every 16-bit encoding, and 32-bit ones at random (seeded) with every first halfword form."""
    chooser = random.Random(15)
    short = [value.to_bytes(2, "little") for value in range(0, 1 << 16)]
    wide = [chooser.randrange(0xE800, 1 << 16).to_bytes(2, "little") + chooser.randrange(1 << 16).to_bytes(2, "little")
            for _ in range(6000)]
    return short, wide


def test_the_cheap_pass_prints_what_the_package_prints():
    mine, theirs = lazy_capstone.disassembler(), lazy_capstone.package_disassembler(False)
    short, wide = _encodings()
    code = b"".join(short[::3]) + b"".join(wide)
    for at in range(0, len(code), 4096):  # (runs: capstone stops at an encoding it does not know)
        chunk = code[at: at + 4096]
        assert list(mine.disasm_lite(chunk, 0x1000 + at)) == list(theirs.disasm_lite(chunk, 0x1000 + at))
    for encoding in short[::5] + wide:
        assert list(mine.disasm_lite(encoding, 0x2000)) == list(theirs.disasm_lite(encoding, 0x2000))


def _operands(insn) -> list:
    return [(op.type, op.reg, op.imm, op.mem.base, op.mem.index, op.mem.disp, op.mem.lshift, op.shift.type,
             op.shift.value, op.subtracted) for op in insn.operands]


def test_the_detail_reads_what_the_package_reads():
    mine, theirs = lazy_capstone.disassembler(detail=True), lazy_capstone.package_disassembler(True)
    short, wide = _encodings()
    compared = 0
    for encoding in short[::7] + wide[::2]:
        found = mine.disasm(encoding, 0x3000)
        expected = list(theirs.disasm(encoding, 0x3000))
        assert len(found) == len(expected)
        for insn, reference in zip(found, expected):
            assert (insn.address, insn.size, insn.bytes, insn.mnemonic, insn.op_str) == (
                reference.address, reference.size, bytes(reference.bytes), reference.mnemonic, reference.op_str)
            assert (insn.cc, insn.update_flags, insn.writeback, insn.post_index) == (
                reference.cc, reference.update_flags, reference.writeback, reference.post_index)
            assert _operands(insn) == _operands(reference)
            assert insn.reg_name(1 + compared % 80) == reference.reg_name(1 + compared % 80)
            raw, count = mine.raw_disasm(encoding, 0x3000, 1)
            try:
                assert mine.regs_access(raw[0]) == tuple(map(tuple, reference.regs_access()))
            finally:
                mine.free(raw, count)
            compared += 1
    assert compared > 10_000


def test_without_the_wheels_library_file_the_packages_library_is_called(monkeypatch):
    monkeypatch.setattr(library, "_shipped_library_path", lambda: None)
    thumb = library.Thumb(library.load_library())
    assert list(thumb.disasm_lite(bytes.fromhex("0844"), 0x100)) == [(0x100, 2, "add", "r0, r1")]


def test_a_library_of_another_major_version_is_refused(monkeypatch):
    monkeypatch.setattr(library, "MAJOR_VERSION", library.MAJOR_VERSION + 1)
    with pytest.raises(ImportError, match="version"):
        library.load_library()


def test_a_damaged_library_file_falls_back_to_the_packages_library(monkeypatch, tmp_path):
    damaged = tmp_path / "libcapstone.so"
    damaged.write_bytes(b"\x7fELF not a library")
    monkeypatch.setattr(library, "_shipped_library_path", lambda: str(damaged))
    thumb = library.Thumb(library.load_library())
    assert list(thumb.disasm_lite(bytes.fromhex("10bd"), 0x200)) == [(0x200, 2, "pop", "{r4, pc}")]


def test_a_library_without_capstones_functions_is_refused(monkeypatch):
    monkeypatch.setattr(library, "_shipped_library_path", lambda: ctypes.util.find_library("c"))
    with pytest.raises(ImportError, match="not capstone's library"):
        library.load_library()


def test_a_disassembler_given_up_closes_its_handle(monkeypatch):
    closed = []
    functions = dict(lazy_capstone._library())
    close = functions["cs_close"]
    functions["cs_close"] = lambda handle: closed.append(handle.contents.value) or close(handle)
    made = library.Thumb(functions, detail=True)
    handle = made.handle
    del made
    assert closed == [handle]
