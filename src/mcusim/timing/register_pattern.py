"""An encoding's register pattern: what capstone printed for it with its general and FP
registers numbered in order of appearance and its immediates (branch targets, offsets,
constants, shift amounts) left out.

Compiled code uses one operation on many registers (`ldr r3, [r2, #4]`, `ldr r0, [r1, #8]`),
and the Cortex-M4 model describes them alike but for which registers they read and write. So
an encoding whose pattern was met is described from the first one met with its registers
renamed (timing/m4_descriptors.py), without capstone's detail or the model's analysis. The
pattern keeps what the model and the decoder's static row read beyond the register names:
the encoding's form bits (as instruction.alike_key), the mnemonic (in an IT block, with
whether its condition is "always" but not which condition it is: both models read only
whether an instruction is conditional, so `addeq` renames `addne`), SP, LR and PC (which the
model treats apart); the Cortex-M4 model reads no immediate. Equal patterns give descriptors
equal up to the renaming: checked on random 16- and 32-bit encodings of the kinds compiled
code uses, with their register fields varied, in and out of IT blocks
(tests/unit/test_register_pattern.py), and at length by scripts/check_register_patterns.py
(every 16-bit encoding, random 32-bit ones, the kit's builds' encodings with their registers
varied, a tenth of them in IT blocks of random conditions: 2,022,085 instructions, none differing).
The Cortex-M7 schedule renames its descriptors by the same patterns (timing/m7_descriptors.py),
with one thing more in the key: whether a modified immediate is a shifted constant, which it
reads (tests/unit/test_m7_native_rows.py).
"""
from __future__ import annotations

import re

from .instruction import AL, CONDITIONS, IMMEDIATE, slot_condition

# r0-r12 (capstone names r9-r12 sb, sl, fp, ip) and the FP registers; not SP, LR or PC
RENAMEABLE = re.compile(r"\b(r1[0-2]|r[0-9]|sb|sl|fp|ip|[sd](?:3[01]|[12][0-9]|[0-9]))\b")
MAX_TEXTS = 1 << 16  # operand texts kept numbered (code running away through data must not grow them without end)
_numbered: dict[str, tuple] = {}  # operand text, immediates left out -> _number's
_CLASS = {**{name: "%r" for name in [f"r{n}" for n in range(13)] + ["sb", "sl", "fp", "ip"]},  # (sb, sl: core)
          **{f"{kind}{n}": f"%{kind}" for kind in "sd" for n in range(32)}}


def register_pattern(code: bytes, mnemonic: str, op_str: str, context=None) -> tuple[tuple, tuple[str, ...]] | None:
    """(the pattern, the registers it numbers in order), or None for an encoding described
    only from capstone's detail. `context`: its IT block's (the IT's halfword, its slot), if
    it is in one."""
    if mnemonic.startswith(("sdiv", "udiv")):  # (their static row holds their registers' numbers)
        return None
    if context is not None:
        mnemonic = _without_condition(mnemonic, slot_condition(context))
    if "#" in op_str:
        op_str = IMMEDIATE.sub("#", op_str)
    numbered = _numbered.get(op_str)  # (most texts recur: r3, [r1, #])
    if numbered is None:
        if len(_numbered) >= MAX_TEXTS:
            _numbered.clear()
        numbered = _numbered[op_str] = _number(op_str)
    if not numbered:
        return None
    if len(code) == 4:  # the branch class's op bits (hw2[15:12]); elsewhere they hold a register or an immediate
        form = (code[1] >> 3, code[3] >> 4 if code[1] >> 3 == 0b11110 and code[3] & 0x80 else -1)
    else:
        form = code[1] >> 3
    return (form, mnemonic, numbered[0]), numbered[1]


def _without_condition(mnemonic: str, condition: int) -> str:
    """`mnemonic` with capstone's suffix of `condition` (not "always") as `?`: `ldreq.w` ->
    `ldr?.w`; as it is where it has no such suffix."""
    if condition >= AL:
        return mnemonic
    name, dot, width = mnemonic.partition(".")
    suffix = CONDITIONS[condition]
    if len(name) <= len(suffix) or not name.endswith(suffix):
        return mnemonic
    return f"{name[:-len(suffix)]}?{dot}{width}"


def _number(op_str: str) -> tuple:
    """(`op_str` with its registers numbered, the registers in order); () for a register range
    ({r4-r7}: its count of registers is in the names) or another text with a minus sign."""
    if "-" in op_str:
        return ()
    parts = RENAMEABLE.split(op_str)  # text, register, text, ..., text
    found = parts[1::2]
    names = tuple(dict.fromkeys(found))
    if len(names) == len(found):  # each register once: its place in the text numbers it
        parts[1::2] = [_CLASS[name] for name in found]
    else:
        parts[1::2] = [_CLASS[name] + str(names.index(name)) for name in found]
    return "".join(parts), names
