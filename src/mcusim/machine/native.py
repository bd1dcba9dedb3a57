"""The native (numba) block hook and the shared state it reads and writes.

One int64 numpy buffer holds everything the hook touches: a header of counters and
requests, a table of code windows, and per-window per-halfword decode tables (KIND and
prefix sums, see FIELDS). The hook runs at the start of every translated block, before the block
executes: it checks the deadline, looks up the block's cost as a prefix-sum difference and
adds it. When it stops emulation (deadline, undecoded code, a self-loop, FP with the FPU
disabled) the block has not executed and is not counted.
"""
from __future__ import annotations

import ctypes

import llvmlite.binding
import numba
import numpy as np
from numba import carray, types
from unicorn.unicorn_py3.unicorn import uclib

# Header slots.
CYCLES = 0
INSTRUCTIONS = 1
DEADLINE = 2          # stop before the first block that starts at cycles >= DEADLINE
STOP_REASON = 3
STOP_ADDRESS = 4
STOP_SIZE = 5
BLOCK_ADDRESS = 6     # the block executing now (last one the hook let run)
BLOCK_SIZE = 7
LAST_WINDOW = 8       # the window of the last block (checked first)
FPU_ENABLED = 10
WINDOW_COUNT = 11
PENDING_MASKED = 13   # an enabled exception is pending but masked: stop after unmasking code
WATCH_ISB = 14        # code was decoded from writable memory: stop after an ISB to re-check it
CODE_PC = 15          # PC of the executing instruction, where the exact-PC code hook is installed (else -1)
TOTAL_LENGTH = 12
REFILL_BRANCH = 16    # core data: cycles a taken branch adds (P) ...
REFILL_WIDE_ODD = 17  # ... and again when its target is a 32-bit instruction at an odd halfword
LSU_TOTAL = 18        # DWT LSUCNT / CPICNT / FOLDCNT events, unwrapped
CPI_TOTAL = 19
FOLD_TOTAL = 20
REFILL_TOTAL = 24     # cycles spent refilling the pipeline (taken branches, loads into PC)
ENDS_IN_BRANCH = 25   # F_REFILL of the last instruction of the block that ran last
BLOCK_ADJUSTED = 26   # 1 when the executing block was entered out of sequence (start adjustments applied)
PREVIOUS_UNMASK = 38  # CPSIE/MSR-mask count of the block that ran last
PREVIOUS_ISB = 39     # ISB count of the block that ran last
DIVIDE_TOTAL = 27     # cycles divides took beyond their static minimum
DIVIDE_ZERO = 28      # core data for divide early termination (cores/*.toml)
DIVIDE_SHORT = 29
DIVIDE_BASE = 30
DIVIDE_BITS_PER_CYCLE = 31
DIVIDE_MIN = 32
SCRATCH = 33          # uc_reg_read writes here
PREVIOUS_END = 34     # end address of the block that ran last (kept across Python stops)
INTERLOCK_TOTAL = 35  # address-interlock stall cycles
DATA_WAIT_TOTAL = 36  # wait cycles of data reads from slow memory
WAIT_REGIONS = 37     # count of (start, end, wait cycles) triples from WAIT_TABLE on
WAIT_TABLE = 48       # up to 8 regions
HEADER_LENGTH = 72
MAX_WINDOWS = 1024
WINDOW_TABLE = HEADER_LENGTH          # per window: base, size_bytes, offset of its tables
# Block summary cache, direct-mapped by block address: what a block costs, ready to add.
# Entry: address, size, cycles, instructions, counts, stalls, start adjust, start flags,
# F_REFILL of its last instruction, wide first instruction, FP, unmask and ISB counts,
# starts with a self-loop. Cleared whenever decoding changes the tables.
CACHE_ENTRIES = 4096
CACHE_ENTRY = 14
BLOCK_CACHE = WINDOW_TABLE + 3 * MAX_WINDOWS
DATA_START = BLOCK_CACHE + CACHE_ENTRIES * CACHE_ENTRY

# STOP_REASON values.
STOP_NONE = 0
STOP_DEADLINE = 1
STOP_DECODE = 2
STOP_SELF_LOOP = 3
STOP_FPU_DISABLED = 4
STOP_UNMASKED = 5
STOP_ISB = 6

# Per-halfword kinds.
KIND_UNKNOWN = 0
KIND_START = 1
KIND_CONTINUATION = 2
KIND_SELF_LOOP = 3    # an instruction start that branches to itself (`b .`)

