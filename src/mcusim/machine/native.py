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
BLOCK_START_CYCLES = 8
BLOCK_START_INSTRUCTIONS = 9
FPU_ENABLED = 10
WINDOW_COUNT = 11
PENDING_MASKED = 13   # an enabled exception is pending but masked: stop after unmasking code
WATCH_ISB = 14        # code was decoded from writable memory: stop after an ISB to re-check it
CODE_PC = 15          # PC of the executing instruction, where the exact-PC code hook is installed (else -1)
TOTAL_LENGTH = 12
HEADER_LENGTH = 16
MAX_WINDOWS = 64
WINDOW_TABLE = HEADER_LENGTH          # per window: base, size_bytes, offset of its tables
DATA_START = WINDOW_TABLE + 3 * MAX_WINDOWS

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

BLOCK_HOOK_SIGNATURE = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)


# Per-window tables: FIELDS arrays of (halfwords + 1) int64 each. KIND holds the halfword's
# kind; the others are prefix sums over the halfwords (value of [a, b) = t[b] - t[a]).
KIND = 0
F_CYCLES = 1
F_INSTRUCTIONS = 2
F_FP = 3          # floating-point instructions (NOCP check while CPACR denies the FPU)
F_UNMASK = 4      # CPSIE / MSR to a priority mask
F_ISB = 5         # ISB: code in RAM may have been rewritten before it
FIELDS = 6


@numba.njit(cache=True)
def _window_of(st, address):
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            return w
    return -1


@numba.njit(cache=True)
def _kind_at(st, address):
    w = _window_of(st, address)
    if w < 0:
        return KIND_UNKNOWN
    return st[st[WINDOW_TABLE + 3 * w + 2] + ((address - st[WINDOW_TABLE + 3 * w]) >> 1)]


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
        table = st[WINDOW_TABLE + 3 * w + 2] + field * ((size >> 1) + 1)
        chunk_end = min(end, base + size)
        total += st[table + ((chunk_end - base) >> 1)] - st[table + ((start - base) >> 1)]
        start = chunk_end
    return total


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
    end = address + size
    w = _window_of(st, address)
    base = st[WINDOW_TABLE + 3 * w] if w >= 0 else 0
    window_end = base + st[WINDOW_TABLE + 3 * w + 1] if w >= 0 else 0
    if w >= 0 and end <= window_end:  # the common case: the whole block in one window
        length = ((window_end - base) >> 1) + 1
        offset = st[WINDOW_TABLE + 3 * w + 2]
        first = (address - base) >> 1
        last = (end - base) >> 1
        first_kind = st[offset + first]
        last_known = st[offset + last - 1] != KIND_UNKNOWN
        fp = st[offset + F_FP * length + last] - st[offset + F_FP * length + first]
    else:
        first_kind = _kind_at(st, address)
        last_known = _kind_at(st, end - 2) != KIND_UNKNOWN
        fp = _range_sum(st, address, end, F_FP)
    if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or not last_known or fp < 0:
        st[STOP_REASON] = STOP_DECODE
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    if st[PENDING_MASKED] != 0 and st[BLOCK_SIZE] != 0 and \
            _range_sum(st, st[BLOCK_ADDRESS], st[BLOCK_ADDRESS] + st[BLOCK_SIZE], F_UNMASK) > 0:
        st[STOP_REASON] = STOP_UNMASKED
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[WATCH_ISB] != 0 and st[BLOCK_SIZE] != 0 and \
            _range_sum(st, st[BLOCK_ADDRESS], st[BLOCK_ADDRESS] + st[BLOCK_SIZE], F_ISB) > 0:
        st[STOP_REASON] = STOP_ISB
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[FPU_ENABLED] == 0 and fp > 0:
        st[STOP_REASON] = STOP_FPU_DISABLED
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    if first_kind == KIND_SELF_LOOP:
        st[STOP_REASON] = STOP_SELF_LOOP
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    st[BLOCK_ADDRESS] = address
    st[BLOCK_SIZE] = size
    st[CODE_PC] = -1
    st[BLOCK_START_CYCLES] = st[CYCLES]
    st[BLOCK_START_INSTRUCTIONS] = st[INSTRUCTIONS]
    if w >= 0 and end <= window_end:
        st[CYCLES] += st[offset + F_CYCLES * length + last] - st[offset + F_CYCLES * length + first]
        st[INSTRUCTIONS] += (st[offset + F_INSTRUCTIONS * length + last]
                             - st[offset + F_INSTRUCTIONS * length + first])
    else:
        st[CYCLES] += _range_sum(st, address, end, F_CYCLES)
        st[INSTRUCTIONS] += _range_sum(st, address, end, F_INSTRUCTIONS)


