"""The Cortex-M7 register patterns' descriptors kept on disk from one run to the next, whatever
the image, as pattern_store keeps the Cortex-M4's (the same container, beside it in the decode
store's folder of the model, read when a run first meets a pattern it has not described, each
entry checked and made when first asked for, written merged after a run that described new
ones). An entry is what m7_descriptors renames an encoding of the pattern from: the descriptor
row with no ident (each run numbers its own) and what the schedule reads of the first encoding
(cortex_m7._Insn) with its registers given as their places in the pattern. A file that cannot
be read or does not check out is ignored: it only saves time, never changes a result.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from ..machine.native import KIND, KIND_START
from ..machine.native import m7_rows as R
from .cortex_m7 import _Insn
from . import pattern_store
from .pattern_store import read_file, write_file
from .register_pattern import RENAMEABLE

FILE_NAME = "m7-patterns.bin"  # beside pattern_store's (decode_store.DecodeStore.pattern_file)
MAGIC, VERSION = b"mcusimR7", 1
LITERAL, WATCHED, WIDE, JUMP = 1, 2, 4, 8  # an entry's flag bits (JUMP: a B, which may branch to itself)
SLOT = "%"  # a register named by its place in the pattern: "%0", "%1", ...
_SETS = ("reads", "writes", "early", "fast")
_SINGLE = ("index", "decided_by")
_BOOLS = tuple(f.name for f in dataclasses.fields(_Insn) if f.type in (bool, "bool"))
_FIELDS = {f.name for f in dataclasses.fields(_Insn)} - {"ident"}
MAX_CYCLES = 1 << 10  # a latency, occupancy or late read in a file's entry
_CHECKED = [R.D_SIZE, R.D_LITERAL, R.D_SELF_LOOP, R.D_BRANCH, R.D_DIRECT, R.D_STATIC + KIND]  # Patterns.get's


def key_text(pattern: tuple) -> str:
    """A pattern (m7_descriptors': register_pattern's first item and the shifted-constant flag) as the file keeps it."""
    (form, mnemonic, text), shifted = pattern
    return json.dumps([list(form) if type(form) is tuple else form, mnemonic, text, shifted], separators=(",", ":"))


def insn_text(slotted: _Insn) -> str:
    """A slotted _Insn (registers renamed to SLOT places) as the file keeps it."""
    def ref(name):
        return int(name[1:]) if name is not None and name.startswith(SLOT) else name
    fields = {name: getattr(slotted, name) for name in _FIELDS}
    for name in _SETS:
        fields[name] = sorted((ref(r) for r in fields[name]), key=str)
    for name in _SINGLE:
        fields[name] = ref(fields[name])
    fields["late"] = sorted(([ref(r), cycles] for r, cycles in slotted.late.items()), key=str)
    return json.dumps(fields, separators=(",", ":"), sort_keys=True)


def insn_of(text: str) -> _Insn | None:
    """insn_text's _Insn back, or None where `text` is not one."""
    try:
        fields = json.loads(text)
    except ValueError:
        return None
    if type(fields) is not dict or set(fields) != _FIELDS:
        return None
    try:
        made = {name: fields[name] for name in _FIELDS}
        for name in _SETS:  # (tuples, as m7_descriptors renames them: not walked by the garbage collector)
            made[name] = tuple(dict.fromkeys(_name(r) for r in _list(fields[name])))
        for name in _SINGLE:
            made[name] = None if fields[name] is None else _name(fields[name])
        made["late"] = {_name(r): _cycles(c) for r, c in (_pair(p) for p in _list(fields["late"]))}
        made["latency"], made["occupancy"] = _cycles(fields["latency"]), _cycles(fields["occupancy"])
        if type(made["name"]) is not str or len(made["name"]) > 16 or made["occupancy"] < 1 \
                or not all(type(made[name]) is bool for name in _BOOLS):
            return None
    except ValueError:
        return None
    return _Insn(**made)


def _list(value) -> list:
    if type(value) is not list:
        raise ValueError("not a list")
    return value


def _pair(value) -> list:
    if type(value) is not list or len(value) != 2:
        raise ValueError("not a pair")
    return value


def _name(value) -> str:
    """A register: its place in the pattern (0 to 63) or a name the pattern keeps (SP, LR, PC, the flags...)."""
    if type(value) is int and 0 <= value < 64:
        return f"{SLOT}{value}"
    if type(value) is str and 0 < len(value) < 16 and not value.startswith(SLOT) and not RENAMEABLE.fullmatch(value):
        return value
    raise ValueError("not a register")


def _cycles(value) -> int:
    if type(value) is not int or not 0 <= value <= MAX_CYCLES:
        raise ValueError("not a cycle count")
    return value


class Patterns(pattern_store.Patterns):
    """A file's entries, each checked and made when first asked for, as m7_descriptors keeps a
    pattern's record: (descriptor row, may read a literal, a B, watched, slotted _Insn, None)."""

    def get(self, pattern: tuple) -> tuple | None:
        place = self._places.get(key_text(pattern))
        if place is None:
            return None
        flags, row = self._flags[place], self.rows[place]
        wide = type(pattern[0][0]) is tuple  # (a 32-bit encoding's form is a pair)
        size, literal, self_loop, branch, direct, kind = row[_CHECKED].tolist()  # (one read: numpy's per field cost more)
        if bool(flags & WIDE) != wide or flags > LITERAL | WATCHED | WIDE | JUMP or size != (4 if wide else 2) \
                or literal or self_loop or branch not in (0, 1) or direct not in (0, 1) or kind != KIND_START:
            return None
        slotted = insn_of(self.slots[place])
        if slotted is None:
            return None
        return row.copy(), bool(flags & LITERAL), bool(flags & JUMP), bool(flags & WATCHED), slotted, None


EMPTY = Patterns(np.zeros((0, R.DESCRIPTOR), np.int64), np.zeros(0, np.uint8), [], [])


def read_patterns(path: Path) -> Patterns:
    """The file's patterns; none where it is missing, damaged or foreign."""
    found = read_file(path, MAGIC, VERSION, R.DESCRIPTOR)
    return EMPTY if found is None else Patterns(*found)


def write_patterns(path: Path, patterns: dict[tuple, tuple]) -> None:
    """Write `patterns` (m7_descriptors' records) with those already in the file, MAX_PATTERNS at
    most (write_file); silently nothing where it cannot be written."""
    found = read_patterns(path)
    entries = ((key_text(pattern), values, LITERAL * literal | WATCHED * watched | JUMP * jump
                | WIDE * (type(pattern[0][0]) is tuple), insn_text(slotted))
               for pattern, (values, literal, jump, watched, slotted) in patterns.items())
    write_file(path, (found.rows, found.flags, found.keys, found.slots), entries, MAGIC, VERSION)