# Call uc_emu_stop by symbol name (not through a ctypes pointer) so numba can cache the hook.
llvmlite.binding.load_library_permanently(uclib._name)
_uc_emu_stop = types.ExternalFunction("uc_emu_stop", types.int32(types.voidptr))
_uc_reg_read = types.ExternalFunction("uc_reg_read", types.int32(types.voidptr, types.int32, types.intp))

BLOCK_HOOK_SIGNATURE = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)


# Per-window tables: for each of the window's halfwords + 1, FIELDS int64 side by side (one
# block's look-ups touch few cache lines). KIND holds the halfword's kind; the cumulative
# fields are prefix sums over the halfwords (value of [a, b) = t[b] - t[a]).
KIND = 0
F_CYCLES = 1
F_INSTRUCTIONS = 2
F_FP = 3          # floating-point instructions (NOCP check while CPACR denies the FPU)
F_UNMASK = 4      # CPSIE / MSR to a priority mask
F_ISB = 5         # ISB: code in RAM may have been rewritten before it
F_COUNTS = 6      # summed, packed: DWT extra load/store cycles (LSUCNT) | other extra cycles (CPICNT) << 21
#                   | folded instructions (FOLDCNT) << 42
F_STALLS = 7      # summed, packed: refill | interlock << 21 | divide << 42 (cycles of each kind)
F_START_ADJUST = 8  # per instruction (not summed): extra cycles when it starts a block
F_START_FLAGS = 9   # per instruction (not summed): what a block start takes back: interlock cycles (bits 0-3),
#                     an IT fold (bit 4), interlock counted as LSU (bit 5) rather than CPI
F_REFILL = 10       # per instruction (not summed): branch kind (1 if taken, 2 always) | fixed refill cycles << 2
F_DIVIDE = 11       # per instruction (not summed): a divide's operands (see divide_hook), else 0
FIELDS = 12
SUMMED_FIELDS = (F_CYCLES, F_INSTRUCTIONS, F_FP, F_UNMASK, F_ISB, F_COUNTS, F_STALLS)
LANE = 21           # packed fields: three 21-bit lanes (a window's sums stay far below 2**21)
LANE_MASK = (1 << LANE) - 1


@numba.njit(cache=True)
def _window_of(st, address):
    w = st[LAST_WINDOW]
    if w < st[WINDOW_COUNT]:
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            return w
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            st[LAST_WINDOW] = w
            return w
    return -1


@numba.njit(cache=True)
def _kind_at(st, address):
    w = _window_of(st, address)
    if w < 0:
        return KIND_UNKNOWN
    return st[st[WINDOW_TABLE + 3 * w + 2] + FIELDS * ((address - st[WINDOW_TABLE + 3 * w]) >> 1) + KIND]


@numba.njit(cache=True)
def _range_sum(st, start, end, field):
    """Sum of `field` over the instructions in [start, end), across windows; -1 if undecoded."""
    total = 0
    while start < end:
        w = _window_of(st, start)
        if w < 0:
            return -1
        base = st[WINDOW_TABLE + 3 * w]
        size = st[WINDOW_TABLE + 3 * w + 1]
        table = st[WINDOW_TABLE + 3 * w + 2] + field
        chunk_end = min(end, base + size)
        total += st[table + FIELDS * ((chunk_end - base) >> 1)] - st[table + FIELDS * ((start - base) >> 1)]
        start = chunk_end
    return total


@numba.njit(cache=True)
def _value_at(st, address, field):
    """A per-instruction (not summed) field's value at `address`."""
    w = _window_of(st, address)
    if w < 0:
        return 0
    base = st[WINDOW_TABLE + 3 * w]
    return st[st[WINDOW_TABLE + 3 * w + 2] + FIELDS * ((address - base) >> 1) + field]


@numba.njit(cache=True)
def _ends_in_branch(st, end):
    """F_REFILL of the instruction that ends at `end`."""
    last = end - 2
    if _kind_at(st, last) == KIND_CONTINUATION:
        last -= 2
    return _value_at(st, last, F_REFILL)


