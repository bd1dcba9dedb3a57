"""What decoding keeps for good is mostly left alone by Python's garbage collector: each object
the collector tracks and a decode keeps makes every later full collection longer, and the
collections fall inside decoding (docs/performance.md, "Twenty-third pass"). Cortex-M7 encodings
renamed from their register pattern keep their first's _Insn and the renaming (a tuple) until
one is asked for; made, they and a pattern file's records keep their registers in tuples (not sets), the Cortex-M7 model's ident keys are tuples of strings, equal operands are one
object, and a static row is a tuple."""
import gc

from mcusim.timing import decoder as decoder_module
from mcusim.timing.instruction import disassemble
from test_m4_native_rows import BASE
from test_m4_native_rows import decoders as decoders_for
from test_m7_patterns import code_of

REGISTER_FIELDS = ("reads", "writes", "early", "fast", "late")


def test_cortex_m7_renamed_encodings_and_ident_keys_are_not_tracked():
    code = code_of(7, 3000)
    fast, _ = decoders_for(code, "cortex-m7")
    for start in range(0, len(code), 256):
        fast.decode(BASE + start, BASE + min(len(code), start + 256))
    timing = fast.timing
    for _ in range(3):  # (a collection stops tracking a tuple whose items it saw untracked before it)
        gc.collect()
    kept = timing._by_ident
    renamed = [entry for entry in kept if type(entry) is tuple]  # (the first _Insn and its renaming: made if asked)
    described = len(fast._m7._by_shape)  # (from capstone's detail: sets, as describe builds them)
    assert len(renamed) > 2 * described  # most were renamed ...
    assert not any(gc.is_tracked(renaming) for _, renaming in renamed)  # ... and keep one tracked tuple each
    infos = [timing._insn(ident) for ident in range(len(kept))]  # (as a pipeline left after each would make them)
    for _ in range(3):
        gc.collect()
    tracked = [info for info in infos if any(gc.is_tracked(getattr(info, name)) for name in REGISTER_FIELDS)]
    assert len(tracked) <= described  # made, they keep nothing the collector walks either
    assert not any(gc.is_tracked(key) for key in timing._idents)
    assert not any(hasattr(info, "__dict__") for info in infos)  # (slots: one object each)


def test_equal_operands_are_one_object():
    first = disassemble(bytes.fromhex("51f8040b"), 0x1000, 0x1004)[0x1000]   # ldr r0, [r1], #4
    second = disassemble(bytes.fromhex("51f8042b"), 0x2000, 0x2004)[0x2000]  # ldr r2, [r1], #4
    assert (first.op_str, second.op_str) == ("r0, [r1], #4", "r2, [r1], #4")
    assert first.operands[1] is second.operands[1] and first.operands[2] is second.operands[2]  # [r1], #4
    assert first.operands[0] is not second.operands[0]
    assert [first.reg_name(op.reg) for op in (first.operands[0], second.operands[0])] == ["r0", "r2"]


def test_static_rows_are_not_tracked():
    insn = disassemble(bytes.fromhex("01eb8200"), 0x3000, 0x3004)[0x3000]  # add.w r0, r1, r2, lsl #2
    row, _ = decoder_module._static_row(insn)
    gc.collect()
    assert not gc.is_tracked(row)


def test_a_pattern_files_records_are_not_tracked():
    from mcusim.timing.cortex_m7 import _Insn
    from mcusim.timing.m7_patterns import insn_of, insn_text
    slotted = _Insn(name="add", reads={"%0", "%1"}, writes={"%2"}, early={"%1"}, late={"%0": 1}, fast=set())
    made = insn_of(insn_text(slotted))
    gc.collect()
    assert sorted(made.reads) == ["%0", "%1"] and made.late == {"%0": 1}
    assert not any(gc.is_tracked(getattr(made, name)) for name in REGISTER_FIELDS)
