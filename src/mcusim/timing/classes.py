"""Instruction classes for the power model (powermodels/*.toml `energy_j`): what each
instruction counts as, and how many data words it moves (the SRAM rail's events)."""
from __future__ import annotations

import re

from .cortex_m4 import DSP_PREFIXES, FP_MEMORY, MULTIPLES, MULTIPLY, STORES, base_mnemonic, is_load

ALU, MULTIPLY_CLASS, SIMD, FP, BRANCH, LOAD, STORE = range(7)  # the order of native.CLASS_NAMES
BRANCHES = ("b", "bl", "bx", "blx", "cbz", "cbnz", "tbb", "tbh")
DIVIDES = ("sdiv", "udiv")
_REGISTER_RANGE = re.compile(r"([rsd])(\d+)\s*-\s*[rsd](\d+)")


def _register_words(operands: str) -> int:
    """Words a register list moves: {r4-r7, lr} is 5, {d8-d9} is 4, {s0} is 1."""
    inside = operands[operands.find("{") + 1: operands.rfind("}")] if "{" in operands else ""
    words = 0
    for item in filter(None, (part.strip() for part in inside.split(","))):
        span = _REGISTER_RANGE.fullmatch(item)
        count = int(span.group(3)) - int(span.group(2)) + 1 if span else 1
        words += count * (2 if item.startswith("d") else 1)
    return max(words, 1)


def power_class(insn, mnemonic: str, operands: str) -> tuple[int, int]:
    """(class, data words) of an instruction; `insn` is capstone's detail object or None."""
    name = base_mnemonic(insn) if insn is not None else mnemonic.split(".")[0]
    if name in MULTIPLES or name in ("vpush", "vpop", "vldm", "vldmia", "vldmdb", "vstm", "vstmia", "vstmdb"):
        return (LOAD if name.startswith(("ldm", "pop", "vpop", "vldm")) else STORE), _register_words(operands)
    if name in ("ldrd", "strd"):
        return (LOAD if name == "ldrd" else STORE), 2
    if name in ("vldr", "vstr"):
        return (LOAD if name == "vldr" else STORE), 2 if "d" in operands.split(",")[0] else 1
    if is_load(name):
        return LOAD, 1
    if name in STORES or name.startswith("strex"):
        return STORE, 1
    if name in BRANCHES:
        return BRANCH, 1 if name in ("tbb", "tbh") else 0
    if name.startswith("v") and name not in FP_MEMORY:
        return FP, 0
    if name in MULTIPLY or name in DIVIDES:
        return MULTIPLY_CLASS, 0
    if name.startswith(DSP_PREFIXES) or name in ("ssat", "usat", "clz", "rbit", "rev", "rev16", "revsh"):
        return SIMD if name.startswith(DSP_PREFIXES) else ALU, 0
    return ALU, 0


def packed(klass: int, words: int) -> tuple[int, int, int]:
    """The F_CLASS_A, B and C values of one instruction (21-bit lanes)."""
    lanes = [0] * 9
    lanes[klass] = 1
    lanes[7] = words
    return tuple(lanes[3 * k] | lanes[3 * k + 1] << 21 | lanes[3 * k + 2] << 42 for k in range(3))
