"""Static Thumb decoder: fills a code window's per-halfword tables from the bytes in memory.

Each instruction start gets its kind and base cost; prefix sums over the window turn a
block's cost into one subtraction in the native hook.
"""
from __future__ import annotations

import bisect
from typing import NamedTuple

import numpy as np

from ..machine.native import (CALL_FLAG, F_CLASS_A, F_CLASS_B, F_CLASS_C, F_COUNTS, F_CYCLES, F_DIVIDE, F_FP, F_INSTRUCTIONS, F_ISB, F_LITERAL, F_REFILL, F_SP_WRITE, F_STALLS,
                              F_START_ADJUST, F_START_FLAGS, F_UNMASK, FIELDS, KIND, KIND_CONTINUATION,
                              KIND_SELF_LOOP, KIND_START, LANE, MAX_WINDOWS, SP_SELECT, resum_window)
from ..machine.native.jit import SameKinds
from ..machine.native.m4_rows import m4_rows
from ..machine.native.m7_rows import NO_START, m7_rows, start_prefix as native_start_prefix
from ..machine.native.table_walk import ABSENT, UNRESOLVED, table_walk
from ..machine.registers import UNICORN_REGISTERS
from . import m4_descriptors, m7_descriptors, m7_patterns
from .classes import packed, power_class
from .cortex_m4 import base_mnemonic, is_memory
from .decode_store import Places
from .literal_loads import LITERAL_LOADS, literal_read
from .instruction import (IT, MAX_KNOWN, NO_IT_SLOT, PLAIN, UNDECODABLE, decodable_runs, disassemble,
                          disassemble_one, disassemble_run, it_block_length, lite_runs, thumb_length)
from .lazy_capstone import arm as cs_arm, package_disassembler, thumb
from .m4_descriptors import TooManyRegisters

# the native calls made per code range, their arguments of the same kinds every time
m4_rows, m7_rows, table_walk, resum_window, native_start_prefix = map(
    SameKinds, (m4_rows, m7_rows, table_walk, resum_window, native_start_prefix))


CHUNK_CACHE_BYTES = 2048    # blocks decoded at run time (Unicorn's are at most 1 KB) are kept by content ...
CHUNK_CACHE_ENTRIES = 512   # ... this many at most
PENDING_ADDRESS = 0x10000000  # where _describe_pending has capstone read new encodings (rows do not depend on it)
LEARN_ADDRESS = 0x10000000  # where learn_patterns decodes code that is no image's (rows do not depend on it)
_NO_ROWS = np.zeros((0, FIELDS), np.int64)  # (a range with no instruction)
IT_WINDOW = 2 + 4 * 4  # bytes of an IT and the four instructions it can govern (each 4 at most)
PRELOAD_GAP = 256  # preload reads code ranges this close together (a literal pool between) at once ...
PRELOAD_READ = 1 << 16  # ... up to this many bytes a read
MAX_FRESH_STARTS = 4096  # start_prefix's schedules kept (a run stopping at more starts them afresh)
MAX_KEPT_STARTS = 1 << 14  # fresh Cortex-M7 ranges whose idents start_prefix reads (more: kept afresh)


class _Before(NamedTuple):
    """The instruction before a range at `start`, as Decoder._instruction_before found it (None:
    none), disassembled (Decoder._decoded_before) only where asked for: the Cortex-M4 decoder
    reads its descriptor from its encoding's entry (Decoder._row_before)."""
    start: int
    before: tuple[int, bytes] | None


