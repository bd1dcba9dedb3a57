"""NativeState, the Python side of the shared buffer: allocating it, the code windows and
their decode tables, and reading counters at an instruction inside the executing block."""
from __future__ import annotations

import numpy as np

from ... import pages
from .layout import (
    BLOCK_ADDRESS, BLOCK_ADJUSTED, BLOCK_CACHE, BLOCK_SIZE, CACHE_ENTRIES, CACHE_ENTRY, CODE_PC, CYCLE_LIMIT,
    DATA_START, DEADLINE, ENDS_IN_BRANCH, FIELDS, HOST_LINE_SLOTS, FL_BLOCK_LINES, FL_BLOCK_LITERALS, FL_BUFFER_LINE, FL_CURRENT,
    FL_DC_HITS, FL_DC_MISSES, FL_DC_ON, FL_IC_HITS, HEADER_LENGTH, HOLD_REPEATS, FL_IC_MISSES, FL_IC_ON, FL_LINE_RECORDS, FL_LINE_SHIFT,
    FL_PREFETCH_LINE, FL_RECORD, F_CYCLES, F_START_FLAGS, KIND, LAZY_FP_AT, LAZY_FP_PENDING, LINE_RECORD_AREA,
    LITERAL_RECORD, LITERAL_RECORD_AREA, LIT_INSN, LIT_MISSED, LIT_PORT, MAX_WINDOWS, PREVIOUS_END, PROFILE_EXTRA,
    PROFILE_TABLE, STEP_LIMIT, TOTAL_LENGTH, WINDOW, WINDOW_COUNT, WINDOW_TABLE, W_BASE, W_SIZE, W_TABLES)
from .encoding import KIND_SELF_LOOP, KIND_START
from .tables import _value_at, range_sums
from .counters import PER_INSTRUCTION, header_at, totals
from .profile import line_settle
from .memory_model import cache_forget, flash_cache_forget, flash_offset


def _zeros(slots: int) -> np.ndarray:
    """A zeroed int64 buffer that starts on a host cache line (HOST_LINE_SLOTS), so that each block
    cache entry is whole lines: the block hook reads the first of them for every block. In small
    pages (mcusim.pages): a run writes a little of it here and there."""
    raw = pages.zeros(slots + HOST_LINE_SLOTS, np.int64)
    skip = (-raw.ctypes.data % (8 * HOST_LINE_SLOTS)) // 8
    return raw[skip: skip + slots]