@numba.njit(cache=True)
def _refill_after_branch(st, address, wide_target):
    """The previous block ended with a branch that was taken: an unconditional one (2), or a
    conditional one (1) whose next block is not its fall-through."""
    branch = st[ENDS_IN_BRANCH]
    kind = branch & 3
    if kind == 0 or kind == 1 and address == st[PREVIOUS_END]:
        return  # (Python clears ENDS_IN_BRANCH when it moves the PC itself: exception entry/return)
    refill = branch >> 2
    if refill == 0:
        refill = st[REFILL_BRANCH]
        if address & 2 and wide_target:
            refill += st[REFILL_WIDE_ODD]
    st[CYCLES] += refill
    st[CPI_TOTAL] += refill
    st[REFILL_TOTAL] += refill


@numba.njit(cache=True)
def _start_adjust(st, adjust, flags, sign):
    """Apply (sign 1) or undo (-1) what entering a block out of sequence changes: its first
    instruction has no neighbour to pipeline, interlock or fold with."""
    interlock = flags & 15
    fold = (flags >> 4) & 1
    pipelining = adjust + interlock - fold  # cycles a lost load pipelining adds (LSU)
    st[CYCLES] += sign * adjust
    st[LSU_TOTAL] += sign * pipelining
    if (flags >> 5) & 1:
        st[LSU_TOTAL] -= sign * interlock
    else:
        st[CPI_TOTAL] -= sign * interlock
    st[FOLD_TOTAL] -= sign * fold
    st[INTERLOCK_TOTAL] -= sign * interlock


@numba.njit(cache=True)
def _summarize(st, address, size, entry):
    """Fill the block cache entry from the decode tables; False if the block is not decoded."""
    end = address + size
    w = _window_of(st, address)
    base = st[WINDOW_TABLE + 3 * w] if w >= 0 else 0
    window_end = base + st[WINDOW_TABLE + 3 * w + 1] if w >= 0 else 0
    if w >= 0 and end <= window_end:  # the common case: the whole block in one window
        offset = st[WINDOW_TABLE + 3 * w + 2]
        row_first = offset + FIELDS * ((address - base) >> 1)
        row_last = offset + FIELDS * ((end - base) >> 1)
        first_kind = st[row_first + KIND]
        last_kind = st[row_last - FIELDS + KIND]
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or last_kind == KIND_UNKNOWN:
            return False
        last_start = row_last - 2 * FIELDS if last_kind == KIND_CONTINUATION else row_last - FIELDS
        st[entry + 2] = st[row_last + F_CYCLES] - st[row_first + F_CYCLES]
        st[entry + 3] = st[row_last + F_INSTRUCTIONS] - st[row_first + F_INSTRUCTIONS]
        st[entry + 4] = st[row_last + F_COUNTS] - st[row_first + F_COUNTS]
        st[entry + 5] = st[row_last + F_STALLS] - st[row_first + F_STALLS]
        st[entry + 6] = st[row_first + F_START_ADJUST]
        st[entry + 7] = st[row_first + F_START_FLAGS]
        st[entry + 8] = st[last_start + F_REFILL]
        st[entry + 9] = 1 if st[row_first + FIELDS + KIND] == KIND_CONTINUATION else 0
        st[entry + 10] = st[row_last + F_FP] - st[row_first + F_FP]
        st[entry + 11] = st[row_last + F_UNMASK] - st[row_first + F_UNMASK]
        st[entry + 12] = st[row_last + F_ISB] - st[row_first + F_ISB]
    else:
        first_kind = _kind_at(st, address)
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or _kind_at(st, end - 2) == KIND_UNKNOWN:
            return False
        fp = _range_sum(st, address, end, F_FP)
        if fp < 0:
            return False
        st[entry + 2] = _range_sum(st, address, end, F_CYCLES)
        st[entry + 3] = _range_sum(st, address, end, F_INSTRUCTIONS)
        st[entry + 4] = _range_sum(st, address, end, F_COUNTS)
        st[entry + 5] = _range_sum(st, address, end, F_STALLS)
        st[entry + 6] = _value_at(st, address, F_START_ADJUST)
        st[entry + 7] = _value_at(st, address, F_START_FLAGS)
        st[entry + 8] = _ends_in_branch(st, end)
        st[entry + 9] = 1 if _kind_at(st, address + 2) == KIND_CONTINUATION else 0
        st[entry + 10] = fp
        st[entry + 11] = _range_sum(st, address, end, F_UNMASK)
        st[entry + 12] = _range_sum(st, address, end, F_ISB)
    st[entry + 13] = 1 if first_kind == KIND_SELF_LOOP else 0
    st[entry] = address
    st[entry + 1] = size
    return True