class Decoder:
    """Decodes code ranges into the tables of a NativeState's windows."""

    def __init__(self, state, read_memory, instruction_cycles: int = 1, is_writable=lambda address: False,
                 timing=None, memoise: bool = True, store=None):
        """`memoise=False` decodes with capstone's own detail instructions, every analysis made
        afresh: the reference the memoised decoder is tested against (with a Cortex-M7 model
        made with memoise=False). `store`: a decode_store.DecodeStore the rows of every code
        range are looked up in and added to (see _decode_code)."""
        if store is not None and not memoise:
            raise ValueError("a decode store needs the memoised decoder")
        self.store = store
        self.state = state
        self.memoise = memoise
        self.timing = timing  # a core timing model (cost(insn, previous)), or None for a fixed cost
        self.read_memory = read_memory  # (address, size) -> bytes; raises if unmapped
        self.is_writable = is_writable  # code in writable memory can change under us
        self.instruction_cycles = instruction_cycles
        self.fp_instruction_addresses: set[int] = set()
        self.divides: dict[int, str] = {}  # address -> divisor register name (for CCR.DIV_0_TRP)
        self.sevs: set[int] = set()
        self.on_new_divides = None
        self.on_new_sevs = None
        self._costs: dict[int, np.ndarray] = {}  # window -> (halfwords, FIELDS): each instruction's own row
        self._dirty: dict[int, tuple[int, int]] = {}  # window -> its rows [first, end) written since summed
        self._summed: dict[int, int] = {}  # window -> the rows its prefix sums cover (none past them is decoded)
        self._snapshots: dict[int, list[tuple[int, bytes]]] = {}  # writable windows: decoded bytes
        self._ranges: list[tuple[int, int]] = []   # the image's code ranges, decoded as they first run
        self._range_starts: list[int] = []
        self._ranges_done: set[int] = set()
        self._preload_due = False  # (set_code_ranges: whether the store may hold ranges to preload)
        self._chunks: dict[tuple, tuple] = {}  # decoded blocks by content (see _decode_code)
        self._pieces: dict[int, int] = {}       # blocks decoded outside the code ranges: start -> end ...
        self._piece_starts: dict[int, int] = {}  # ... and end -> start
        self._states: dict[int, object] = {}    # piece boundary -> the timing model's state there
        self._keep_states: set[int] = set()     # the boundaries of the run being decoded
        self._redecoded = False  # a decode wrote over decoded rows (block summaries may be stale)
        self._fresh_starts: dict[tuple[int, bytes], tuple] = {}  # start_prefix's schedules, by code
        # a Cortex-M7 range decoded afresh (or copied from the chunk cache) here: its start -> (its
        # end, its bytes, m7_rows' starts, _walk's IT-block instructions), for _native_prefix
        self._kept_starts: dict[int, tuple] = {}
        self._kept_start_list: list[int] = []     # ... their starts, sorted
        self._prefix_out = np.zeros(4, np.int64)  # (native_start_prefix's)
        self._m4 = m4_descriptors.for_timing(timing, instruction_cycles, _static_row) \
            if memoise and getattr(timing, "pairwise", False) else None  # (rows in native code: _decode_m4)
        if self._m4 is not None:  # (register patterns met by earlier runs of any image; none without a store)
            self._m4.use_file(store.pattern_file if store is not None else None)
        self._m7 = m7_descriptors.Descriptors(timing, instruction_cycles, _static_row) \
            if memoise and hasattr(timing, "pipeline_before") else None  # (rows in native code: _decode_m7)
        if self._m7 is not None:  # (its register patterns, beside the Cortex-M4's in their model's folder)
            beside = store.pattern_file if store is not None else None
            self._m7.use_file(beside.with_name(m7_patterns.FILE_NAME) if beside is not None else None)
        self.instructions_decoded = 0  # rows of instructions written, decoded or copied ...
        self.instructions_copied = 0   # ... of them copied from a decode seen before (chunk cache, store)

    def ensure_window(self, address: int) -> int:
        index = self.state.window_for(address)
        if index is None:
            if self.state.full:  # start over: windows are a cache of decoded code
                self.state.clear_windows()
                self._costs.clear()
                self._dirty.clear()
                self._summed.clear()
                self._snapshots.clear()
                self._forget_pieces()
            size = self.state.WINDOW_BYTES
            index = self.state.add_window(address - address % size, size)
            self._costs[index] = np.zeros((size >> 1, FIELDS), np.int64)
        return index

    def decode(self, start: int, end: int) -> None:
        """Decode [start, end) as Thumb code and refresh the prefix sums."""
        self.decode_ranges([(start, end)])

    def set_code_ranges(self, ranges: list[tuple[int, int]]) -> None:
        """The image's Thumb code ranges (from mapping symbols), decoded one at a time as code in
        them first runs: a large image starts at once and only the code that runs is decoded."""
        self._ranges = sorted(ranges)
        self._range_starts = [start for start, _ in self._ranges]
        self._ranges_done = set()
        self._preload_due = self.store is not None and len(self.store) > 0

    def decode_block(self, start: int, size: int) -> None:
        """Decode what a block that is about to run needs: the code ranges it lies in, whole, and
        any of it past them. Each is decoded as entered afresh (no instruction before it), so its
        rows do not depend on which code ran first: the decode store's rows of a range are then
        the rows any run of the image decodes there (see preload)."""
        if self._preload_due:
            self.preload()
        ranges, end = self._ranges, start + size
        index = bisect.bisect_right(self._range_starts, start) - 1
        if index >= 0 and start < ranges[index][1]:
            todo, covered = [], ranges[index][0]
            while index < len(ranges) and ranges[index][0] <= covered < end:  # (the ranges the block runs into)
                if index not in self._ranges_done:
                    todo.append(index)
                covered = max(covered, ranges[index][1])
                index += 1
            if todo:
                self._ranges_done.update(todo)
                extra = [(covered, end)] if end > covered else []
                self.decode_ranges([ranges[i] for i in todo] + extra, fresh=True)
                return
            if covered >= end and self._decoded(start, end):  # (the preload copied it)
                return
        if hasattr(self.timing, "saved_state"):
            self._decode_piece(start, start + size)
        else:
            self.decode(start, start + size)

    def _decoded(self, start: int, end: int) -> bool:
        """Whether every halfword of [start, end) has its row."""
        while start < end:
            index = self.state.window_for(start)
            if index is None:
                return False
            base, size, _ = self.state.windows[index]
            stop = min(end, base + size)
            if not np.all(self._costs[index][(start - base) >> 1: (stop - base) >> 1, KIND]):
                return False
            start = stop
        return True

    def preload(self) -> None:
        """Copy from the decode store, at once, every code range an earlier run of this image
        decoded: each would otherwise stop the run when it first runs (a stop, a copy and a
        restart each: most of a second run of a large start-up's time). Its rows are the ones
        decode_block would give it, since a range is decoded as entered afresh. Up to half
        the windows, so the code that runs next has room. Done once, at the first decode_block."""
        self._preload_due = False
        store, ranges, size = self.store, self._ranges, self.state.WINDOW_BYTES
        if store is None or self.timing is None:
            return
        wanted = []  # (index, start, end, code) of each range not decoded yet
        read_at, read = 0, b""
        for index, (start, end) in enumerate(ranges):
            if index in self._ranges_done:
                continue
            if not read_at <= start or end + 2 > read_at + len(read):  # (the ranges close after it in one read)
                last = index
                while last + 1 < len(ranges) and ranges[last + 1][0] - ranges[last][1] <= PRELOAD_GAP \
                        and ranges[last + 1][1] - start <= PRELOAD_READ:
                    last += 1
                read_at, read = start, self._read(start, ranges[last][1] - start + 2)
            code = read[start - read_at: end - read_at + 2]
            wanted.append((index, start, min(end, start + len(code)), code))
        windows = {base for base, _, _ in self.state.windows}
        copies = []  # (start, end, code, rows, specials)
        for (index, start, end, code), found in zip(
                wanted, store.get_many([(code, end - start, None) for _, start, end, code in wanted])):
            if found is None:
                continue
            new = [base for base in range(start - start % size, end, size) if base not in windows]
            if len(windows) + len(new) > MAX_WINDOWS // 2:
                break
            windows.update(new)
            self._ranges_done.add(index)
            copies.append((start, end, code, found[0], found[1]))
        if copies:
            self._redecoded = False
            self._write_copies(copies)
            self._finish_writes()

    def _write_copies(self, copies: list[tuple]) -> None:
        """What _decode_code does with a range found in the store, for many (preload's: start,
        end, code, rows or the store's Places of them, specials), their rows gathered from the
        store's table and written window by window."""
        table, places = _table_and_places([copy[3] for copy in copies])
        counts = np.array([len(copy[3]) for copy in copies])
        addresses = np.repeat(np.array([copy[0] for copy in copies], np.int64) - 2 * (np.cumsum(counts) - counts),
                              counts) + 2 * np.arange(len(places))
        size = self.state.WINDOW_BYTES
        bases = addresses - addresses % size  # (ascending: preload's copies are in address order)
        # each window's first row (not by np.unique, which imports numpy.ma in NumPy 2.4)
        starts = [0, *(np.flatnonzero(np.diff(bases)) + 1).tolist()]
        writable = {}  # window base -> index
        for low, high in zip(starts, starts[1:] + [len(bases)]):
            base = int(bases[low])
            index = self.ensure_window(base)
            halfwords = (addresses[low:high] - base) >> 1
            self._write_window(index, halfwords, table[places[low:high]], int(halfwords[0]), int(halfwords[-1]) + 1)
            if self.is_writable(base):
                writable[base] = index
        for start, end, code, *_ in copies if writable else ():  # (code in RAM: _snapshot's)
            for base in range(start - start % size, end, size):
                if base in writable:
                    self._snapshots.setdefault(writable[base], []).append((start, code[: end - start]))
        copied = _instruction_count(table[:, KIND][places])
        self.instructions_decoded += copied
        self.instructions_copied += copied
        for start, _, _, _, specials in copies:
            for offset, mnemonic, operands in specials:
                self._note_special(start + offset, mnemonic, operands)

    def _decode_piece(self, start: int, end: int) -> None:
        """Decode a block outside the code ranges (a stripped image, code in RAM) together with
        the blocks decoded before that end where it starts and start where it ends, as one run
        from the state the first of them started in: a dual-issue core's schedule then carries
        across the blocks as it does through a code range, whatever order they first ran in."""
        first = self._piece_starts.get(start, start)
        last = self._pieces.get(end, end)
        if start in self._pieces or end in self._piece_starts:  # overlapping decodes: keep the pieces simple
            first, last = start, end
        else:
            self._pieces[start], self._piece_starts[end] = end, start
        self._keep_states = {start, end, last}
        state = self._states.get(first)
        previous = self._decoded_before(first) if state is not None else None
        if previous is not None:
            self.timing.restore_state(state, previous.address)
        try:
            self.decode(first, last)
        finally:
            self._keep_states = set()

    def decode_all(self) -> None:
        """Decode every code range of the image now rather than as each first runs (mcusim
        prepare, describing the bundled examples' register patterns ahead of any run)."""
        for start, _ in list(self._ranges):
            self.decode_block(start, 2)

    def learn_patterns(self, pieces) -> int:
        """Decode Thumb code that is no image's (`pieces`, each its bytes: a library's functions,
        code_files) for its register patterns alone, which save_store then keeps (mcusim prepare);
        the instructions decoded. A decoder of its own decodes each piece afresh at LEARN_ADDRESS,
        with this one's descriptors and timing model: its rows and special instructions go
        nowhere, and the Cortex-M7 schedule is left where the last piece ended (a machine that has
        learned is not for running)."""
        if self._m4 is None and self._m7 is None:
            return 0
        learner = Decoder(type(self.state)(), self.read_memory, self.instruction_cycles, timing=self.timing,
                          store=self.store)
        learner._m4, learner._m7 = self._m4, self._m7
        for code in pieces:
            learner._decode_fresh(LEARN_ADDRESS, LEARN_ADDRESS + len(code), code, None)
        return learner.instructions_decoded

    def write_encoding_tables(self) -> bool:
        """Keep the tables of encodings beside the register patterns (mcusim prepare): on the
        Cortex-M4, every 16-bit encoding and the 32-bit ones this process met outside an IT block
        (thumb16_table, thumb32_table); on the Cortex-M7, every encoding it met outside an IT
        block (m7_table). Whether this decoder keeps any."""
        if self._m4 is not None:
            self._m4.write_tables()
        elif self._m7 is not None:
            self._m7.write_table()
        else:
            return False
        return True

    @property
    def pattern_file(self):
        """The file the register patterns described are kept in (pattern_store, m7_patterns), if any."""
        descriptors = self._m4 or self._m7
        return descriptors.file if descriptors is not None else None

    def decode_ranges(self, ranges: list[tuple[int, int]], fresh: bool = False) -> None:
        """Decode each of `ranges` (`fresh`: each as entered afresh, with no instruction before it)."""
        self._redecoded = False
        for start, end in ranges:
            code = self._read(start, end - start + 2)  # + 2: the last instruction may be 32-bit
            self._decode_code(start, min(end, start + len(code)), code, fresh)
        self._finish_writes()

    def _finish_writes(self) -> None:
        """Re-sum the windows written since, and empty the block summaries if decoded rows were
        written over (a summary covers decoded code only: new code leaves every summary right)."""
        for index, (first, end) in self._dirty.items():
            self._resum(index, first, end)
        self._dirty.clear()
        if self._redecoded:
            self.state.clear_block_cache()

    def _read(self, address: int, size: int) -> bytes:
        while size > 0:
            try:
                return self.read_memory(address, size)
            except Exception:
                size -= 2
        return b""

    def _resum(self, index: int, first: int, end: int) -> None:
        """Refresh a window's tables after rows [first, end) were written (the rows before them
        did not change): its prefix sums from there, or from the last row summed before, to the
        last row written (nothing past it is decoded, so nothing reads its sums)."""
        summed = self._summed.get(index, 0)
        stop = self._summed[index] = max(end, summed)
        resum_window(self.state.buffer, self.state.windows[index][2], self._costs[index], min(first, summed), stop)

    def _decode_code(self, start: int, end: int, code: bytes, fresh: bool = False) -> None:
        """Fill the tables for [start, end) from `code` (the bytes at start; `fresh`: as entered
        afresh, whatever was decoded before it).

        Code first seen at run time (RAM, a stripped image) is decoded a block at a time, and
        the Python per instruction is slow (tens of us): firmware running away through zeroed RAM
        would crawl. The rows depend only on the bytes, the instruction before and the timing
        model's state (nothing in them depends on the address: PC-relative operands are costed
        alike wherever they are), so a block seen before with all three the same is copied.
        The decode store is keyed alike, for the code ranges decoded `fresh` and, where the
        rows depend on the instruction before alone (the Cortex-M4, the fixed cost), any code.
        A range decoded `fresh` leaves the timing model in no state: what is decoded next starts
        afresh too, whether the range was decoded, copied or preloaded in this run (a Cortex-M7
        piece, _decode_piece's, carries its schedule on from the pieces before it alone)."""
        key = previous = None
        small = end - start <= CHUNK_CACHE_BYTES
        store = self.store if fresh or not hasattr(self.timing, "saved_state") else None
        if store is not None:
            before = self._instruction_before(start) if self.timing is not None and not fresh else None
            key = (code, end - start, before[1] if before is not None else None)
        else:
            previous = self._decoded_before(start) if self.timing is not None and not fresh else None
            if small:
                state = self.timing.state_key(previous) if hasattr(self.timing, "state_key") else ()
                key = (code, end - start, bytes(previous.bytes) if previous is not None else None, state)
        cached = self._chunks.get(key) if small and key is not None else None
        if cached is None and store is not None:
            found = store.get(key)
            cached = (*found, None, None) if found is not None else None
        if cached is None:
            if store is not None and self.timing is not None and not fresh:
                previous = _Before(start, before) if self._m4 is not None else self._decoded_before(start, before)
            rows, stop, specials = self._decode_fresh(start, end, code, previous)
            if key is not None and stop > start:
                if small:
                    if len(self._chunks) >= CHUNK_CACHE_ENTRIES:
                        self._chunks.clear()
                    after = self.timing.saved_state() if hasattr(self.timing, "saved_state") else None
                    kept = self._kept_starts.get(start)  # (the idents this decode kept, if it kept them)
                    kept = kept[1:] if kept is not None and kept[1] is code else None
                    self._chunks[key] = (rows, specials, stop - start, after, kept)
                if store is not None:
                    store.put(key, rows, specials, stop - start)
        else:
            rows, specials, length, after, kept = cached
            if kept is not None:
                self._keep_starts(start, start + length, *kept)
            written = self.instructions_decoded
            dirty = self._write_rows(start, rows)
            self.instructions_copied += self.instructions_decoded - written
            for offset, mnemonic, operands in specials:
                self._note_special(start + offset, mnemonic, operands)
            if after is not None:  # the timing model carries on after the block's last instruction
                self.timing.restore_state(after, _last_start(start, length, rows))
            self._snapshot(dirty, start, code[: end - start])
        if fresh and hasattr(self.timing, "forget_state"):
            self.timing.forget_state()

    def _write_rows(self, start: int, rows: np.ndarray, instructions: int | None = None) -> set[int]:
        """Write `rows` at `start` (`instructions`: how many instructions they hold, if known)."""
        dirty = set()
        self.instructions_decoded += _instruction_count(rows[:, KIND]) if instructions is None else instructions
        address, stop = start, start + 2 * len(rows)
        while address < stop:
            index = self.ensure_window(address)
            base, size, _ = self.state.windows[index]
            a, b = (address - base) >> 1, (min(stop, base + size) - base) >> 1
            at = (address - start) >> 1
            self._write_window(index, slice(a, b), rows[at: at + b - a], a, b)
            dirty.add(index)
            address = base + 2 * b
        return dirty

    def _write_window(self, index: int, where, rows: np.ndarray, first: int, end: int) -> None:
        """Write `rows` at window `index`'s halfwords `where` (a slice or their indices, within
        [first, end)), noting what was decoded there before and what to re-sum (in NumPy: a
        native function of its own would cost every process that copies an image its load, a
        millisecond, more than it saves a small image)."""
        costs = self._costs[index]
        self._redecoded = self._redecoded or bool(np.count_nonzero(costs[where, KIND]))
        costs[where] = rows
        self.state.rows(index)[where, KIND] = rows[:, KIND]
        was = self._dirty.get(index, (first, end))
        self._dirty[index] = min(was[0], first), max(was[1], end)

    def _write_fresh(self, start: int, end: int, code: bytes, rows: np.ndarray,
                     instructions: int | None = None) -> np.ndarray:
        """Write the rows a fresh decode of [start, end) made (none: nothing), snapshot the bytes
        decoded where they lie in writable memory (_snapshot), and give the rows back
        (_decode_fresh's first result)."""
        dirty = self._write_rows(start, rows, instructions) if len(rows) else set()
        self._snapshot(dirty, start, code[: end - start])
        return rows

    def _snapshot(self, dirty: set[int], start: int, code: bytes) -> None:
        for index in dirty:
            if self.is_writable(self.state.windows[index][0]):
                self._snapshots.setdefault(index, []).append((start, code))

    def _decode_fresh(self, start: int, end: int, code: bytes, previous) -> tuple[np.ndarray, int, list]:
        """Decode [start, end): (the rows written, of [start, the end of the last instruction),
        that end, and the special instructions (offset, mnemonic, operands) noted). `previous`:
        the instruction before (an Instruction, a _Before, disassembled here unless the
        Cortex-M4 decoder knows its encoding, or None)."""
        if self.timing is None:
            return self._decode_untimed(start, end, code)
        if self._m4 is not None:
            decoded = self._decode_m4(start, end, code, previous)
            if decoded is not None:
                return decoded
        if type(previous) is _Before:
            previous = self._decoded_before(*previous)
        if self._m7 is not None and not self._keep_states:
            decoded = self._decode_m7(start, end, code, previous)
            if decoded is not None:
                return decoded
        specials = []
        address = start
        folded_it = None  # the row of a folded IT
        details = disassemble(code, start, end) if self.memoise else _plain_disassemble(code, start, end)
        rows = []
        instructions = 0
        run = []  # (instruction, its row) in order, for start adjustments over several instructions
        if hasattr(self.timing, "begin_run"):
            self.timing.begin_run()
        cost_of, keep_states, size = self.timing.cost, self._keep_states, len(code)  # (looked up once)
        memo = getattr(self.timing, "memoise", True)  # (a model that makes a Cost per call: rows afresh)
        while address < end and address - start + 2 <= size:
            offset = address - start
            length = min(thumb_length(int.from_bytes(code[offset: offset + 2], "little")), size - offset)
            detail = details.get(address)
            if detail is not None and detail.size != length:
                detail = None
            if detail is None:  # an instruction capstone cannot decode still runs (Unicorn raises the fault)
                row = [0] * FIELDS
                row[KIND], row[F_CYCLES], row[F_INSTRUCTIONS] = KIND_START, self.instruction_cycles, 1
            else:
                cost = cost_of(detail, previous)
                template, special, literal, jump = _costed_row(detail, cost, memo)
                row = template.copy()
                if literal:
                    row[F_LITERAL] = literal_read(code[offset: offset + length])
                if jump and detail.op_str == f"#{address:#x}":
                    row[KIND] = KIND_SELF_LOOP
                if folded_it is not None:
                    # a block entered at the folded IT also loses this instruction's neighbour effects
                    folded_it[F_START_ADJUST] += row[F_START_ADJUST]
                    folded_it[F_START_FLAGS] |= row[F_START_FLAGS] & ~(1 << 4)
                    folded_it = None
                if cost.start_fold:
                    folded_it = row  # a folded IT is skipped: the next one pairs with what ran before it
                else:
                    previous = detail
                run.append((detail, row))
                if special and self._note_special(address, detail.mnemonic, detail.op_str):
                    specials.append((offset, detail.mnemonic, detail.op_str))
                if keep_states and address + length in keep_states:
                    self._states[address + length] = self.timing.saved_state()
            rows.append(row)
            instructions += 1
            if length == 4:  # the second halfword may lie in the next window
                rows.append(_CONTINUATION)
            address += length
        if run and hasattr(self.timing, "start_adjustments"):
            adjustments = self.timing.start_adjustments([insn for insn, _ in run])
            for (_, row), (cycles, interlock, lost) in zip(run, adjustments):
                row[F_START_ADJUST] = cycles
                row[F_START_FLAGS] = interlock | 1 << 6 | (lost + 8) << 7
        return self._write_fresh(start, end, code, np.array(rows, np.int64).reshape(-1, FIELDS), instructions), \
            address, specials

    def _decode_m4(self, start: int, end: int, code: bytes, previous) -> tuple[np.ndarray, int, list] | None:
        """_decode_fresh for the Cortex-M4 model, whose rows depend on each instruction's encoding
        and the one before it alone: each encoding's descriptor found by _walk, and one native
        call makes the rows (m4_rows). None (then _decode_fresh decodes it) where _walk gives
        none."""
        descriptors = self._m4
        descriptors.make_room()
        try:
            before = self._row_before(descriptors, previous)
        except TooManyRegisters:
            return None
        walked = self._walk(descriptors, start, end, code)
        if walked is None:
            return None
        rows, specials, stop, _, _ = walked
        if not rows:
            return _NO_ROWS, stop, specials
        table = np.zeros(((stop - start) >> 1, FIELDS), np.int64)
        m4_rows(descriptors.table, np.array(rows, np.int64), before, descriptors.constants, table)
        return self._write_fresh(start, end, code, table, len(rows)), stop, specials

    def _row_before(self, descriptors, previous) -> int:
        """The Cortex-M4 descriptor row of `previous` (an Instruction, a _Before or None: -1):
        a _Before's is its encoding's entry outside an IT block if the run has one (the same
        descriptor capstone's detail would give), else it is disassembled."""
        if type(previous) is _Before:
            entry = descriptors.entry_alone(previous.before[1]) if previous.before is not None else None
            if entry is not None and entry[1] != UNDECODABLE:
                return entry[0]
            previous = self._decoded_before(*previous)
        return descriptors.row_of(previous) if previous is not None else -1

    def _walk(self, descriptors, start: int, end: int, code: bytes) -> tuple[list, list, int, list, list] | None:
        """The descriptor rows of the instructions of [start, end) (m4_descriptors' or
        m7_descriptors'), the special instructions noted, where the last ends, each instruction's
        offset and, of each read in an IT block, its offset and its IT's. Outside an IT block, the
        encodings the tables `mcusim prepare` keeps hold are found natively up to the next IT
        (machine/native/table_walk.py), the rest as follows. Each encoding is looked up by its
        bytes and IT context (`descriptors.by_key`). A new 16-bit encoding outside an IT block is
        looked up in the table of them all (thumb16_table), if prepare made one, and a new 32-bit
        one in the table of those prepare met (thumb32_table; the Cortex-M4's only), and on the
        Cortex-M7 one in an IT block in the table of those prepare met there, by its bytes and
        condition (m7_table); the other new encodings outside an IT block are read by capstone's
        cheap pass together, alone (_describe_pending), and one in an IT block by a pass over that
        block from its IT on (an IT block's condition shows in its instructions' text). None where
        an IT sits inside an IT block, which capstone reads its own way, or an encoding cannot be
        described (TooManyRegisters, or add_new gives None)."""
        known, add_new, add_short, add_wide, add_in_it = (descriptors.by_key.get, descriptors.add_new,
                                                          descriptors.add_short, descriptors.add_wide,
                                                          descriptors.add_in_it)
        rows, specials = [], []
        pending = {}  # new encodings outside an IT block, but an IT -> [(place in rows, offset)]: described together
        items = []  # capstone's cheap text of an IT block's bytes, read when an encoding there is new
        places = {}  # address -> its place in items
        it_at = 0  # the IT's offset

        def find(place: int, offset: int, length: int, halfword: int, context, absent: bool = False) -> int | None:
            """rows[place]: the entry of the instruction at `offset` (in an IT block: `context`;
            `absent`: the tables were searched for it natively, and lack it); its kind, or None
            where it cannot be described."""
            nonlocal items, places
            key = (code[offset: offset + length], context)
            entry = known(key)
            if entry is None and context is None and not absent:
                entry = add_short(key, halfword) if length == 2 else add_wide(key)
            elif entry is None and context is not None:
                entry = add_in_it(key)
            if entry is None and context is None and (halfword >= 0xE800 if length == 4 else halfword >> 8 != 0xBF):
                # (no IT, whose kind the IT tracking reads, nor the half of a 32-bit encoding cut short)
                pending.setdefault(key, []).append((place, offset))
                rows[place] = -1
                return PLAIN
            if entry is None:
                if start + offset not in places:
                    # capstone's reading of an IT block at most, from this encoding's IT on: no IT
                    # block is open there, so it reads what follows as a pass over the range would
                    # (up to this encoding at least: an instruction that takes no slot of the block,
                    # as capstone reads one, lengthens it)
                    first = it_at if context is not None else offset
                    stop = min(end, start + max(first + IT_WINDOW, offset + length))
                    items = list(lite_runs(code[first:], start + first, stop))
                    places = {item[0]: place for place, item in enumerate(items)}
                try:
                    entry = add_new(key, length, items, places.get(start + offset), code, start, end)
                except TooManyRegisters:
                    return None
                if entry is None:
                    return None
            row, kind, watched = entry
            if watched is not None and self._note_special(start + offset, *watched):
                specials.append((offset, *watched))
            rows[place] = row
            return kind

        tables = descriptors.walk_tables()
        if tables is not None:  # (the encodings the tables hold, found natively up to each IT)
            code_array, found = np.frombuffer(bytearray(code), np.uint8), np.empty((2, len(code) // 2 + 1), np.int64)
            at = np.zeros(3, np.int64)
        context, it_left = None, 0  # (the IT's halfword, this instruction's position after it); left
        offsets = []  # each row's instruction's offset
        in_it = []  # (offset, its IT's offset) of those in an IT block
        size = len(code)
        limit = min(end - start, size - 1)  # (a halfword at least left)
        offset = 0
        while offset < limit:
            if tables is not None and not it_left:
                at[:2] = offset, limit
                count = table_walk(code_array, tables, at, found)
                if count:
                    first = len(rows)
                    rows += found[0, :count].tolist()
                    offsets += found[1, :count].tolist()
                    if at[2]:
                        for place in range(first, first + count):
                            if rows[place] == UNRESOLVED or rows[place] == ABSENT:
                                where = offsets[place]
                                halfword = code[where] | code[where + 1] << 8
                                if find(place, where, 4 if halfword >= 0xE800 else 2, halfword, None,
                                        rows[place] == ABSENT) is None:
                                    return None
                    offset = int(at[0])
                    if offset >= limit:
                        break
            halfword = code[offset] | code[offset + 1] << 8
            length = 4 if halfword >= 0xE800 else 2  # (thumb_length)
            if offset + length > size:
                length = size - offset
            if it_left:
                it_left -= 1
                context = (context[0], context[1] + 1)
            else:
                context = None
            rows.append(None)
            offsets.append(offset)
            if context is not None:
                in_it.append((offset, it_at))
            kind = find(len(rows) - 1, offset, length, halfword, context)
            if kind is None:
                return None
            if kind != PLAIN:
                if kind == UNDECODABLE:
                    it_left = 0  # (capstone's pass stops there: what follows is read without the IT)
                elif kind == IT:
                    if context is not None:  # (an IT inside an IT block: capstone reads it its own way)
                        return None
                    it_left, context, it_at = it_block_length(halfword), (halfword, 0), offset
                elif kind == NO_IT_SLOT:
                    it_left, context = it_left + 1, (context[0], context[1] - 1)
            offset += length
        if pending and not self._describe_pending(descriptors, pending, rows, specials, start):
            return None
        return rows, specials, start + offset, offsets, in_it

    def _describe_pending(self, descriptors, pending: dict, rows: list, specials: list, start: int) -> bool:
        """Describe _walk's new encodings outside an IT block from one capstone pass over
        them alone, one after the other at PENDING_ADDRESS (read outside an IT block, each
        prints as it does where it is, but for absolute branch targets, which neither a register
        pattern nor the model reads; a branch to itself is one there too), rather than a pass
        over the rest of the range (most of it encodings already known); fill in their rows and
        note the watched ones. False where one cannot be described (TooManyRegisters, or add_new
        gives None)."""
        code = b"".join(key[0] for key in pending)
        end = PENDING_ADDRESS + len(code)
        items = list(lite_runs(code, PENDING_ADDRESS, end))
        places = {item[0]: place for place, item in enumerate(items)}
        address = PENDING_ADDRESS
        noted = False
        for key, uses in pending.items():
            length = len(key[0])
            try:
                entry = descriptors.add_new(key, length, items, places.get(address), code, PENDING_ADDRESS, end)
            except TooManyRegisters:
                return False
            if entry is None:
                return False
            row, _, watched = entry
            for place, offset in uses:
                rows[place] = row
                if watched is not None and self._note_special(start + offset, *watched):
                    specials.append((offset, *watched))
                    noted = True
            address += length
        if noted:
            specials.sort(key=lambda special: special[0])
        return True

    def _decode_m7(self, start: int, end: int, code: bytes, previous) -> tuple[np.ndarray, int, list] | None:
        """_decode_fresh for the Cortex-M7 model: each instruction's descriptor found by _walk
        (m7_descriptors: renamed from its register pattern, or described from capstone's detail),
        and one native call schedules the range in sequence after the pipeline `previous` left and
        makes its rows and block-start corrections (m7_rows). None (then _decode_fresh schedules
        it in Python) where the pipeline or an instruction does not fit m7_schedule's arrays,
        capstone's detail disagrees, or _walk gives none."""
        timing, descriptors = self.timing, self._m7
        descriptors.make_room()
        pipeline = timing.pipeline_before(previous)
        if pipeline is None:
            return None
        walked = self._walk(descriptors, start, end, code)
        if walked is None:
            return None
        rows, specials, stop, offsets, in_it = walked
        if not rows:
            return _NO_ROWS, stop, specials
        table = np.zeros(((stop - start) >> 1, FIELDS), np.int64)
        starts = np.full(len(table), NO_START, np.int32)
        table_rows = descriptors.table_rows()  # (before timing.encoded: a table first read adds idents to it)
        m7_rows(descriptors.table, timing.encoded, np.array(rows, np.int64), pipeline, descriptors.constants, table,
                starts, *table_rows)
        self._keep_starts(start, stop, code, starts, in_it)
        last = next((offsets[at] for at in range(len(rows) - 1, -1, -1) if rows[at] >= 0), None)  # (not UNDECODABLE_*)
        if last is not None:
            timing.take_pipeline(pipeline, start + last)
        return self._write_fresh(start, end, code, table, len(rows)), stop, specials

    def _decode_untimed(self, start: int, end: int, code: bytes) -> tuple[np.ndarray, int, list]:
        """_decode_fresh without a timing model: a fixed cost, and capstone for the classes."""
        specials = []
        rows = []
        address = start
        while address < end and address - start + 2 <= len(code):
            offset = address - start
            length = thumb_length(int.from_bytes(code[offset: offset + 2], "little"))
            length = min(length, len(code) - offset)
            insn = next(thumb().disasm_lite(code[offset: offset + length], address, 1), None)
            mnemonic, operands = (insn[2], insn[3]) if insn else ("", "")
            self_loop = mnemonic in ("b", "b.w") and operands == f"#{address:#x}"
            row = [0] * FIELDS
            row[KIND] = KIND_SELF_LOOP if self_loop else KIND_START
            row[F_CYCLES], row[F_INSTRUCTIONS] = self.instruction_cycles, 1
            row[F_DIVIDE] = _divide_operands(mnemonic, operands)
            row[F_LITERAL] = literal_read(code[offset: offset + length])
            if mnemonic in ("bl", "blx"):
                row[F_REFILL] |= CALL_FLAG
            if mnemonic:
                row[F_CLASS_A], row[F_CLASS_B], row[F_CLASS_C] = packed(*power_class(None, mnemonic, operands))
            row[F_FP] = int(mnemonic.startswith("v"))
            row[F_UNMASK] = int(_may_unmask(mnemonic, operands))
            row[F_ISB] = int(mnemonic == "isb")
            row[F_SP_WRITE] = may_move_sp(mnemonic, operands)
            if self._note_special(address, mnemonic, operands):
                specials.append((offset, mnemonic, operands))
            rows.append(row)
            if length == 4:
                rows.append(_CONTINUATION)
            address += length
        return self._write_fresh(start, end, code, np.array(rows, np.int64).reshape(-1, FIELDS)), address, specials

    def start_prefix(self, block: int, pc: int) -> tuple[int, int, int]:
        """Of a dual-issue core's block-start correction at `block`, the part that belongs to the
        instructions before `pc`: (cycles, interlock taken back, dual issues lost). The schedule
        from an empty pipeline is kept by the code's bytes (a mid-block stop, an interrupt or a
        peripheral access, often comes back to the same instruction). It is made natively from
        the idents of the range's fresh decode where this process decoded it (_native_prefix: the
        Python schedule of a few instructions, which capstone's detail and the model describe
        first, cost 0.4 to 0.5 ms a stop: benchmarks/decode_parts.py), else in Python."""
        if not hasattr(self.timing, "fresh_schedule") or pc <= block:
            return 0, 0, 0
        code = self._read(block, pc - block + 2)
        key = (block, code)
        fresh = self._fresh_starts.get(key)
        if fresh is None:
            fresh = self._native_prefix(block, pc, code) or self._fresh_schedule(block, pc, code)
            if len(self._fresh_starts) >= MAX_FRESH_STARTS:
                self._fresh_starts.clear()
            self._fresh_starts[key] = fresh
        end, fresh_cycles, fresh_waited, fresh_pairs = fresh
        if end == block:
            return 0, 0, 0
        sums = self.state.sums_between(block, end)
        in_sequence_interlock = (sums[F_STALLS] >> LANE) & ((1 << LANE) - 1)
        in_sequence_pairs = sums[F_COUNTS] >> (2 * LANE)
        return (fresh_cycles - sums[F_CYCLES], max(0, in_sequence_interlock - fresh_waited),
                in_sequence_pairs - fresh_pairs)

    def _keep_starts(self, start: int, stop: int, code: bytes, starts: np.ndarray, in_it: list) -> None:
        """Keep the idents of a Cortex-M7 range [start, stop) of the bytes `code`, decoded afresh
        in this process (m7_rows' `starts`), and its instructions read in an IT block (_walk's),
        from which _native_prefix schedules a block start in it. A record checks its own bytes
        when used, so code changed since, or windows cleared, leave it harmless."""
        if start not in self._kept_starts:
            if len(self._kept_starts) >= MAX_KEPT_STARTS:
                self._kept_starts.clear()
                self._kept_start_list.clear()
            bisect.insort(self._kept_start_list, start)
        self._kept_starts[start] = stop, code, starts, in_it

    def _native_prefix(self, block: int, pc: int, code: bytes) -> tuple[int, int, int, int] | None:
        """_fresh_schedule's result made natively (native_start_prefix) from the idents kept of the
        range with the greatest start at or before `block`, if [block, pc) lies in it with the
        bytes `code`; None where no such range was kept (its rows came from the decode store, or
        from Python's schedule), the bytes differ, an instruction there is undecodable, or one was
        read in an IT block whose IT is before `block` (capstone reads it without its IT from
        there): then _fresh_schedule makes it."""
        at = bisect.bisect_right(self._kept_start_list, block) - 1
        if at < 0:
            return None
        start = self._kept_start_list[at]
        stop, decoded, starts, in_it = self._kept_starts[start]
        length = min(stop, pc + 2) - block
        if pc > stop or decoded[block - start: block - start + length] != code[:length]:
            return None
        first = block - start
        # an instruction from `block` on governed by an IT before it: the first read in an IT block
        # from `block` on tells (in order of offset; IT blocks do not nest)
        at = bisect.bisect_left(in_it, (first,))
        if at < len(in_it) and in_it[at][0] < pc - start and in_it[at][1] < first:
            return None
        out = self._prefix_out
        if not native_start_prefix(self.timing.encoded, starts, (block - start) >> 1, (pc - start) >> 1,
                                   self._m7.constants, out):
            return None
        end, cycles, waited, pairs = out.tolist()
        return start + 2 * end, cycles, waited, pairs

    def _fresh_schedule(self, block: int, pc: int, code: bytes) -> tuple[int, int, int, int]:
        """start_prefix's schedule of the instructions from `block` to `pc` (`code`, its bytes),
        up to the start window, from an empty pipeline: (their end, cycles, waited, dual issues)."""
        run = disassemble_run(code, block) if self.memoise else package_disassembler(True).disasm(code, block)
        instructions = [i for i in run if i.address < pc]
        instructions = instructions[: self.timing.t["start_window"]]
        if not instructions:
            return block, 0, 0, 0
        fresh = self.timing.fresh_schedule(instructions)
        return (instructions[-1].address + instructions[-1].size, sum(delta for delta, _ in fresh),
                sum(waited for _, waited in fresh), sum(delta == 0 for delta, _ in fresh))

    def _starts_before(self, address: int):
        """(length, bytes) of each decoded instruction start 2 and 4 bytes before `address`."""
        for length in (2, 4):
            index = self.state.window_for(address - length)
            if index is None:
                continue
            base = self.state.windows[index][0]
            if self._costs[index][(address - length - base) >> 1, KIND] in (KIND_START, KIND_SELF_LOOP):
                yield length, self._read(address - length, length)

    def _instruction_before(self, address: int) -> tuple[int, bytes] | None:
        """(address, bytes) of what _decoded_before(address) would find, without disassembling
        it: the decoded instruction start 2 or 4 bytes back whose length ends it at `address`."""
        return next(((address - length, code) for length, code in self._starts_before(address)
                     if len(code) == length and thumb_length(int.from_bytes(code[:2], "little")) == length), None)

    def _decoded_before(self, address: int, before: tuple[int, bytes] | None = None):
        """The already decoded instruction that ends at `address` (the neighbour of a range
        decoded later, e.g. the rest of a block Unicorn cut at a page boundary), or None.
        `before`: _instruction_before(address), if it was asked (its candidate is tried first:
        the memory before is then read again only where capstone cannot decode it)."""
        if before is not None:
            insn = self._disassembled(before[1], before[0])
            if insn is not None and insn.size == len(before[1]):
                return insn
        for length, code in self._starts_before(address):
            insn = self._disassembled(code, address - length)
            if insn is not None and insn.size == length:
                return insn
        return None

    def _disassembled(self, code: bytes, address: int):
        return disassemble_one(code, address) if self.memoise else \
            next(package_disassembler(True).disasm(code, address, 1), None)

    def _note_special(self, address: int, mnemonic: str, operands: str) -> bool:
        """FP, divide and SEV instructions, which the machine watches; True for those."""
        if not mnemonic.startswith(("v", "sdiv", "udiv", "sev")):
            return False
        if mnemonic.startswith("v"):
            self.fp_instruction_addresses.add(address)
        if mnemonic.startswith(("sdiv", "udiv")) and address not in self.divides:
            self.divides[address] = operands.split(",")[-1].strip()
            if self.on_new_divides:
                self.on_new_divides([address])
        if mnemonic == "sev" and address not in self.sevs:
            self.sevs.add(address)
            if self.on_new_sevs:
                self.on_new_sevs([address])
        return True

    def save_store(self) -> None:
        """Keep what this run decoded for the next run of the image (see decode_store), and the
        register patterns it described for any image's (pattern_store)."""
        if self.store is not None:
            self.store.save()
        for descriptors in (self._m4, self._m7):
            if descriptors is not None:
                descriptors.save_patterns()

    def forget_changed_code(self) -> bool:
        """Drop the decode of writable windows whose code bytes changed since; True if any did."""
        changed = False
        for index, ranges in list(self._snapshots.items()):
            first = min(start for start, _ in ranges)
            now = self._read(first, max(start + len(data) for start, data in ranges) - first)  # (one read a window)
            if any(now[start - first: start - first + len(data)] != data for start, data in ranges):
                self.state.rows(index)[:] = 0
                self._costs[index][:] = 0
                self._summed.pop(index, None)
                del self._snapshots[index]
                changed = True
        if changed:
            self.state.clear_block_cache()
            self._forget_pieces()
        return changed

    def _forget_pieces(self) -> None:
        self._pieces.clear()
        self._piece_starts.clear()
        self._states.clear()


def _last_start(start: int, length: int, rows: np.ndarray) -> int:
    """The address of the last instruction of `length` bytes decoded at `start` into `rows`."""
    return start + length - (4 if rows[-1, KIND] == KIND_CONTINUATION else 2)


def _table_and_places(found: list) -> tuple[np.ndarray, np.ndarray]:
    """Rows copied from the decode store as one table and each row's place in it: the store
    file's table where they are all its Places, else their rows, placed in order."""
    if all(isinstance(rows, Places) and rows.table is found[0].table for rows in found):
        return found[0].table, np.concatenate([rows.places for rows in found])
    table = np.concatenate([rows.rows() if isinstance(rows, Places) else rows for rows in found])
    return table, np.arange(len(table))


def _instruction_count(kinds: np.ndarray) -> int:
    """The instructions among rows of these kinds (a 32-bit one's second halfword is no other)."""
    return len(kinds) - int(np.count_nonzero(kinds == KIND_CONTINUATION))


def may_move_sp(mnemonic: str, operands: str) -> int:
    """Whether an instruction may change SP (so the next block reads it for the stack peak):
    1 for PUSH/VPUSH, SP as the destination (SUB/ADD/MOV/LDR sp, ...), writeback on SP (STMDB sp!,
    STR ..., [sp, #-4]!) or MSR to MSP or PSP; SP_SELECT for MSR CONTROL, which may switch
    stacks (the next block reads CONTROL too); else 0. Conservative: a false positive costs one
    register read."""
    if mnemonic.startswith("msr") and operands.startswith("control"):
        return SP_SELECT
    return int(mnemonic.startswith(("push", "vpush")) or operands.startswith("sp") or "sp!" in operands
               or ("[sp" in operands and "]!" in operands)
               or (mnemonic.startswith("msr") and operands.startswith(("msp", "psp"))))


_CONTINUATION = [KIND_CONTINUATION if field == KIND else 0 for field in range(FIELDS)]
_STATIC: dict[int, tuple] = {}  # Instruction.shape -> _static_row


def _static_row(insn) -> tuple[tuple, bool]:
    """The row of `insn` as far as it depends on the instruction alone (KIND_START, the FP,
    unmask, ISB, class, divide and call fields, the memory-access start flag; the rest 0), and
    whether the machine watches it (FP, divide, SEV)."""
    key = getattr(insn, "shape", None)  # None: a capstone instruction, analysed afresh
    static = _STATIC.get(key) if key is not None else None
    if static is None:
        mnemonic, operands = insn.mnemonic, insn.op_str
        row = [0] * FIELDS
        row[KIND], row[F_INSTRUCTIONS] = KIND_START, 1
        row[F_FP] = int(mnemonic.startswith("v"))
        row[F_UNMASK] = int(_may_unmask(mnemonic, operands))
        row[F_ISB] = int(mnemonic == "isb")
        row[F_SP_WRITE] = may_move_sp(mnemonic, operands)
        row[F_START_FLAGS] = int(_is_memory(insn)) << 5
        row[F_REFILL] = CALL_FLAG if mnemonic in ("bl", "blx") else 0
        row[F_DIVIDE] = _divide_operands(mnemonic, operands)
        row[F_CLASS_A], row[F_CLASS_B], row[F_CLASS_C] = packed(*power_class(insn, mnemonic, operands))
        # (a tuple: ints in a tuple are left alone by the garbage collector, and this is kept per shape)
        static = (tuple(row), mnemonic.startswith(("v", "sdiv", "udiv", "sev")))
        if key is not None:
            if len(_STATIC) >= MAX_KNOWN:
                _STATIC.clear()
            _STATIC[key] = static
    return static


_COSTED: dict[tuple, tuple] = {}  # (Instruction.shape, id of a Cost) -> (the Cost, what _costed_row gives)


def _costed_row(insn, cost, memo: bool = True) -> tuple[list, bool, bool, bool]:
    """(the row of `insn` costing `cost`, as far as it depends on the instruction's encoding
    class: the static row with the cost's fields; whether the machine watches it; whether it
    may make a PC-relative read (literal_read then says, from its bytes); whether it is a B,
    which is a self-loop when its target is its own address). The timing models memoise their
    Cost objects, so an encoding class costed alike finds the row made the first time (the
    entry keeps its Cost alive, so the id is not reused while it stands); `memo` False for a
    model that does not (its Costs would fill the memo with entries never found again)."""
    shape = getattr(insn, "shape", None)
    key = (shape, id(cost)) if shape is not None and memo else None
    known = _COSTED.get(key) if key is not None else None
    if known is not None and known[0] is cost:
        return known[1]
    static, special = _static_row(insn)
    row = list(static)
    row[F_CYCLES] = cost.cycles
    row[F_COUNTS] = cost.lsu | cost.cpi << LANE | cost.folded << 2 * LANE
    row[F_STALLS] = cost.stall_refill | cost.stall_interlock << LANE | cost.stall_divide << 2 * LANE
    row[F_START_ADJUST] = cost.start_adjust
    row[F_START_FLAGS] |= cost.stall_interlock | cost.start_fold << 4
    row[F_REFILL] |= cost.refill
    literal = insn.cc in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and base_mnemonic(insn) in LITERAL_LOADS
    made = (row, special, literal, insn.mnemonic in ("b", "b.w"))
    if key is not None:
        if len(_COSTED) >= MAX_KNOWN:
            _COSTED.clear()
        _COSTED[key] = (cost, made)
    return made


def _plain_disassemble(code: bytes, start: int, end: int) -> dict:
    """Capstone detail instructions of code[: end - start] at `start` by address (the reference
    path: no memo)."""
    return {insn.address: insn for insn in decodable_runs(package_disassembler(True).disasm, code, start, end)}


def _is_memory(insn) -> bool:
    return is_memory(base_mnemonic(insn))


def _divide_operands(mnemonic: str, operands: str) -> int:
    """For SDIV/UDIV: dividend id | divisor id << 10 | signed << 20 | 1 << 21 (see native.divide_hook)."""
    if not mnemonic.startswith(("sdiv", "udiv")):
        return 0
    names = [name.strip() for name in operands.split(",")]
    dividend, divisor = (names[-2], names[-1]) if len(names) >= 2 else (names[0], names[0])
    if dividend not in UNICORN_REGISTERS or divisor not in UNICORN_REGISTERS:
        return 0
    return (UNICORN_REGISTERS[dividend] | UNICORN_REGISTERS[divisor] << 10
            | int(mnemonic.startswith("sdiv")) << 20 | 1 << 21)


def _may_unmask(mnemonic: str, operands: str) -> bool:
    """CPSIE, or MSR to a priority mask: a pending interrupt may become takeable after it."""
    if mnemonic.startswith("cpsie"):
        return True
    return mnemonic.startswith("msr") and operands.split(",")[0].strip() in (
        "primask", "basepri", "basepri_max", "faultmask")


def code_ranges(segments, mapping_symbols) -> list[tuple[int, int]]:
    """Thumb code ranges of the executable segments, split at ARM mapping symbols ($t/$d)."""
    ranges = []
    for segment in segments:
        if not segment.executable or not segment.data or segment.vaddr != segment.paddr:
            continue
        start, end = segment.vaddr, segment.vaddr + len(segment.data)
        marks = [(a, k) for a, k in mapping_symbols if start <= a < end]
        if not marks:
            continue  # stripped image: blocks are decoded when they first execute
        for (address, kind), nxt in zip(marks, marks[1:] + [(end, "$d")]):
            if kind == "$t" and nxt[0] > address:
                ranges.append((address, nxt[0]))
    return ranges
