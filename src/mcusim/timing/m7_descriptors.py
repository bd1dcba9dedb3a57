"""Each encoding's descriptor for the Cortex-M7 rows made in native code
(machine/native/m7_rows.py).

A Cortex-M7 row depends on the instruction and on the pipeline the in-sequence schedule left
before it (cortex_m7.py), so it cannot be looked up whole by encoding as the Cortex-M4's is.
What the schedule reads of an instruction is its encoded row (CortexM7Timing._encode, by
ident); what the row adds besides the schedule's cycles is the decoder's static row, the
branch bits and a literal read or a branch to itself. Those are described once per encoding
met, and one native call schedules a whole range and makes its rows. An encoding whose
register pattern was met (timing/register_pattern.py: the same operation on other registers)
is described from the first, from capstone's cheap text alone: the first's descriptor, and its
encoded row's template with this encoding's registers filled in (CortexM7Timing.renamed: no
_Insn is made for it); the pattern keeps whether a modified immediate is a shifted constant,
which the schedule reads (it takes the early shifter). Only the first of a pattern gets
capstone's detail and the model's analysis. The decoder looks each encoding up by its bytes
and IT context (by_key: decoder._walk tracks IT blocks as it does for the Cortex-M4), and one
new to a run in the table of the encodings `mcusim prepare` met (timing/m7_table.py: outside an
IT block by its bytes, inside one by its bytes and condition), before capstone reads it.
"""
from __future__ import annotations

from bisect import bisect_left
from pathlib import Path

import numpy as np

from ..machine.native import STATIC_CYCLES_MASK, STATIC_SHIFT, STATIC_TAKEN
from ..machine.native import m7_rows as R
from ..machine.native.m7_rows import UNDECODABLE_2, UNDECODABLE_4
from ..machine.native.m7_schedule import REGISTERS
from ..machine.native.table_walk import pack_tables, set_bases
from .cortex_m4 import REFILL_ALWAYS, REFILL_IF_TAKEN, base_mnemonic
from . import m7_table
from .cortex_m7 import _REGISTER_NAMES, MODIFIED_IMMEDIATE, is_rotated, register_number
from .growing import with_room
from .instruction import (IT, NO_IT_SLOT, OFFSET, PLAIN, UNDECODABLE, detail_of, it_block_length, lite_runs,
                          slot_condition, takes_it_slot)
from .lazy_capstone import arm as cs_arm
from .literal_loads import LITERAL_LOADS, literal_read
from .m7_patterns import EMPTY, First, Patterns, read_patterns, write_patterns
from .pattern_store import MAX_PATTERNS
from .register_pattern import RENAMEABLE, register_pattern
from .thumb16_table import HALFWORDS

MAX_DESCRIPTORS = 1 << 16  # rows (code running away through data must not grow them without end)
_NONE = np.zeros(0, np.int64)  # (walk_tables' table of 16-bit encodings: none)
_NO_TABLE = (np.zeros((0, R.COMPACT), np.int16), 0, np.zeros((0, 2), np.int32),
             np.zeros((0, R.DESCRIPTOR), np.int64))  # (table_rows where there is no table)
TABLE_ADDRESS = 0x10000000  # where write_table has capstone read each encoding (rows do not depend on it)
_met: set[bytes] = set()  # the encodings this process described outside an IT block (write_table's)
_met_in_it: set[tuple[bytes, int]] = set()  # ... and inside one: (bytes, its slot's condition)


