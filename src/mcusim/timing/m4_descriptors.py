"""Each encoding's descriptor for the Cortex-M4 rows made in native code (machine/native/m4_rows.py).

The Cortex-M4 model's cost of an instruction depends on the instruction and on what the one
before it is (cortex_m4.py), and a decode row on nothing else but the bytes (a literal read, a
branch to itself). So each encoding met (its bytes and IT context) is read from capstone and
described once, by the Python model itself: its static row, its Cost with no instruction before
it, and, as register bit masks, what the neighbour rules read of it and of the instruction
before. A range of encodings met before is then one native call, however long. An encoding
whose register pattern was met (timing/register_pattern.py: the same operation on other
registers, at another offset) is described from the first with its registers renamed, from
capstone's cheap text alone; a 16-bit one outside an IT block is found by its halfword in the
table `mcusim prepare` keeps of all of them (timing/thumb16_table.py), and a 32-bit one by its
bytes, or its immediate-free form (timing/immediate_forms.py), in the table it keeps of those it
met (timing/thumb32_table.py).
"""
from __future__ import annotations

from bisect import bisect_left
from pathlib import Path

import numpy as np

from ..machine.native import m4_rows as R
from ..machine.native.table_walk import pack_tables, set_bases
from .cortex_m4 import (FP_REGISTER, base_mnemonic, fp_named, is_load, is_load_store, is_memory, makes_fp_result,
                        pipelines_after_load)
from .growing import with_room
from .immediate_forms import FormIndex
from .instruction import IT, NO_IT_SLOT, PLAIN, UNDECODABLE, detail_of, lite_runs, takes_it_slot
from .lazy_capstone import arm as cs_arm
from .literal_loads import LITERAL_LOADS, literal_read
from .pattern_store import EMPTY, MAX_PATTERNS, Patterns, read_patterns, write_patterns
from .register_pattern import RENAMEABLE, register_pattern
from .thumb16_table import HALFWORDS, read_table, rows_fit, table_file, write_table
from . import thumb32_table

FULL_BITS = 48  # register names a mask holds before make_room starts afresh (63 at most)
MAX_DESCRIPTORS = 1 << 16  # rows and encodings (code running away through data must not grow them without end)
# the core registers' names (r9-r12 as capstone names them, the flags and IT state as the model
# does), given mask bits in this order whenever the table starts afresh: thumb16_table's rows
# hold their masks in these bits
CORE_NAMES = ("pc", *(f"r{n}" for n in range(9)), "sb", "sl", "fp", "ip", "sp", "lr", "cpsr", "itstate")
_NONE = np.zeros(0, np.int64)  # (walk_tables' where a table is missing)
SHORT_ADDRESS = 0x10000000  # where describe_short has capstone read each 16-bit encoding (rows do not depend on it)


class TooManyRegisters(Exception):
    """More distinct register names than a 63-bit mask holds (the decoder then costs in Python)."""


_shared: dict[tuple, "Descriptors"] = {}  # (timing table, instruction cycles) -> its Descriptors


def for_timing(timing, instruction_cycles: int, static_row) -> "Descriptors":
    """The process's Descriptors for a Cortex-M4 model with `timing`'s table: what describes an
    encoding for one machine does for the next of the same core (a sweep, a test session)."""
    key = (tuple(sorted(timing.t.items())), instruction_cycles)
    found = _shared.get(key)
    if found is None:
        found = _shared[key] = Descriptors(timing, instruction_cycles, static_row)
    return found


