"""What the decoder's memos assume, checked on every instruction of a spread of the kit's
builds: instructions with equal alike_key have equal shapes (so one not seen before whose key
is known is made without capstone's detail disassembly), only the loads _costed_row names make
a PC-relative read (so literal_read runs for those alone), and the Cortex-M4 model costs an
instruction alike after neighbours it reduces to the same kind."""
import pytest
from elftools.elf.elffile import ELFFile

from mcusim.config import load_core
from mcusim.config.loader import core_timing_table
from mcusim.timing.cortex_m4 import CortexM4Timing, base_mnemonic
from mcusim.timing import instruction
from mcusim.timing.instruction import _detail_disasm, alike_key, decodable_runs, disassemble
from mcusim.timing.literal_loads import LITERAL_LOADS, literal_read

NARROW, WIDE = bytes(2), bytes.fromhex("00f00000")  # (alike_key reads an encoding's size and form bits)
BUILDS = [("mcu-d", "micro_speech-opt"), ("mcu-m", "large-startup"), ("mps2-an386", "bench-dsp"),
          ("mcu-s", "bench-float"), ("mcu-b", "printf-uart"), ("mps2-an500", "dhrystone-like"),
          ("mcu-d", "person_detection-ref")]


def code_sections(path):
    """(bytes, address) of each of the image's executable sections."""
    with open(path, "rb") as handle:
        for section in ELFFile(handle).iter_sections():
            if section["sh_type"] == "SHT_PROGBITS" and section["sh_flags"] & 4:
                yield section.data(), section["sh_addr"]


def instructions(path):
    """Every instruction capstone decodes in the image's executable sections (data among the
    code decodes too: more encodings to check)."""
    for data, start in code_sections(path):
        yield from decodable_runs(_detail_disasm, data, start, start + len(data))


@pytest.mark.parametrize("board,program", BUILDS)
def test_equal_alike_keys_have_equal_shapes_and_literal_reads_are_named_loads(firmware_build, board, program,
                                                                              monkeypatch):
    # every encoding made from capstone's detail: none copied from one decoded before (by other tests too)
    monkeypatch.setattr(instruction, "_known", {})
    monkeypatch.setattr(instruction, "_alike", {})
    shapes = {}
    count = 0
    for insn in instructions(firmware_build / board / f"{program}.elf"):
        count += 1
        key = alike_key(insn.bytes, insn.mnemonic, insn.op_str)
        assert shapes.setdefault(key, insn._shape_key()) == insn._shape_key(), (insn, key)
        if literal_read(insn.bytes):
            assert base_mnemonic(insn) in LITERAL_LOADS, insn
    assert count > 300 and len(shapes) < count  # (keys are shared: the check compared something)


def test_shift_amounts_stay_in_the_key():
    """A register shifted by different amounts is a different shape (capstone keeps the
    amount in the operand), so its key keeps the amount too."""
    assert alike_key(WIDE, "ldr.w", "r2, [r3, r5, lsl #3]") != alike_key(WIDE, "ldr.w", "r2, [r3, r5, lsl #2]")
    assert alike_key(WIDE, "add.w", "r0, r1, r2, lsl #2") != alike_key(WIDE, "add.w", "r0, r1, r2, lsl #3")
    assert alike_key(NARROW, "ldr", "r0, [pc, #0x40]") == alike_key(NARROW, "ldr", "r0, [pc, #0x44]")
    assert alike_key(WIDE, "bl", "#0x8000100") == alike_key(WIDE, "bl", "#0x8002000")
    assert alike_key(WIDE, "orr.w", "r2, r2, #0x1000000") != alike_key(WIDE, "orr.w", "r2, r2, #0xff")


def test_two_encodings_printed_alike_are_told_apart():
    """Inside an IT block capstone prints the conditional B (T1, which writes PC in its register
    access) and the unconditional one (T2, which does not) alike: their keys differ by encoding."""
    it, conditional, unconditional = bytes.fromhex("58bf"), bytes.fromhex("61d5"), bytes.fromhex("dfe0")
    first = disassemble(it + conditional, 0x100, 0x104)[0x102]
    second = disassemble(it + unconditional, 0x200, 0x204)[0x202]
    assert first.mnemonic == second.mnemonic
    assert first.regs_access() != second.regs_access() and first.shape != second.shape



@pytest.mark.parametrize("board,program", BUILDS[:4])
def test_the_cortex_m4_costs_each_neighbour_kind_as_it_costs_each_neighbour(firmware_build, board, program):
    """CortexM4Timing.cost memoises by the instruction's shape and what it reads of the one
    before (_neighbour): each instruction after the one before it and after three others from
    the image costs what _cost gives afresh."""
    table = core_timing_table(load_core("cortex-m4"))
    memoised, fresh = CortexM4Timing(table), CortexM4Timing(table)
    path = firmware_build / board / f"{program}.elf"
    pairs = 0
    for data, start in code_sections(path):
        found = disassemble(data, start, start + len(data))
        ordered = [found[address] for address in sorted(found)]
        for index, insn in enumerate(ordered):
            # the one before it in memory, and three from elsewhere in the image
            neighbours = [ordered[index - 1] if index else None] + [
                ordered[(index * 7919 + k * 104729) % len(ordered)] for k in (1, 2, 3)]
            for previous in neighbours:
                assert memoised.cost(insn, previous) == fresh._cost(insn, previous), (previous, insn)
                pairs += 1
    assert pairs > 300 and len(memoised._costs) < pairs  # (memoised costs were reused: compared something)