@numba.cfunc(BLOCK_HOOK_SIGNATURE, cache=True)
def block_hook(uc, address_u64, size_u32, user_data):
    address = np.int64(address_u64)  # int64 throughout: uint64 mixed with int64 becomes float in numba
    size = np.int64(size_u32)
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    if st[CYCLES] >= st[DEADLINE]:
        st[STOP_REASON] = STOP_DEADLINE
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[BLOCK_SIZE] != 0 and (st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0
                                or st[WATCH_ISB] != 0 and st[PREVIOUS_ISB] > 0):
        st[STOP_REASON] = STOP_UNMASKED if st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0 else STOP_ISB
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    entry = BLOCK_CACHE + ((address >> 1) & (CACHE_ENTRIES - 1)) * CACHE_ENTRY
    if st[entry + 1] != size or st[entry] != address:
        if not _summarize(st, address, size, entry):
            st[STOP_REASON] = STOP_DECODE
            st[STOP_ADDRESS] = address
            st[STOP_SIZE] = size
            _uc_emu_stop(uc)
            return
    if st[FPU_ENABLED] == 0 and st[entry + 10] > 0:
        st[STOP_REASON] = STOP_FPU_DISABLED
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    if st[entry + 13] != 0:
        st[STOP_REASON] = STOP_SELF_LOOP
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    out_of_sequence = address != st[PREVIOUS_END]
    _refill_after_branch(st, address, st[entry + 9] != 0)
    st[ENDS_IN_BRANCH] = st[entry + 8]
    st[PREVIOUS_END] = address + size
    st[PREVIOUS_UNMASK] = st[entry + 11]
    st[PREVIOUS_ISB] = st[entry + 12]
    st[BLOCK_ADDRESS] = address
    st[BLOCK_SIZE] = size
    st[CODE_PC] = -1
    counts = st[entry + 4]
    stalls = st[entry + 5]
    st[CYCLES] += st[entry + 2]
    st[INSTRUCTIONS] += st[entry + 3]
    st[LSU_TOTAL] += counts & LANE_MASK
    st[CPI_TOTAL] += (counts >> LANE) & LANE_MASK
    st[FOLD_TOTAL] += counts >> (2 * LANE)
    st[REFILL_TOTAL] += stalls & LANE_MASK
    st[INTERLOCK_TOTAL] += (stalls >> LANE) & LANE_MASK
    st[DIVIDE_TOTAL] += stalls >> (2 * LANE)
    st[BLOCK_ADJUSTED] = 0
    if out_of_sequence and (st[entry + 6] != 0 or st[entry + 7] != 0):
        _start_adjust(st, st[entry + 6], st[entry + 7], 1)
        st[BLOCK_ADJUSTED] = 1


@numba.njit(cache=True)
def _significant_bits(value):
    bits = 0
    while value:
        value >>= 1
        bits += 1
    return bits


@numba.njit(cache=True)
def _read_register(uc, header, register):
    header[SCRATCH] = 0
    _uc_reg_read(uc, register, header.ctypes.data + 8 * SCRATCH)
    return header[SCRATCH] & 0xFFFFFFFF


@numba.cfunc(BLOCK_HOOK_SIGNATURE, cache=True)
def divide_hook(uc, address, size, user_data):
    """Before a divide: its early-termination cost from the operand values.

    F_DIVIDE packs the Unicorn register ids: dividend | divisor << 10 | signed << 20, plus 1 << 21.
    """
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    info = _value_at(st, np.int64(address), F_DIVIDE)
    if info == 0:
        return
    dividend = _read_register(uc, header, np.int32(info & 0x3FF))
    divisor = _read_register(uc, header, np.int32((info >> 10) & 0x3FF))
    if (info >> 20) & 1:
        if dividend & 0x80000000:
            dividend = (0x100000000 - dividend) & 0xFFFFFFFF
        if divisor & 0x80000000:
            divisor = (0x100000000 - divisor) & 0xFFFFFFFF
    if dividend == 0 or divisor == 0:
        cycles = st[DIVIDE_ZERO]
    else:
        a = _significant_bits(dividend)
        b = _significant_bits(divisor)
        if a < b:
            cycles = st[DIVIDE_SHORT]
        else:
            cycles = st[DIVIDE_BASE] + (a - b) // st[DIVIDE_BITS_PER_CYCLE]
    extra = cycles - st[DIVIDE_MIN]
    st[CYCLES] += extra
    st[CPI_TOTAL] += extra
    st[DIVIDE_TOTAL] += extra