class Descriptors:
    """The descriptors of one Cortex-M4 timing table's encodings, as rows of an int64 table."""

    def __init__(self, timing, instruction_cycles: int, static_row):
        """`static_row(insn)`: the decoder's (row, watched) of an instruction alone."""
        self.timing = timing
        self.static_row = static_row
        t = timing.t
        self._core_bits: dict[str, int] = {}  # register name -> its bit in D_ADDRESS and D_WRITES
        self._fp_bits: dict[str, int] = {}    # s/d-named register -> its bit in D_FP_READS, D_FP_WRITES
        self.constants = np.zeros(R.CONSTANTS, np.int64)
        self.constants[R.C_IT_FOLDED] = t["it_folded"]
        self.constants[R.C_PIPELINE_SAVING] = t["load"] - t["load_pipelined"]
        self.constants[R.C_ADDRESS_DEPENDENCY] = t["address_dependency"]
        self.constants[R.C_FP_RESULT_DEPENDENCY] = t["fp_result_dependency"]
        self.constants[R.C_INSTRUCTION_CYCLES] = instruction_cycles
        self._mask_fields = tuple(zip(R.D_MASKS, (self._core_bits, self._core_bits, self._fp_bits, self._fp_bits)))
        # register pattern -> (its descriptor, masks 0; may read a literal; watched; _slots),
        # None: not renamed (a register outside its text). Not the table's: they outlive make_room.
        self._patterns: dict[tuple, tuple | None] = {}
        self.file: Path | None = None  # pattern_store's file of this model, if any
        self._stored: Patterns | None = EMPTY  # its patterns, once read (None: not yet)
        self._learned = False  # patterns described since the file was written
        self._short: tuple | None = None  # thumb16_table's (index, rows, kinds: _short_table), once read
        self._short_read = True
        self._wide: tuple | None = None  # thumb32_table's (encodings, their rows' places, rows), once read
        self._walk_arrays = None  # both tables as walk_tables gives them, once made (False: neither)
        self._wide_read = True
        self._wide_met: set[bytes] = set()  # 32-bit encodings described outside an IT block (describe_wide)
        self._clear()

    def use_file(self, path: Path | None) -> None:
        """Keep the patterns in `path` (pattern_store): read on the first encoding not known,
        written by save_patterns."""
        if path != self.file:
            self.file, self._stored = path, EMPTY if path is None else None
            self._short, self._short_read, self._short_base = None, path is None, None
            self._wide, self._wide_read, self._wide_base = None, path is None, None
            self._walk_arrays = None

    def save_patterns(self) -> None:
        """Write the patterns described since the file was last written (the end of a run)."""
        if self.file is not None and self._learned:
            write_patterns(self.file, {p: e for p, e in self._patterns.items() if e is not None})
            self._learned = False

    def _clear(self) -> None:
        """Forget every row and the register bits their masks use (the patterns keep names)."""
        self._core_bits.clear()
        self._fp_bits.clear()
        self.constants[R.C_PC_BIT] = self._mask(["pc"], self._core_bits)
        self._mask(CORE_NAMES, self._core_bits)
        self.table = np.zeros((256, R.DESCRIPTOR), np.int64)
        self.count = 0
        self._short_base: int | None = None  # where thumb16_table's rows start in table, once placed
        self._wide_base: int | None = None  # where thumb32_table's rows start in table, once placed
        self.by_key: dict[tuple, tuple] = {}  # (bytes, IT context) -> (row, kind, (mnemonic, operands) if watched)
        self._by_shape: dict[int, tuple] = {}  # Instruction.shape -> (row, watched)
        self._undecodable: dict[int, int] = {}  # length -> the row of an encoding capstone cannot decode
        self._renamed: dict[tuple, int] = {}  # (register pattern, names) -> row

    def add(self, key: tuple, insn, length: int) -> tuple:
        """The entry of encoding `key` (its bytes and IT context), which capstone decoded as `insn`
        at its own address (None: it could not)."""
        if insn is None:
            row = self._undecodable.get(length)
            if row is None:
                row = self._undecodable[length] = self._append()
                self.table[row, R.D_SIZE] = length
            entry = self.by_key[key] = (row, UNDECODABLE, None)
            return entry
        row, watched = self._shape_row(insn)
        literal = insn.cc in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and base_mnemonic(insn) in LITERAL_LOADS
        pattern = register_pattern(key[0], insn.mnemonic, insn.op_str, key[1])
        if pattern is not None and pattern[0] not in self._patterns and len(self._patterns) < MAX_PATTERNS:
            slots = self._slots(row, pattern[1])
            values = self.table[row].copy()
            values[list(R.D_MASKS)] = 0
            self._patterns[pattern[0]] = (values, literal, watched, slots) if slots is not None else None
            self._renamed[pattern] = row
            self._learned = True
        return self._entry(key, row, insn.mnemonic, insn.op_str, insn.address, literal, watched)

    def add_new(self, key: tuple, length: int, items: list, place: int | None, code: bytes, start: int,
                end: int) -> tuple:
        """The entry of encoding `key` (`length` bytes), new to this table, from capstone's cheap
        pass over code[: end - start] at `start` (instruction.lite_runs' `items`; `place`: its item,
        None where capstone has none): renamed from its register pattern if one was met, else
        from capstone's detail, read from an IT among the 4 items before it (capstone may read
        it as open), and the model's description. TooManyRegisters where a mask is full."""
        if place is None or items[place][1] != length:
            return self.add(key, None, length)
        if length == 4 and key[1] is None and len(self._wide_met) < MAX_DESCRIPTORS:
            self._wide_met.add(key[0])
        address, _, mnemonic, operands = items[place]
        entry = self.add_renamed(key, address, mnemonic, operands)
        if entry is None:
            insn = detail_of(items, place, code, start, end)
            entry = self.add(key, insn if insn is not None and insn.size == length else None, length)
        return entry

    def add_short(self, key: tuple, halfword: int) -> tuple | None:
        """The entry of 16-bit encoding `key` outside an IT block from the file's table of every
        16-bit encoding (thumb16_table), or None if it has none (or it is left out there). The
        table's rows go into this table, one block, the first time one is used after _clear."""
        short = self._short_table()
        if short is None:
            return None
        index, rows, kinds, _ = short
        place = int(index[halfword]) if halfword < HALFWORDS else -1  # (else the first half of a 32-bit one cut short)
        if place < 0:
            return None
        entry = self.by_key[key] = (self._with_literal(self._short_placed() + place, key[0]), kinds[place], None)
        return entry

    def entry_alone(self, code: bytes) -> tuple | None:
        """The entry of encoding `code` outside an IT block if this table or an encoding table
        has one (the walk finds most encodings in the tables without making entries), else None."""
        key = (code, None)
        entry = self.by_key.get(key)
        if entry is None:
            entry = self.add_short(key, code[0] | code[1] << 8) if len(code) == 2 else self.add_wide(key)
        return entry

    def _short_table(self) -> tuple | None:
        """thumb16_table's (index, rows, each row's kind as a list and as an array), read once."""
        if not self._short_read:
            self._short_read = True
            found = read_table(table_file(self.file), CORE_NAMES)
            if found is not None:
                index, rows = found
                kinds = np.where(rows[:, R.D_DECODABLE] == 0, UNDECODABLE, np.where(rows[:, R.D_IT] == 1, IT, PLAIN))
                self._short = (index, rows, kinds.tolist(), kinds)
        return self._short

    def _short_placed(self) -> int:
        """Where thumb16_table's rows start in this table: one block, the first time one is used
        after _clear."""
        if self._short_base is None:
            self._short_base = self._place(self._short[1])
        return self._short_base

    def _place(self, rows: np.ndarray) -> int:
        """Where `rows`, appended to this table as one block, start."""
        base = self._append(len(rows))
        self.table[base: self.count] = rows
        return base

    def _wide_table(self) -> tuple | None:
        """thumb32_table's (encodings, their rows' places, rows, FormIndex), read once."""
        if not self._wide_read:
            self._wide_read = True
            self._wide = thumb32_table.read_table(thumb32_table.table_file(self.file), CORE_NAMES)
        return self._wide

    def _wide_placed(self) -> int:
        """Where thumb32_table's rows start in this table (as _short_placed)."""
        if self._wide_base is None:
            self._wide_base = self._place(self._wide[2])
        return self._wide_base

    def walk_tables(self) -> np.ndarray | None:
        """Both tables as machine/native/table_walk reads them, their rows placed in this table;
        None where there is neither."""
        if self._walk_arrays is None:
            short, wide = self._short_table(), self._wide_table()
            self._walk_arrays = pack_tables(short[0] if short else _NONE, short[3] if short else _NONE,
                                            wide[0] if wide else _NONE, wide[1] if wide else _NONE,
                                            wide[3] if wide else FormIndex(_NONE, _NONE)) if short or wide else False
        if self._walk_arrays is False:
            return None
        return set_bases(self._walk_arrays, self._short_placed() if self._short else 0,
                         self._wide_placed() if self._wide else 0)

    def add_in_it(self, key: tuple) -> None:
        """None: the Cortex-M4's tables hold no encodings inside IT blocks (m7_descriptors' do)."""
        return None

    def add_wide(self, key: tuple) -> tuple | None:
        """The entry of 32-bit encoding `key` outside an IT block from the file's table of those
        `mcusim prepare` met (thumb32_table), found by its bytes or else by its immediate-free
        form (immediate_forms), or None if it has none. The table's rows go into this table, one
        block, the first time one is used after _clear."""
        wide = self._wide_table()
        if wide is None:
            return None
        keys, places, _, forms = wide
        number = int.from_bytes(key[0], "little")
        at = bisect_left(keys, number)
        if at < len(keys) and keys[at] == number:
            place = int(places[at])
        else:
            place = forms.place(key[0])
            if place < 0:
                return None
        entry = self.by_key[key] = (self._with_literal(self._wide_placed() + place, key[0]), PLAIN, None)
        return entry

    def _with_literal(self, row: int, code: bytes) -> int:
        """`row`, an encoding table's row of encoding `code`, or a row of its own with the literal
        read `code` makes (the tables leave it to the decoder: _literal_left)."""
        literal = literal_read(code)
        return self._own_row(row, literal, 0) if literal else row

    def _own_row(self, row: int, literal: int, self_loop: int) -> int:
        """A row of its own: `row`'s with this literal read and branch to itself."""
        own = self._append()
        self.table[own] = self.table[row]
        self.table[own, R.D_LITERAL], self.table[own, R.D_SELF_LOOP] = literal, self_loop
        return own

    def describe_short(self) -> tuple[np.ndarray, np.ndarray]:
        """thumb16_table's table: every 16-bit encoding described outside an IT block as the decoder
        would, in a Descriptors of its own (this one's register patterns shared): each halfword's
        place among the distinct rows (-1: left out) and the rows."""
        fresh = self._fresh()
        places = np.full(HALFWORDS, -1, np.int64)
        for halfword in range(HALFWORDS):
            code = halfword.to_bytes(2, "little")
            row, kind, watched = fresh._add_alone(code)
            if watched is None and kind == (UNDECODABLE if fresh.table[row, R.D_DECODABLE] == 0 else
                                            IT if fresh.table[row, R.D_IT] == 1 else PLAIN) \
                    and fresh._literal_left(row, code):
                places[halfword] = row
        used = places >= 0
        index = np.full(HALFWORDS, -1, np.int32)
        index[used], distinct = _distinct(fresh.table[places[used]], 2)
        return index, distinct

    def describe_wide(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """thumb32_table's table: each 32-bit encoding this process described outside an IT block
        (add_new) or the table file holds (what an earlier prepare met: a run of this one copies
        the examples' rows it decoded, and finds their encodings in the table), described again
        alone as the decoder would, in a Descriptors of its own (this one's register patterns
        shared): the encodings kept (as little-endian numbers, sorted), each one's place among the
        distinct rows, and the rows."""
        fresh = self._fresh()
        kept = thumb32_table.read_table(thumb32_table.table_file(self.file), CORE_NAMES) if self.file else None
        met = self._wide_met | {key.to_bytes(4, "little") for key in (kept[0].tolist() if kept is not None else ())}
        keys, places = [], []
        for code in met:
            try:
                row, kind, watched = fresh._add_alone(code)
            except TooManyRegisters:
                continue
            if watched is None and kind == PLAIN and fresh.table[row, R.D_DECODABLE] == 1 \
                    and fresh._literal_left(row, code):
                keys.append(int.from_bytes(code, "little"))
                places.append(row)
        index, distinct = _distinct(fresh.table[places].reshape(-1, R.DESCRIPTOR), 4)
        kept = index >= 0
        keys = np.array(keys, np.int64)[kept]
        order = np.argsort(keys)
        return keys[order], index[kept][order], distinct

    def _literal_left(self, row: int, code: bytes) -> bool:
        """Whether `row`, encoding `code`'s here, may go into an encoding table as far as its
        literal read goes: the read literal_read finds in `code` (none, or the one it has), which
        add_short and add_wide make again (_with_literal); it is then taken out of the row
        (a literal load's row is its own: _entry)."""
        if self.table[row, R.D_LITERAL] != literal_read(code):
            return False
        self.table[row, R.D_LITERAL] = 0
        return True

    def _add_alone(self, code: bytes) -> tuple:
        """add_new's entry of encoding `code` outside an IT block, read by capstone alone at
        SHORT_ADDRESS (the encoding tables' describing)."""
        end = SHORT_ADDRESS + len(code)
        items = list(lite_runs(code, SHORT_ADDRESS, end))
        return self.add_new((code, None), len(code), items, 0 if items else None, code, SHORT_ADDRESS, end)

    def _fresh(self) -> "Descriptors":
        """A Descriptors of its own, for a table `mcusim prepare` keeps: this one's register
        patterns (and their file) shared, no row of this one's."""
        fresh = Descriptors(self.timing, int(self.constants[R.C_INSTRUCTION_CYCLES]), self.static_row)
        fresh._patterns, fresh.file, fresh._stored = self._patterns, self.file, self._stored
        return fresh

    def write_tables(self) -> None:
        """describe_short's and describe_wide's tables, kept in the files beside this model's
        patterns (if it has one)."""
        if self.file is not None:
            index, rows = self.describe_short()
            write_table(table_file(self.file), index, rows, CORE_NAMES)
            thumb32_table.write_table(thumb32_table.table_file(self.file), *self.describe_wide(), CORE_NAMES)

    def add_renamed(self, key: tuple, address: int, mnemonic: str, op_str: str) -> tuple | None:
        """The entry of encoding `key`, which capstone printed as `mnemonic op_str` at `address`,
        from an encoding of its register pattern met before; None if none was."""
        pattern = register_pattern(key[0], mnemonic, op_str, key[1])
        if pattern is None:
            return None
        first = self._patterns.get(pattern[0])
        if first is None:
            if pattern[0] in self._patterns:  # (met, and not renameable)
                return None
            if self._stored is None:
                self._stored = read_patterns(self.file)
            first = self._stored.get(pattern[0])
            if first is None:
                return None
            self._patterns[pattern[0]] = first
        values, literal, watched, slots = first
        row = self._renamed.get(pattern)
        if row is None:
            described = values.copy()
            names = pattern[1]
            try:
                for (field, bits), field_slots in zip(self._mask_fields, slots):
                    described[field] = self._mask([names[s] if type(s) is int else s for s in field_slots], bits)
            except IndexError:  # (a file's entry numbering more registers than its text has)
                return None
            row = self._renamed[pattern] = self._append()
            self.table[row] = described
        return self._entry(key, row, mnemonic, op_str, address, literal, watched)

    def _entry(self, key: tuple, row: int, mnemonic: str, op_str: str, address: int, literal: bool,
               watched: bool) -> tuple:
        """by_key's entry of an encoding whose shape has `row`: a literal read or a branch to
        itself gets a row of its own (other encodings of a shape share its row)."""
        literal = literal_read(key[0]) if literal else 0
        self_loop = mnemonic in ("b", "b.w") and op_str == f"#{address:#x}"
        if literal or self_loop:
            row = self._own_row(row, literal, int(self_loop))
        kind = IT if mnemonic.startswith("it") else NO_IT_SLOT if key[1] is not None and not takes_it_slot(key[0]) \
            else PLAIN
        entry = self.by_key[key] = (row, kind, (mnemonic, op_str) if watched else None)
        return entry

    def _slots(self, row: int, names: tuple[str, ...]) -> tuple | None:
        """What `row`'s register masks name, each as its place in `names` (renamed) or its name (SP,
        LR, PC, the flags: kept); None if one is a renameable register its text does not name."""
        slots = []
        for field, bits in self._mask_fields:
            mask = int(self.table[row, field])
            field_slots = []
            for bit, name in enumerate(bits):
                if mask >> bit & 1:
                    if name in names:
                        field_slots.append(names.index(name))
                    elif RENAMEABLE.fullmatch(name):
                        return None
                    else:
                        field_slots.append(name)
            slots.append(tuple(field_slots))
        return tuple(slots)

    def row_of(self, insn) -> int:
        """The row of a decoded instruction as the one before a range (what the rules read of it)."""
        return self._shape_row(insn)[0]

    def make_room(self) -> None:
        """Start afresh if the table is full, or the register bits nearly are (code read from data
        names every FP register: 64 of them, beyond a 63-bit mask), between ranges: a range's
        rows stay valid."""
        if self.count >= MAX_DESCRIPTORS or len(self.by_key) >= MAX_DESCRIPTORS \
                or max(len(self._core_bits), len(self._fp_bits)) > FULL_BITS:
            self._clear()

    def _append(self, rows: int = 1) -> int:
        """The first of `rows` new rows (zeros) at the table's end."""
        self.table = with_room(self.table, self.count + rows)
        self.count += rows
        return self.count - rows

    def _shape_row(self, insn) -> tuple[int, bool]:
        known = self._by_shape.get(insn.shape)
        if known is None:
            static, watched = self.static_row(insn)
            row = self._append()
            self.table[row] = self._describe(insn) + list(static)
            known = self._by_shape[insn.shape] = (row, watched)
        return known

    def _describe(self, insn) -> list[int]:
        """What cortex_m4.CortexM4Timing._cost reads of `insn`, as it reads it (D_DECODABLE to
        D_STATIC)."""
        timing = self.timing
        name, reads, writes = timing._describe(insn)
        cost = timing._cost(insn, None)
        d = [0] * R.D_STATIC
        d[R.D_DECODABLE], d[R.D_SIZE], d[R.D_IT] = 1, insn.size, int(name.startswith("it"))
        d[R.D_CYCLES], d[R.D_LSU], d[R.D_CPI] = cost.cycles, cost.lsu, cost.cpi
        d[R.D_STALL_REFILL], d[R.D_STALL_DIVIDE], d[R.D_REFILL] = cost.stall_refill, cost.stall_divide, cost.refill
        d[R.D_PIPELINABLE] = int(is_load_store(name) and pipelines_after_load(insn, name))
        d[R.D_MEMORY] = int(is_memory(name))
        d[R.D_ADDRESS] = self._mask(timing._address_registers(insn, name), self._core_bits)
        d[R.D_FP_READS] = self._mask(timing.fp_reads(insn, name, reads), self._fp_bits)
        d[R.D_LOAD] = int(is_load(name))
        d[R.D_WRITES] = self._mask([r for r in writes if not FP_REGISTER.fullmatch(r)], self._core_bits)
        d[R.D_FP_PRODUCER] = int(makes_fp_result(name))
        d[R.D_FP_WRITES] = self._mask(fp_named(writes), self._fp_bits)
        return d

    @staticmethod
    def _mask(names, bits: dict[str, int]) -> int:
        mask = 0
        for name in names:
            bit = bits.get(name)
            if bit is None:
                if len(bits) >= 63:
                    raise TooManyRegisters(name)
                bit = bits[name] = len(bits)
            mask |= 1 << bit
        return mask


def _distinct(rows: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(each of `rows`' place among the distinct ones an encoding table keeps, -1 for one it
    leaves out; those distinct rows): thumb16_table.rows_fit decides, for encodings of `size`
    bytes."""
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    fits = np.array([rows_fit(row[None], len(CORE_NAMES), size) for row in distinct], bool)
    renumbered = np.where(fits, np.cumsum(fits) - 1, -1)
    return renumbered[inverse.reshape(-1)], distinct[fits]