@numba.cfunc(BLOCK_HOOK_SIGNATURE, cache=True)
def exact_pc_hook(uc, address, size, user_data):
    """Per-instruction hook, installed only on blocks that read time-dependent registers."""
    header = carray(user_data, (DATA_START,), np.int64)
    header[CODE_PC] = np.int64(address)


class NativeState:
    """Owns the shared buffer: header fields, code windows and their decode tables."""

    WINDOW_BYTES = 0x10000

    def __init__(self, capacity_halfwords: int = 1 << 18):
        self.buffer = np.zeros(DATA_START + FIELDS * (capacity_halfwords + MAX_WINDOWS), np.int64)
        self.buffer[TOTAL_LENGTH] = len(self.buffer)
        self.buffer[DEADLINE] = np.iinfo(np.int64).max
        self.next_free = DATA_START
        self.windows: list[tuple[int, int, int]] = []  # (base, size_bytes, offset)
        self.on_reallocate = None  # called with the new buffer when it grows

    def __getitem__(self, slot: int) -> int:
        return int(self.buffer[slot])

    def __setitem__(self, slot: int, value: int) -> None:
        self.buffer[slot] = value

    @property
    def address(self) -> int:
        return self.buffer.ctypes.data

    def window_for(self, address: int) -> int | None:
        for index, (base, size, _) in enumerate(self.windows):
            if base <= address < base + size:
                return index
        return None

    @property
    def full(self) -> bool:
        return len(self.windows) >= MAX_WINDOWS

    def clear_windows(self) -> None:
        """Forget every decoded window (code spread over more than MAX_WINDOWS windows)."""
        self.windows = []
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
        self.buffer[WINDOW_TABLE + 3 * index: WINDOW_TABLE + 3 * index + 3] = (base, size_bytes, offset)
        self.buffer[WINDOW_COUNT] = len(self.windows)
        return index

    def tables(self, index: int) -> list[np.ndarray]:
        """Views of one window's FIELDS arrays (KIND, then the prefix sums), each halfwords + 1 long."""
        base, size, offset = self.windows[index]
        length = (size >> 1) + 1
        return [self.buffer[offset + f * length: offset + (f + 1) * length] for f in range(FIELDS)]

    def cost_between(self, start: int, end: int) -> tuple[int, int]:
        """(cycles, instructions) of the decoded instructions in [start, end)."""
        cycles = instructions = 0
        while start < end:
            index = self.window_for(start)
            if index is None:
                break
            base, size, _ = self.windows[index]
            tables = self.tables(index)
            chunk_end = min(end, base + size)
            a, b = (start - base) >> 1, (chunk_end - base) >> 1
            cycles += int(tables[F_CYCLES][b] - tables[F_CYCLES][a])
            instructions += int(tables[F_INSTRUCTIONS][b] - tables[F_INSTRUCTIONS][a])
            start = chunk_end
        return cycles, instructions

    def count_at(self, pc: int) -> tuple[int, int]:
        """(cycles, instructions) at the instruction `pc` of the executing block.

        The hook adds a block's whole cost when the block starts; an instruction in the middle
        of it (a CYCCNT read, a fault) has only the instructions before it behind it.
        """
        block = int(self.buffer[BLOCK_ADDRESS])
        if block <= pc < block + int(self.buffer[BLOCK_SIZE]):
            cycles, instructions = self.cost_between(block, pc)
            return (int(self.buffer[BLOCK_START_CYCLES]) + cycles,
                    int(self.buffer[BLOCK_START_INSTRUCTIONS]) + instructions)
        return int(self.buffer[CYCLES]), int(self.buffer[INSTRUCTIONS])


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


def register_exact_pc_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Track the executing instruction's address in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, exact_pc_hook, state, begin, end)
