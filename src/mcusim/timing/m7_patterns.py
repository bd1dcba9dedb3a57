"""The Cortex-M7 register patterns' descriptors kept on disk from one run to the next, whatever
the image, as pattern_store keeps the Cortex-M4's (the same container, beside it in the decode
store's folder of the model, read when a run first meets a pattern it has not described, each
entry checked and made when first asked for, written merged after a run that described new
ones). An entry is what m7_descriptors renames an encoding of the pattern from (First): the
descriptor row with no ident (each run numbers its own) and the template of the schedule's
encoded row (CortexM7Timing.template), as JSON: the row's head and reads, its writes, and the
register that decides a branch, each register given as its place in the pattern (0 to 63) or by
name (one the pattern keeps: SP, LR, PC, the flags...). Entries repeat few texts (the same
operation under many mnemonics and forms), and each text is read once. A file that cannot be
read or does not check out is ignored: it only saves time, never changes a result.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..machine.native import KIND, KIND_START
from ..machine.native import m7_rows as R
from ..machine.native import m7_schedule as S
from . import pattern_store
from .cortex_m7 import _REGISTER_NAMES, TEMPLATE_PLACE, register_number
from .pattern_store import read_file, write_file
from .register_pattern import RENAMEABLE

FILE_NAME = "m7-patterns.bin"  # beside pattern_store's (decode_store.DecodeStore.pattern_file)
MAGIC, VERSION = b"mcusimR7", 3  # (3: pattern_store's container with a CRC-32, not compressed; keys as text)
LITERAL, WATCHED, WIDE, JUMP = 1, 2, 4, 8  # an entry's flag bits (JUMP: a B, which may branch to itself)
PLACES = 64  # registers a pattern may number
MAX_CYCLES = 1 << 10  # a latency, occupancy or late read in a file's entry
FLAG_BITS = 1 << 12  # m7_schedule's C_FLAGS bits
_CHECKED = [R.D_SIZE, R.D_LITERAL, R.D_SELF_LOOP, R.D_BRANCH, R.D_DIRECT, R.D_STATIC + KIND]  # Patterns.get's
# template_of lists a row's head in this order, its reads right after
assert (S.C_FLAGS, S.C_LATENCY, S.C_OCCUPANCY, S.C_INDEX, S.C_READS, S.C_WRITES, S.C_READ) == tuple(range(7))


class First:
    """What m7_descriptors renames a pattern's encodings from: its first encoding's descriptor
    values (no ident, no deciding register), whether it may read a literal, is a B, is watched;
    the template of its encoded row; the register that decides it, as its place in the pattern
    (or None) else its number (-1: none); and how many registers the pattern must name (its
    highest place + 1)."""

    __slots__ = ("values", "literal", "jump", "watched", "template", "decided_place", "decided_number", "places")

    def __init__(self, values, literal, jump, watched, template, decided_place, decided_number):
        self.values, self.literal, self.jump, self.watched = values, literal, jump, watched
        self.template, self.decided_place, self.decided_number = template, decided_place, decided_number
        self.places = 1 + max([*template[2], -1 if decided_place is None else decided_place], default=-1)


def key_text(pattern: tuple) -> str:
    """A pattern (m7_descriptors': register_pattern's first item and the shifted-constant flag:
    None, a bool, or an immediate's text, which starts with "#") as the file keeps it: the
    Cortex-M4's key and the flag, a tab apart (no text capstone prints holds a tab)."""
    return f"{pattern_store.key_text(pattern[0])}\t{pattern[1]}"


def template_text(first: First) -> str:
    """A First's template and deciding register as the file keeps them."""
    row = first.template[0].tolist()
    reads, writes = row[S.C_READS], row[S.C_WRITES]
    head, written = row[: S.C_READ + 3 * reads], row[S.C_WRITE: S.C_WRITE + 2 * writes]
    for values, places in ((head, [S.C_INDEX, *range(S.C_READ, len(head), 3)]), (written, range(0, len(written), 2))):
        for at in places:
            values[at] = _reference(values[at])
    decided = first.decided_place if first.decided_place is not None else _reference(first.decided_number)
    return json.dumps([head, written, decided], separators=(",", ":"))


def _reference(value: int) -> int | str | None:
    """A register of a template's row as the file names it: its place, or its name (None: none)."""
    if value <= TEMPLATE_PLACE:
        return TEMPLATE_PLACE - value
    return None if value < 0 else _REGISTER_NAMES[value]


def template_of(text: str) -> tuple | None:
    """template_text's (template, deciding register's place or None, else its number) back, the
    registers it names numbered in this process; None where `text` is not one, or a register
    would be numbered beyond m7_schedule.REGISTERS. The row is made from one list, and its
    places noted as its registers are read (a first run reads a template for each pattern new
    to it: numpy's per-call costs were most of its 24 us; docs/performance.md, "Forty-fifth pass")."""
    try:
        head, written, decided = json.loads(text)
        reads, writes = (len(head) - S.C_READ) // 3, len(written) // 2
        if type(head) is not list or type(written) is not list or len(head) != S.C_READ + 3 * reads \
                or len(written) != 2 * writes or not 0 <= reads <= S.MAX_OPERANDS or writes > S.MAX_OPERANDS \
                or head[S.C_READS] != reads or head[S.C_WRITES] != writes:
            return None
        # (the row's head and reads, then zeros up to its writes, checked into one list)
        values = [_bounded(head[S.C_FLAGS], FLAG_BITS - 1), _bounded(head[S.C_LATENCY], MAX_CYCLES),
                  _bounded(head[S.C_OCCUPANCY], MAX_CYCLES, 1),
                  -1 if head[S.C_INDEX] is None else _register(head[S.C_INDEX]), reads, writes]
        for at in range(S.C_READ, len(head), 3):
            values += (_register(head[at]), _bounded(head[at + 1], S.R_EARLY | S.R_LATE | S.R_FLAGS),
                       _bounded(head[at + 2], MAX_CYCLES))
        values += [0] * (S.C_WRITE - len(values))
        for at in range(0, len(written), 2):
            values += (_register(written[at]), _bounded(written[at + 1], S.W_FAST | S.W_FLAGS))
        if decided is None:
            decided_place, decided_number = None, -1
        elif type(decided) is int:
            decided_place, decided_number = _bounded(decided, PLACES - 1), -1
        else:
            decided_place, decided_number = None, _register(decided)
    except (ValueError, TypeError):
        return None
    registers = [S.C_INDEX, *range(S.C_READ, S.C_READ + 3 * reads, 3), *range(S.C_WRITE, S.C_WRITE + 2 * writes, 2)]
    at = [field for field in registers if values[field] <= TEMPLATE_PLACE]  # (template_of_row's, in order)
    row = np.zeros(S.ROW, np.int64)
    row[: len(values)] = values
    return (row, np.array(at, np.int64), [TEMPLATE_PLACE - values[field] for field in at]), decided_place, \
        decided_number


def _bounded(value, highest: int, lowest: int = 0) -> int:
    if type(value) is not int or not lowest <= value <= highest:
        raise ValueError("not a small integer")
    return value


def _register(value) -> int:
    """A template's register: a place (0 to 63) kept marked, or a name the pattern keeps, numbered."""
    if type(value) is int and 0 <= value < PLACES:
        return TEMPLATE_PLACE - value
    if type(value) is str and 0 < len(value) < 16 and not value.startswith("%") and not RENAMEABLE.fullmatch(value):
        number = register_number(value)
        if number < S.REGISTERS:
            return number
    raise ValueError("not a register")


class Patterns(pattern_store.Patterns):
    """A file's entries, each checked and made (a First) when first asked for."""

    def get(self, pattern: tuple) -> First | None:
        place = self._places.get(key_text(pattern))
        if place is None:
            return None
        flags, row = self._flags[place], self.rows[place]
        wide = type(pattern[0][0]) is tuple  # (a 32-bit encoding's form is a pair)
        size, literal, self_loop, branch, direct, kind = row[_CHECKED].tolist()  # (one read: numpy's per field cost more)
        if bool(flags & WIDE) != wide or flags > LITERAL | WATCHED | WIDE | JUMP or size != (4 if wide else 2) \
                or literal or self_loop or branch not in (0, 1) or direct not in (0, 1) or kind != KIND_START:
            return None
        text = self.slots[place]
        made = self._slots.get(text, False)
        if made is False:
            made = self._slots[text] = template_of(text)
        if made is None:
            return None
        return First(row.copy(), bool(flags & LITERAL), bool(flags & JUMP), bool(flags & WATCHED), *made)


EMPTY = Patterns(np.zeros((0, R.DESCRIPTOR), np.int64), np.zeros(0, np.uint8), [], [])


def read_patterns(path: Path) -> Patterns:
    """The file's patterns; none where it is missing, damaged or foreign."""
    found = read_file(path, MAGIC, VERSION, R.DESCRIPTOR)
    return EMPTY if found is None else Patterns(*found)


def write_patterns(path: Path, patterns: dict[tuple, First]) -> None:
    """Write `patterns` with those already in the file, MAX_PATTERNS at most (write_file);
    silently nothing where it cannot be written."""
    found = read_patterns(path)
    entries = ((key_text(pattern), first.values, LITERAL * first.literal | WATCHED * first.watched
                | JUMP * first.jump | WIDE * (type(pattern[0][0]) is tuple), template_text(first))
               for pattern, first in patterns.items())
    write_file(path, (found.rows, found.flags, found.keys, found.slots), entries, MAGIC, VERSION)
