"""timing/instruction.py: plain copies of capstone's detail instructions, shared by encoding."""
from capstone import CS_ARCH_ARM, CS_MODE_MCLASS, CS_MODE_THUMB, Cs

from mcusim.timing.instruction import disassemble, disassemble_one, disassemble_run

ADD = bytes.fromhex("0844")      # add r0, r1 (adds outside an IT block)
IT_EQ = bytes.fromhex("08bf")    # it eq
LOAD = bytes.fromhex("51f8040b")  # ldr r0, [r1], #4
SHIFTED = bytes.fromhex("01eb8200")  # add.w r0, r1, r2, lsl #2
POP_PC = bytes.fromhex("10bd")   # pop {r4, pc}


def capstone(code: bytes, address: int):
    cs = Cs(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS)
    cs.detail = True
    return list(cs.disasm(code, address))


def test_an_encoding_inside_an_it_block_is_another_instruction():
    alone = disassemble(ADD, 0x100, 0x102)[0x100]
    governed = disassemble(IT_EQ + ADD, 0x200, 0x204)[0x202]
    assert governed.mnemonic == "addeq" and governed.key != alone.key
    assert governed.cc != alone.cc
    again = disassemble(ADD, 0x300, 0x302)[0x300]  # seen before: shared, at its own address
    assert (again.key, again.mnemonic, again.address) == (alone.key, alone.mnemonic, 0x300)


def test_copies_read_as_capstone_reads():
    code = LOAD + SHIFTED + POP_PC + IT_EQ + ADD
    mine = disassemble(code, 0x1000, 0x1000 + len(code))
    for theirs in capstone(code, 0x1000):
        insn = mine[theirs.address]
        assert (insn.size, insn.bytes, insn.mnemonic, insn.op_str) == (theirs.size, bytes(theirs.bytes),
                                                                       theirs.mnemonic, theirs.op_str)
        assert (insn.cc, insn.update_flags, insn.writeback) == (theirs.cc, theirs.update_flags, theirs.writeback)
        assert [list(registers) for registers in insn.regs_access()] == list(theirs.regs_access())
        assert [(op.type, op.reg, op.imm, op.mem.base, op.mem.index, op.shift.type, op.shift.value)
                for op in insn.operands] == [(op.type, op.reg, op.imm, op.mem.base, op.mem.index, op.shift.type,
                                              op.shift.value) for op in theirs.operands]


def test_undecodable_encodings_are_skipped_and_the_rest_decoded():
    undefined = bytes.fromhex("50b6")  # setend le: not an M-profile instruction, capstone stops at it
    code = ADD + undefined + ADD
    found = disassemble(code, 0x2000, 0x2000 + len(code))
    assert sorted(found) == [0x2000, 0x2004]
    assert [insn.address for insn in disassemble_run(code, 0x2000)] == [0x2000]  # as capstone: up to it
    assert disassemble_one(undefined, 0x2002) is None


def test_an_encoding_of_a_known_shape_is_made_without_capstone_detail(monkeypatch):
    """Two calls to different targets share a shape: the second is copied from the first, with
    its own address, bytes and operand text."""
    from mcusim.timing import instruction
    first_call, second_call = bytes.fromhex("00f0fef8"), bytes.fromhex("00f0f0f8")  # bl to two targets
    first = disassemble(first_call, 0x4000, 0x4004)[0x4000]
    monkeypatch.setattr(instruction, "_detail_disasm", lambda *args: [])  # no detail from here on
    second = disassemble(second_call, 0x5000, 0x5004)[0x5000]
    theirs = capstone(second_call, 0x5000)[0]
    assert second.shape == first.shape and second.key != first.key
    assert (second.address, second.bytes, second.mnemonic, second.op_str) == (0x5000, second_call, theirs.mnemonic,
                                                                            theirs.op_str)
    assert [list(registers) for registers in second.regs_access()] == list(theirs.regs_access())