class Descriptors:
    """The descriptors of one Cortex-M7 timing model's encodings, as rows of an int64 table."""

    def __init__(self, timing, instruction_cycles: int, static_row):
        """`static_row(insn)`: the decoder's (row, watched) of an instruction alone."""
        self.timing = timing
        self.static_row = static_row
        self.constants = timing.constants(instruction_cycles)
        # register pattern -> what its encodings are renamed from (m7_patterns.First; a file's
        # or one described in this process), None: not renamed. Not the table's: they outlive _clear.
        self._patterns: dict[tuple, First | None] = {}
        self.file: Path | None = None  # m7_patterns' file of this model, if any
        self._stored: Patterns | None = EMPTY  # its patterns, once read (None: not yet)
        self._learned = False  # patterns described since the file was written
        self._met_table = None  # m7_table's table, once read (False: none)
        self._walk_arrays = None  # the table as walk_tables gives it, once made (False: none)
        self._table_ident: int | None = None  # the ident of m7_table's first encoded row, once made (outlives _clear)
        self._clear()

    def use_file(self, path: Path | None) -> None:
        """Keep the patterns in `path` (m7_patterns): read on the first pattern not known, written
        by save_patterns; the table of encodings met (m7_table) is beside it."""
        if path != self.file:
            self.file, self._stored, self._met_table = path, EMPTY if path is None else None, None
            self._walk_arrays = None
            self._table_ident = None  # (another table's)
            self._clear()  # (rows of its pairs)

    def save_patterns(self) -> None:
        """Write the patterns described since the file was last written (the end of a run)."""
        if self.file is not None and self._learned:
            write_patterns(self.file, {pattern: first for pattern, first in self._patterns.items() if first is not None})
            self._learned = False

    def _clear(self) -> None:
        self.table = np.zeros((256, R.DESCRIPTOR), np.int64)
        self.count = 0
        # each entry: (row, literal loads may read, a B (a branch to itself?), watched), None: not encodable
        self._by_key: dict[tuple, tuple | None] = {}  # (bytes, mnemonic) -> entry
        self.by_key: dict[tuple, tuple] = {}  # (bytes, IT context) -> (row, kind, (mnemonic, operands) if watched)
        self._by_shape: dict[int, tuple | None] = {}  # Instruction.shape -> entry
        self._renamed: dict[tuple, tuple | None] = {}  # (register pattern, registers) -> entry
        self._own: dict[tuple, int] = {}  # (row, literal, branch to itself) -> its own row

    def make_room(self) -> None:
        """Start afresh if the table is full (between ranges: a range's rows stay valid)."""
        if self.count >= MAX_DESCRIPTORS or len(self.by_key) >= MAX_DESCRIPTORS:
            self._clear()

    def add_new(self, key: tuple, length: int, items: list, place: int | None, code: bytes, start: int,
                end: int) -> tuple | None:
        """The decoder's entry of encoding `key` (its bytes and IT context; `length` bytes), new to
        by_key, from capstone's cheap pass over code[: end - start] at `start` (instruction.lite_runs'
        `items`; `place`: its item, None where capstone has none): (its descriptor row, its kind for
        the IT tracking, (mnemonic, operands) if the machine watches it); None as row_of."""
        if place is None or items[place][1] != length:  # (capstone cannot decode it: Unicorn raises the fault)
            entry = (UNDECODABLE_4 if length == 4 else UNDECODABLE_2), UNDECODABLE, None
        else:
            address, _, mnemonic, operands = items[place]
            found = self.row_of(key[0], address, mnemonic, operands, lambda: detail_of(items, place, code, start, end),
                                key[1])
            if found is None:
                return None
            kind = IT if mnemonic.startswith("it") else \
                NO_IT_SLOT if key[1] is not None and not takes_it_slot(key[0]) else PLAIN
            entry = found[0], kind, (mnemonic, operands) if found[1] else None
            if key[1] is None and len(_met) < MAX_DESCRIPTORS:
                _met.add(key[0])
            elif key[1] is not None and len(_met_in_it) < MAX_DESCRIPTORS:
                _met_in_it.add((key[0], slot_condition(key[1])))
        self.by_key[key] = entry
        return entry

    def add_short(self, key: tuple, halfword: int) -> tuple | None:
        """The entry of 16-bit encoding `key` outside an IT block from the table of the encodings
        `mcusim prepare` met (m7_table), or None if it has none (or it is the first half of a
        32-bit one cut short, whose number a 32-bit key may have)."""
        return self.add_wide(key) if halfword < HALFWORDS else None

    def add_wide(self, key: tuple) -> tuple | None:
        """The entry of encoding `key` outside an IT block from the table of the encodings `mcusim
        prepare` met (m7_table), found by its bytes or else by its immediate-free form
        (immediate_forms), or None if it has none: its pair's row (R.PAIR_ROWS on), read in the
        file's arrays (a literal load's copied into a row of its own)."""
        table = self._read_table()
        if not table:
            return None
        keys, pair_of, forms = table[0], table[1], table[5]
        number = int.from_bytes(key[0], "little")
        at = bisect_left(keys, number)
        if at < len(keys) and keys[at] == number:
            pair = int(pair_of[at])
        else:
            pair = forms.place(key[0])
            if pair < 0:
                return None
        is_it = len(key[0]) == 2 and it_block_length(int.from_bytes(key[0], "little")) > 0
        return self._table_entry(key, pair, IT if is_it else PLAIN)

    def add_in_it(self, key: tuple) -> tuple | None:
        """The entry of encoding `key` inside an IT block (its bytes and IT context) from the
        table of the encodings `mcusim prepare` met there, found by its bytes and its slot's
        condition, or None if it has none."""
        table = self._read_table()
        if not table:
            return None
        keys, pair_of = table[6], table[7]
        number = m7_table.in_it_key(key[0], slot_condition(key[1]))
        at = bisect_left(keys, number)
        if at == len(keys) or keys[at] != number:
            return None
        return self._table_entry(key, int(pair_of[at]), PLAIN)

    def _table_entry(self, key: tuple, pair: int, kind: int) -> tuple:
        """by_key's entry of `key`, the table's `pair` (a row of its own where it reads a literal)."""
        row = R.PAIR_ROWS + pair
        literal = literal_read(key[0])  # (the table keeps an encoding only where this is its own)
        entry = self.by_key[key] = (self._own_row(row, literal, False) if literal else row, kind, None)
        return entry

    def _read_table(self):
        """m7_table's table, read once (False where there is none)."""
        if self._met_table is None:
            found = m7_table.read_table(m7_table.table_file(self.file), register_number) if self.file else None
            self._met_table = found if found is not None else False
            if found is not None:  # (its encoded rows get idents of the timing model, filled as m7_rows uses them)
                self._table_ident = self.timing.add_idents(len(found[4]))
        return self._met_table

    def table_rows(self) -> tuple:
        """The last four arguments of m7_rows: m7_table's encoded rows in the file's layout, the
        ident of the first (m7_rows makes each an encoded row as it is first used), its pairs and
        its descriptors (rows from R.PAIR_ROWS on)."""
        table = self._read_table()
        if not table:
            return _NO_TABLE
        return table[4], self._table_ident, table[2], table[3]

    def walk_tables(self) -> np.ndarray | None:
        """The table as machine/native/table_walk reads it (its 16-bit encodings among the
        keys; a pair's row R.PAIR_ROWS + its place); None where there is none."""
        if self._walk_arrays is None:
            table = self._read_table()
            if table:
                self._walk_arrays = set_bases(pack_tables(_NONE, _NONE, table[0], table[1], table[5]), 0, R.PAIR_ROWS)
            else:
                self._walk_arrays = False
        return None if self._walk_arrays is False else self._walk_arrays

    def write_table(self) -> None:
        """Describe each encoding this process met outside an IT block (_met) or inside one
        (_met_in_it) or the table file holds (what an earlier prepare met: a run of this one
        copies the examples' rows it decoded, and finds their encodings in the table) again, as
        the decoder would, alone (after an IT of its condition alone), in a Descriptors of its own
        (this one's register patterns shared), and keep the table of them (m7_table) beside this
        model's patterns, if it has a file (mcusim prepare)."""
        if self.file is None:
            return
        path = m7_table.table_file(self.file)
        kept = m7_table.read_table(path, register_number)  # (checked: each key an encoding of its size)
        met, met_in_it = set(_met), set(_met_in_it)
        if kept is not None:
            met.update(m7_table.encodings(kept[0]))
            met_in_it.update(zip(m7_table.encodings(kept[6]), (kept[6] >> 32 & 15).tolist()))
        fresh = Descriptors(self.timing, int(self.constants[R.K_INSTRUCTION_CYCLES]), self.static_row)
        fresh._patterns, fresh.file, fresh._stored = self._patterns, self.file, self._stored
        keys, rows = [], []
        for code, condition in [(code, None) for code in sorted(met)] + sorted(met_in_it):
            if condition is None:
                context, it = None, b""
            elif condition < m7_table.AL:
                context = (0xBF08 | condition << 4, 1)  # (an IT of one slot)
                it = context[0].to_bytes(2, "little")
            else:
                continue
            whole = it + code
            end = TABLE_ADDRESS + len(whole)
            items = list(lite_runs(whole, TABLE_ADDRESS, end))
            place = len(it) // 2 if len(items) > len(it) // 2 else None  # (its item: after the IT's)
            entry = fresh.add_new((code, context), len(code), items, place, whole, TABLE_ADDRESS, end)
            kinds = (PLAIN, IT) if context is None else (PLAIN,)
            if entry is not None and entry[1] in kinds and entry[2] is None and entry[0] >= 0:
                keys.append(int.from_bytes(code, "little") if context is None else m7_table.in_it_key(code, condition))
                rows.append(entry[0])
        descriptors = fresh.table[rows].reshape(-1, R.DESCRIPTOR)
        m7_table.write_table(path, keys, descriptors, self.timing.encoded[descriptors[:, R.D_IDENT]], _REGISTER_NAMES)

    def row_of(self, code: bytes, address: int, mnemonic: str, op_str: str, detail_of,
               context=None) -> tuple[int, bool] | None:
        """(the descriptor row of encoding `code`, which capstone's cheap pass printed as
        `mnemonic op_str` at `address` (in an IT block: at `context`, as the decoder's keys give
        it), whether the machine watches it); None where its schedule does not encode (too many
        operands or registers) or capstone's detail disagrees. `detail_of()` gives its
        Instruction (capstone's detail), asked for only where its register pattern was not met
        before (timing/register_pattern.py)."""
        key = (code, mnemonic)  # (the rest of the text only adds absolute branch targets)
        entry = self._by_key.get(key, False)
        if entry is False:
            entry = self._by_key[key] = self._new(code, mnemonic, op_str, detail_of, context)
        if entry is None:
            return None
        row, literal, jump, watched = entry
        literal = literal_read(code) if literal else 0
        self_loop = jump and op_str == f"#{address:#x}"
        return (self._own_row(row, literal, self_loop) if literal or self_loop else row), watched

    def _own_row(self, row: int, literal: int, self_loop: bool) -> int:
        """`row` (or the table's pair, R.PAIR_ROWS on) with a literal read or a branch to itself:
        a row of its own (other encodings of a shape share its row)."""
        own = self._own.get((row, literal, self_loop))
        if own is None:
            own = self._own[(row, literal, self_loop)] = self._append()
            if row >= R.PAIR_ROWS:
                _, first, pairs, described = self.table_rows()
                self.table[own] = described[pairs[row - R.PAIR_ROWS, 0]]
                self.table[own, R.D_IDENT] = first + pairs[row - R.PAIR_ROWS, 1]
            else:
                self.table[own] = self.table[row]
            self.table[own, R.D_LITERAL], self.table[own, R.D_SELF_LOOP] = literal, int(self_loop)
        return own

    def _new(self, code: bytes, mnemonic: str, op_str: str, detail_of, context) -> tuple | None:
        """The entry of an encoding new to this table: renamed from the first of its register
        pattern if one was met, else described from capstone's detail."""
        pattern = register_pattern(code, mnemonic, op_str, context)
        if pattern is not None:
            modified = len(code) == 4 and mnemonic.startswith(MODIFIED_IMMEDIATE)
            pattern = ((pattern[0], _shifted_constant(op_str) if modified else None), pattern[1])
            first = self._pattern(pattern[0])
            if first is not None:
                return self._rename(pattern, first)
        insn = detail_of()
        if insn is None or insn.size != len(code) or insn.mnemonic != mnemonic:
            return None
        entry = self._by_shape.get(insn.shape, False)
        if entry is False:
            entry = self._by_shape[insn.shape] = self._describe(insn)
        if pattern is not None and pattern[0] not in self._patterns and len(self._patterns) < MAX_PATTERNS:
            self._patterns[pattern[0]] = self._first(entry, insn, pattern[1])
            self._learned = True
        return entry

    def _pattern(self, pattern: tuple) -> tuple | None:
        """The record of `pattern` met in this process or kept in the file, or None."""
        first = self._patterns.get(pattern)
        if first is None and pattern not in self._patterns:
            if self._stored is None:
                self._stored = read_patterns(self.file)
            first = self._stored.get(pattern) if len(self._stored) else None  # (no file: no key text made)
            if first is not None:
                self._patterns[pattern] = first
        return first

    def _first(self, entry: tuple | None, insn, names: tuple[str, ...]) -> First | None:
        """What the pattern's encodings are renamed from: its first (`entry` of `insn`, naming
        `names` in its text); None if its schedule names a renameable register its text does not
        (then every encoding of the pattern is described from capstone's detail)."""
        if entry is None:
            return None
        row, literal, jump, watched = entry
        info = self.timing.describe(insn)
        if any(RENAMEABLE.fullmatch(name) and name not in names for name in _registers_of(info)):
            return None
        template = self.timing.template(info, names)
        if template is None:
            return None
        values = self.table[row].copy()
        values[[R.D_IDENT, R.D_DECIDED]] = 0
        decided = info.decided_by
        if decided in names:
            return First(values, literal, jump, watched, template, names.index(decided), -1)
        return First(values, literal, jump, watched, template, None, -1 if decided is None else register_number(decided))

    def _rename(self, pattern: tuple, first: First) -> tuple | None:
        """The entry of an encoding of a register pattern met before: the first's with its
        registers renamed in its encoded row (CortexM7Timing.renamed); None where the first names
        a place beyond the pattern's registers (a file's damaged entry)."""
        entry = self._renamed.get(pattern, False)
        if entry is False:
            names = pattern[1]
            entry = None
            if len(names) >= first.places:
                numbers = [register_number(name) for name in names]
                decided = first.decided_number if first.decided_place is None else numbers[first.decided_place]
                ident = self.timing.renamed(first.template, numbers) if decided < REGISTERS else None
                if ident is not None:
                    own = self._append()
                    self.table[own] = first.values
                    self.table[own, R.D_IDENT], self.table[own, R.D_DECIDED] = ident, decided
                    entry = own, first.literal, first.jump, first.watched
            self._renamed[pattern] = entry
        return entry

    def _describe(self, insn) -> tuple | None:
        timing = self.timing
        info = timing.describe(insn)
        decided = -1 if info.decided_by is None else register_number(info.decided_by)
        if not timing.encodable(info) or decided >= REGISTERS:
            return None
        static, watched = self.static_row(insn)
        refill = 0
        if info.branch:  # (CortexM7Timing._as_cost and cost)
            conditional = info.name in ("cbz", "cbnz") or insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)
            refill = REFILL_IF_TAKEN if conditional else REFILL_ALWAYS
            if info.direct and info.decided_by is None:
                refill |= STATIC_TAKEN | min(STATIC_CYCLES_MASK, timing.t["branch_static_taken"]) << STATIC_SHIFT
        row = self._append()
        d = self.table[row]
        d[R.D_IDENT], d[R.D_SIZE], d[R.D_BRANCH], d[R.D_DIRECT] = info.ident, insn.size, info.branch, info.direct
        d[R.D_DECIDED], d[R.D_REFILL] = decided, refill
        d[R.D_STATIC:] = static
        literal = insn.cc in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and base_mnemonic(insn) in LITERAL_LOADS
        return row, literal, insn.mnemonic in ("b", "b.w"), watched

    def _append(self, rows: int = 1) -> int:
        """The first of `rows` new rows (zeros) at the table's end."""
        self.table = with_room(self.table, self.count + rows)
        self.count += rows
        return self.count - rows


def _shifted_constant(op_str: str) -> bool | str | None:
    """Whether the first immediate (not a shift amount) of an operation that may take a modified
    immediate is a shifted constant, which takes the early shifter (as
    CortexM7Timing._shifted_constant reads it from capstone's detail); None where it has none,
    its text where it is not an integer (a pattern of its own)."""
    found = OFFSET.search(op_str)
    if found is None:
        return None
    try:
        return is_rotated(int(found.group()[1:], 0))
    except ValueError:
        return found.group()


def _registers_of(info) -> set[str]:
    """Every register an _Insn names."""
    return {*info.reads, *info.writes, *info.early, *info.late, *info.fast,
            *(name for name in (info.index, info.decided_by) if name is not None)}