MEMORY_HOOK_SIGNATURE = types.void(types.voidptr, types.int32, types.uint64, types.int32, types.int64,
                                   types.voidptr)


@numba.cfunc(MEMORY_HOOK_SIGNATURE, cache=True)
def data_wait_hook(uc, access, address_u64, size, value, user_data):
    """A data read from memory with wait states (registered on those ranges only)."""
    header = carray(user_data, (DATA_START,), np.int64)
    address = np.int64(address_u64)
    for i in range(header[WAIT_REGIONS]):
        entry = WAIT_TABLE + 3 * i
        if header[entry] <= address < header[entry + 1]:
            wait = header[entry + 2]
            header[CYCLES] += wait
            header[LSU_TOTAL] += wait
            header[DATA_WAIT_TOTAL] += wait
            return


@numba.cfunc(BLOCK_HOOK_SIGNATURE, cache=True)
def exact_pc_hook(uc, address, size, user_data):
    """Per-instruction hook, installed only on blocks that read time-dependent registers."""
    header = carray(user_data, (DATA_START,), np.int64)
    header[CODE_PC] = np.int64(address)


class NativeState:
    """Owns the shared buffer: header fields, code windows and their decode tables."""

    WINDOW_BYTES = 0x1000  # small windows: re-summing one after a decode stays cheap

    def __init__(self, capacity_halfwords: int = 1 << 17):
        self.buffer = np.zeros(DATA_START + FIELDS * (capacity_halfwords + MAX_WINDOWS), np.int64)
        self.buffer[CODE_PC] = -1
        self.buffer[TOTAL_LENGTH] = len(self.buffer)
        self.buffer[DEADLINE] = np.iinfo(np.int64).max
        self.next_free = DATA_START
        self.windows: list[tuple[int, int, int]] = []  # (base, size_bytes, offset)
        self._window_index: dict[int, int] = {}        # base -> index in windows
        self.on_reallocate = None  # called with the new buffer when it grows

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
        self.next_free = DATA_START
        self.buffer[WINDOW_COUNT] = 0
        self.buffer[DATA_START:] = 0

    def add_window(self, base: int, size_bytes: int) -> int:
        """Add a window of decode tables covering [base, base+size_bytes)."""
        halfwords = size_bytes >> 1
        need = FIELDS * (halfwords + 1)
        if self.next_free + need > len(self.buffer):
            grown = np.zeros(max(2 * len(self.buffer), self.next_free + need + DATA_START), np.int64)
            grown[: len(self.buffer)] = self.buffer
            grown[TOTAL_LENGTH] = len(grown)
            self.buffer = grown
            if self.on_reallocate:
                self.on_reallocate(self.buffer)
        offset = self.next_free
        self.next_free += need
        index = len(self.windows)
        self.windows.append((base, size_bytes, offset))
        self._window_index[base] = index
        self.buffer[WINDOW_TABLE + 3 * index: WINDOW_TABLE + 3 * index + 3] = (base, size_bytes, offset)
        self.buffer[WINDOW_COUNT] = len(self.windows)
        return index

    def tables(self, index: int) -> list[np.ndarray]:
        """Views of one window's FIELDS arrays (KIND, then the prefix sums), each halfwords + 1 long."""
        base, size, offset = self.windows[index]
        end = offset + FIELDS * ((size >> 1) + 1)
        return [self.buffer[offset + f: end: FIELDS] for f in range(FIELDS)]

    def sums_between(self, start: int, end: int) -> list[int]:
        """Sums of the cumulative fields over the decoded instructions in [start, end)."""
        totals = [0] * FIELDS
        while start < end:
            index = self.window_for(start)
            if index is None:
                break
            base, size, _ = self.windows[index]
            tables = self.tables(index)
            chunk_end = min(end, base + size)
            a, b = (start - base) >> 1, (chunk_end - base) >> 1
            for field in SUMMED_FIELDS:
                totals[field] += int(tables[field][b] - tables[field][a])
            start = chunk_end
        return totals

    def value_at(self, address: int, field: int) -> int:
        index = self.window_for(address)
        if index is None:
            return 0
        base = self.windows[index][0]
        return int(self.tables(index)[field][(address - base) >> 1])

    def counters_at(self, pc: int) -> dict[str, int]:
        """Counter totals at the instruction `pc` of the executing block.

        The hook adds a block's whole static cost when the block starts (per-instruction hooks
        such as the divide's add theirs as they run), so at an instruction in the middle of it
        (a CYCCNT read, a fault) the totals are taken back by what the rest of the block costs.
        """
        b = self.buffer
        block, size = int(b[BLOCK_ADDRESS]), int(b[BLOCK_SIZE])
        totals = {"cycles": int(b[CYCLES]), "instructions": int(b[INSTRUCTIONS]), "lsu": int(b[LSU_TOTAL]),
                  "cpi": int(b[CPI_TOTAL]), "fold": int(b[FOLD_TOTAL]), "refill": int(b[REFILL_TOTAL]),
                  "interlock": int(b[INTERLOCK_TOTAL]), "divide": int(b[DIVIDE_TOTAL]),
                  "data_wait": int(b[DATA_WAIT_TOTAL])}
        if not block <= pc < block + size:
            return totals
        tail = self.sums_between(pc, block + size)
        counts, stalls = tail[F_COUNTS], tail[F_STALLS]
        totals["cycles"] -= tail[F_CYCLES]
        totals["instructions"] -= tail[F_INSTRUCTIONS]
        totals["lsu"] -= counts & LANE_MASK
        totals["cpi"] -= (counts >> LANE) & LANE_MASK
        totals["fold"] -= counts >> (2 * LANE)
        totals["refill"] -= stalls & LANE_MASK
        totals["interlock"] -= (stalls >> LANE) & LANE_MASK
        totals["divide"] -= stalls >> (2 * LANE)
        if pc == block and b[BLOCK_ADJUSTED]:  # the first instruction has not run: nor its adjustment
            adjust, flags = self.value_at(block, F_START_ADJUST), self.value_at(block, F_START_FLAGS)
            interlock, fold = flags & 15, (flags >> 4) & 1
            totals["cycles"] -= adjust
            totals["lsu"] -= adjust + interlock - fold - (interlock if (flags >> 5) & 1 else 0)
            totals["cpi"] += 0 if (flags >> 5) & 1 else interlock
            totals["fold"] += fold
            totals["interlock"] += interlock
        return totals

    def count_at(self, pc: int) -> tuple[int, int]:
        """(cycles, instructions) at the instruction `pc` of the executing block."""
        counters = self.counters_at(pc)
        return counters["cycles"], counters["instructions"]

    def settle_at(self, pc: int) -> None:
        """After a stop inside a block: keep only what the instructions before `pc` cost; the
        rest of the block will run as a new block that follows on in sequence."""
        b = self.buffer
        if int(b[BLOCK_ADDRESS]) <= pc < int(b[BLOCK_ADDRESS]) + int(b[BLOCK_SIZE]):
            b[ENDS_IN_BRANCH] = 0
            b[PREVIOUS_END] = pc
        counters = self.counters_at(pc)
        for slot, key in ((CYCLES, "cycles"), (INSTRUCTIONS, "instructions"), (LSU_TOTAL, "lsu"),
                          (CPI_TOTAL, "cpi"), (FOLD_TOTAL, "fold"), (REFILL_TOTAL, "refill"),
                          (INTERLOCK_TOTAL, "interlock"), (DIVIDE_TOTAL, "divide"), (DATA_WAIT_TOTAL, "data_wait")):
            self.buffer[slot] = counters[key]


def unregister_hook(uc, handle: int) -> None:
    uclib.uc_hook_del(uc._uch, ctypes.c_size_t(handle))


def _register(uc, kind: int, function, state: NativeState, begin: int, end: int) -> int:
    from unicorn import UcError

    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), kind, ctypes.c_void_p(function.address),
                               ctypes.c_void_p(state.address), ctypes.c_uint64(begin), ctypes.c_uint64(end))
    if status != 0:
        raise UcError(status)
    return handle.value


def register_block_hook(uc, state: NativeState) -> int:
    """Register the native block hook on every address; returns the hook handle."""
    from unicorn import UC_HOOK_BLOCK

    return _register(uc, UC_HOOK_BLOCK, block_hook, state, 1, 0)


def register_data_wait_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Charge the wait cycles of data reads in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_MEM_READ

    return _register(uc, UC_HOOK_MEM_READ, data_wait_hook, state, begin, end)


def register_divide_hook(uc, state: NativeState, address: int) -> int:
    """Time the divide at `address` from its operands."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, divide_hook, state, address, address)


def register_exact_pc_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Track the executing instruction's address in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, exact_pc_hook, state, begin, end)