class NativeState:
    """Owns the shared buffer: header fields, code windows and their decode tables."""

    WINDOW_BYTES = 0x1000  # small windows: re-summing one after a decode stays cheap

    def __init__(self, capacity_halfwords: int = 1 << 17):
        self.buffer = _zeros(DATA_START + FIELDS * (capacity_halfwords + MAX_WINDOWS))
        self.buffer[CODE_PC] = -1
        self.buffer[TOTAL_LENGTH] = len(self.buffer)
        self.buffer[DEADLINE] = np.iinfo(np.int64).max
        self.buffer[CYCLE_LIMIT] = np.iinfo(np.int64).max
        self.buffer[STEP_LIMIT] = np.iinfo(np.int64).max
        self.buffer[FL_LINE_RECORDS] = LINE_RECORD_AREA
        self.buffer[FL_CURRENT] = -1
        self.buffer[LAZY_FP_AT] = -1
        self.buffer[HOLD_REPEATS] = 1
        self.next_free = DATA_START
        self.windows_start = DATA_START  # after the tables reserve() handed out
        self.windows: list[tuple[int, int, int]] = []  # (base, size_bytes, offset)
        self._window_index: dict[int, int] = {}        # base -> index in windows
        self.on_reallocate = None  # called with the new buffer when it grows
        self.start_prefix = None   # (block, pc) -> part of a dual-issue block-start correction before pc

    def reserve(self, slots: int) -> int:
        """Slots of the buffer for a table of the hooks' own (before any code is decoded)."""
        if self.windows:
            raise RuntimeError("reserve() after code was decoded")
        offset = self.next_free
        self.next_free += slots
        self.windows_start = self.next_free
        if self.next_free > len(self.buffer):
            self._grow(self.next_free + FIELDS * (1 << 17))
        return offset

    def _grow(self, slots: int) -> None:
        """A buffer of `slots` in place of the shorter one, holding what it held."""
        grown = _zeros(slots)
        grown[: len(self.buffer)] = self.buffer
        grown[TOTAL_LENGTH] = len(grown)
        self.buffer = grown

    def __getitem__(self, slot: int) -> int:
        return int(self.buffer[slot])

    def __setitem__(self, slot: int, value: int) -> None:
        self.buffer[slot] = value

    @property
    def address(self) -> int:
        return self.buffer.ctypes.data

    def window_for(self, address: int) -> int | None:
        return self._window_index.get(address - address % self.WINDOW_BYTES)

    @property
    def full(self) -> bool:
        return len(self.windows) >= MAX_WINDOWS

    def clear_block_cache(self) -> None:
        """Block summaries are built from the decode tables: drop them when the tables change."""
        self.buffer[BLOCK_CACHE: BLOCK_CACHE + CACHE_ENTRIES * CACHE_ENTRY] = 0

    def clear_windows(self) -> None:
        """Forget every decoded window (code spread over more than MAX_WINDOWS windows)."""
        self.clear_block_cache()
        self.windows = []
        self._window_index = {}
        self.next_free = self.windows_start
        self.buffer[WINDOW_COUNT] = 0
        self.buffer[self.windows_start:] = 0

    def add_window(self, base: int, size_bytes: int) -> int:
        """Add a window of decode tables covering [base, base+size_bytes)."""
        halfwords = size_bytes >> 1
        need = FIELDS * (halfwords + 1)
        if self.next_free + need > len(self.buffer):
            # room for all MAX_WINDOWS at once: pages never written cost nothing (an anonymous
            # mapping), while doubling copied the whole buffer each time, 0.3 to 0.5 s at 84 MB
            # in code running away through RAM, which the time limit waited for
            room = self.windows_start + MAX_WINDOWS * need
            self._grow(max(2 * len(self.buffer), self.next_free + need + DATA_START, room))
            if self.on_reallocate:
                self.on_reallocate(self.buffer)
        offset = self.next_free
        self.next_free += need
        index = len(self.windows)
        self.windows.append((base, size_bytes, offset))
        self._window_index[base] = index
        row = WINDOW_TABLE + WINDOW * index
        self.buffer[row + W_BASE], self.buffer[row + W_SIZE], self.buffer[row + W_TABLES] = base, size_bytes, offset
        self.buffer[WINDOW_COUNT] = len(self.windows)
        return index

    def tables(self, index: int) -> list[np.ndarray]:
        """Views of one window's FIELDS arrays (KIND, then the prefix sums), each halfwords + 1 long."""
        base, size, offset = self.windows[index]
        end = offset + FIELDS * ((size >> 1) + 1)
        return [self.buffer[offset + f: end: FIELDS] for f in range(FIELDS)]

    def rows(self, index: int) -> np.ndarray:
        """One window's tables as a (halfwords + 1, FIELDS) view: row i is halfword i's KIND and
        fields (the prefix sums up to it), so a range of rows is written in one assignment."""
        base, size, offset = self.windows[index]
        return self.buffer[offset: offset + FIELDS * ((size >> 1) + 1)].reshape(-1, FIELDS)

    def sums_between(self, start: int, end: int) -> list[int]:
        """Sums of the cumulative fields over the decoded instructions in [start, end) (the
        native tables.range_sums: up to the first address not decoded)."""
        sums = np.zeros(FIELDS, np.int64)
        range_sums(self.buffer, np.int64(start), np.int64(end), sums)
        return [int(v) for v in sums]

    def static_cycles(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """Per halfword of [start, end): the static cycles of the instruction starting there
        (0 for second halfwords and code never decoded), and whether one starts there."""
        cycles = np.zeros((end - start) // 2, np.int64)
        starts = np.zeros((end - start) // 2, bool)
        for base, size, _ in self.windows:
            low, high = max(start, base), min(end, base + size)
            if low < high:
                tables = self.tables(self.window_for(base))
                a, b = (low - base) >> 1, (high - base) >> 1
                cycles[(low - start) >> 1: (high - start) >> 1] = np.diff(tables[F_CYCLES][a: b + 1])
                kinds = tables[KIND][a: b]
                starts[(low - start) >> 1: (high - start) >> 1] = (kinds == KIND_START) | (kinds == KIND_SELF_LOOP)
        return cycles, starts

    def value_at(self, address: int, field: int) -> int:
        """A per-instruction field's value at `address` (0 where nothing is decoded)."""
        return int(_value_at(self.buffer, np.int64(address), np.int64(field)))

    def header_at(self, pc: int) -> np.ndarray:
        """A copy of the header with the counters at the instruction `pc` of the executing block
        (counters.header_at; this adds what only Python knows: the decoder's dual-issue prefix)."""
        b = self.buffer
        block, size = int(b[BLOCK_ADDRESS]), int(b[BLOCK_SIZE])
        prefix, has_prefix = (0, 0, 0), 0
        if (block < pc < block + size and b[BLOCK_ADJUSTED] and self.start_prefix is not None
                and (self.value_at(block, F_START_FLAGS) >> 6) & 1):
            prefix, has_prefix = self.start_prefix(block, pc), 1
        header = np.empty(HEADER_LENGTH, np.int64)
        header_at(b, np.int64(pc), np.int64(prefix[0]), np.int64(prefix[1]), np.int64(prefix[2]),
                  np.int64(has_prefix), header)
        return header

    def counters_at(self, pc: int) -> dict[str, int]:
        """Counter totals (counters.COUNTERS, the per-instruction ones) at the instruction `pc`
        of the executing block (see counters.header_at)."""
        return totals(self.header_at(pc))

    def fetch_records(self) -> list[tuple[int, int, int, int]]:
        """The executing block's flash lines that waited or missed: (address, stall, contention, line + 1)."""
        start = int(self.buffer[FL_LINE_RECORDS])
        rows = self.buffer[start: start + FL_RECORD * int(self.buffer[FL_BLOCK_LINES])]
        return [tuple(int(v) for v in rows[i: i + FL_RECORD]) for i in range(0, len(rows), FL_RECORD)]

    def count_at(self, pc: int) -> tuple[int, int]:
        """(cycles, instructions) at the instruction `pc` of the executing block."""
        counters = self.counters_at(pc)
        return counters["cycles"], counters["instructions"]

    def settle_at(self, pc: int) -> None:
        """After a stop inside a block: keep only what the instructions before `pc` cost; the
        rest of the block will run as a new block that follows on in sequence."""
        b = self.buffer
        inside = int(b[BLOCK_ADDRESS]) <= pc < int(b[BLOCK_ADDRESS]) + int(b[BLOCK_SIZE])
        if inside:
            b[ENDS_IN_BRANCH] = 0
            b[PREVIOUS_END] = pc
            if b[PROFILE_TABLE] != 0:
                t = int(b[PROFILE_TABLE])
                line_settle(b, np.int64(t + 1 + 4 * int(b[t]) + 2 * PROFILE_EXTRA), b[BLOCK_ADDRESS], np.int64(pc),
                            np.int64(self.sums_between(int(b[BLOCK_ADDRESS]), pc)[F_CYCLES]))
        header = self.header_at(pc)
        for counter in PER_INSTRUCTION:
            b[counter.slot] = header[counter.slot]
        if inside:
            if pc <= b[LAZY_FP_AT]:
                b[LAZY_FP_PENDING] = 1
            b[LAZY_FP_AT] = -1
            self._forget_fetches_after(pc)
            self._forget_literals_after(pc)

    def _forget_fetches_after(self, pc: int) -> None:
        """The rest of the block will run again: the lines it fetched ahead of `pc` were not yet
        needed, so take them back out of the instruction cache and the fetch buffer."""
        b = self.buffer
        g = int(b[FL_CURRENT])
        if g < 0:
            return
        kept = [r for r in self.fetch_records() if r[0] <= pc]
        misses_after = 0
        for address, _, _, missed in self.fetch_records():
            if address > pc and missed:
                flash_cache_forget(b, g, missed - 1)
                misses_after += 1
        offset = flash_offset(b, g, pc)
        if offset >= 0:
            shift = int(b[g + FL_LINE_SHIFT])
            if b[g + FL_IC_ON]:  # every line after pc's was counted as a hit or a miss: it will be again
                last_line = flash_offset(b, g, int(b[BLOCK_ADDRESS] + b[BLOCK_SIZE]) - 1) >> shift
                b[g + FL_IC_MISSES] -= misses_after
                b[g + FL_IC_HITS] -= max(0, last_line - (offset >> shift) - misses_after)
            b[g + FL_BUFFER_LINE] = offset >> shift
            b[g + FL_PREFETCH_LINE] = -1
        b[FL_BLOCK_LINES] = len(kept)

    def _forget_literals_after(self, pc: int) -> None:
        """The instructions from `pc` on will run again, literal reads included: take the lines
        those reads allocated back out of the data cache, and their hits and misses off the
        counts (header_at already took their waits back)."""
        b = self.buffer
        kept = 0
        for i in range(int(b[FL_BLOCK_LITERALS])):
            record = LITERAL_RECORD_AREA + LITERAL_RECORD * i
            if b[record + LIT_INSN] < pc:
                kept += 1
                continue
            g, outcome = int(b[record + LIT_PORT]), int(b[record + LIT_MISSED])
            if outcome > 0:
                cache_forget(b, g, FL_DC_ON, outcome - 1)
                b[g + FL_DC_MISSES] -= 1
            elif outcome == 0:
                b[g + FL_DC_HITS] -= 1
        b[FL_BLOCK_LITERALS] = kept
