"""What decoding keeps for good is mostly left alone by Python's garbage collector: each object
the collector tracks and a decode keeps makes every later full collection longer, and the
collections fall inside decoding (docs/performance.md, "Twenty-third pass"). Cortex-M7 encodings
renamed from their register pattern keep no _Insn (only their encoded row), the Cortex-M7
model's ident keys are tuples of strings, equal operands are one object, and a static row is a
tuple."""
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
    renamed = [ident for ident, info in enumerate(kept) if info is None]  # (renamed keeps no _Insn: only its row)
    described = len(fast._m7._by_shape)  # (from capstone's detail: sets, as describe builds them)
    assert len(renamed) > 2 * described  # most were renamed ...
    infos = [info for info in kept if info is not None]
    tracked = [info for info in infos if any(gc.is_tracked(getattr(info, name)) for name in REGISTER_FIELDS)]
    assert len(tracked) <= described  # ... and the others keep little the collector walks
    assert not any(gc.is_tracked(key) for key in timing._idents)
    assert not any(hasattr(info, "__dict__") for info in infos)  # (slots: one object each)
    issued = timing._issued(renamed[-1])  # (a pipeline left after a renamed one: what pairing reads of it)
    assert issued.ident == renamed[-1] and timing._by_ident[renamed[-1]] is issued


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
