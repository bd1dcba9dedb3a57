"""The native (numba) block hook and the shared state it reads and writes.

One int64 numpy buffer holds everything the hook touches: a header of counters and
requests, a table of code windows, and per-window per-halfword decode tables (see
CodeTables). The hook runs at the start of every translated block, before the block
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

# Per-halfword kinds.
KIND_UNKNOWN = 0
KIND_START = 1
KIND_CONTINUATION = 2
KIND_SELF_LOOP = 3    # an instruction start that branches to itself (`b .`)

# Call uc_emu_stop by symbol name (not through a ctypes pointer) so numba can cache the hook.
llvmlite.binding.load_library_permanently(uclib._name)
_uc_emu_stop = types.ExternalFunction("uc_emu_stop", types.int32(types.voidptr))

BLOCK_HOOK_SIGNATURE = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)


@numba.njit(cache=True)
def _previous_block_unmasks(st):
    """Did the block that ran last contain CPSIE or an MSR to PRIMASK/BASEPRI/FAULTMASK?"""
    address = st[BLOCK_ADDRESS]
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + 3 * w]
        size = st[WINDOW_TABLE + 3 * w + 1]
        if base <= address < base + size:
            halfwords = size >> 1
            cum_mask = st[WINDOW_TABLE + 3 * w + 2] + halfwords + 3 * (halfwords + 1)
            first = (address - base) >> 1
            last = min(first + (st[BLOCK_SIZE] >> 1), halfwords)
            return st[cum_mask + last] != st[cum_mask + first]
    return False


@numba.cfunc(BLOCK_HOOK_SIGNATURE, cache=True)
def block_hook(uc, address, size, user_data):
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    if st[CYCLES] >= st[DEADLINE]:
        st[STOP_REASON] = STOP_DEADLINE
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    window = -1
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            window = w
            break
    first = 0
    last = 0
    halfwords = 0
    offset = 0
    if window >= 0:
        base = st[WINDOW_TABLE + 3 * window]
        halfwords = st[WINDOW_TABLE + 3 * window + 1] >> 1
        offset = st[WINDOW_TABLE + 3 * window + 2]
        first = (address - base) >> 1
        last = first + (size >> 1)
    if window < 0 or last > halfwords or st[offset + first] == KIND_UNKNOWN \
            or st[offset + first] == KIND_CONTINUATION or st[offset + last - 1] == KIND_UNKNOWN:
        st[STOP_REASON] = STOP_DECODE
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    cum_cycles = offset + halfwords
    cum_instructions = cum_cycles + halfwords + 1
    cum_fp = cum_instructions + halfwords + 1
    if st[PENDING_MASKED] != 0 and _previous_block_unmasks(st):
        st[STOP_REASON] = STOP_UNMASKED
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[FPU_ENABLED] == 0 and st[cum_fp + last] != st[cum_fp + first]:
        st[STOP_REASON] = STOP_FPU_DISABLED
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    if st[offset + first] == KIND_SELF_LOOP:
        st[STOP_REASON] = STOP_SELF_LOOP
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    st[BLOCK_ADDRESS] = address
    st[BLOCK_SIZE] = size
    st[BLOCK_START_CYCLES] = st[CYCLES]
    st[BLOCK_START_INSTRUCTIONS] = st[INSTRUCTIONS]
    st[CYCLES] += st[cum_cycles + last] - st[cum_cycles + first]
    st[INSTRUCTIONS] += st[cum_instructions + last] - st[cum_instructions + first]


class NativeState:
    """Owns the shared buffer: header fields, code windows and their decode tables."""

    WINDOW_BYTES = 0x10000

    def __init__(self, capacity_halfwords: int = 1 << 18):
        self.buffer = np.zeros(DATA_START + 5 * capacity_halfwords + 5 * MAX_WINDOWS, np.int64)
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
        need = 5 * halfwords + 4
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

    def tables(self, index: int):
        """Views (kind, cum_cycles, cum_instructions, cum_fp, cum_unmask) of one window."""
        base, size, offset = self.windows[index]
        h = size >> 1
        b = self.buffer
        return (b[offset: offset + h], b[offset + h: offset + 2 * h + 1],
                b[offset + 2 * h + 1: offset + 3 * h + 2], b[offset + 3 * h + 2: offset + 4 * h + 3],
                b[offset + 4 * h + 3: offset + 5 * h + 4])

    def cost_between(self, start: int, end: int) -> tuple[int, int]:
        """(cycles, instructions) of the decoded instructions in [start, end) of one window."""
        index = self.window_for(start)
        if index is None:
            return 0, 0
        base, size, _ = self.windows[index]
        _, cum_cycles, cum_instructions, _, _ = self.tables(index)
        a = (start - base) >> 1
        b = min((end - base) >> 1, size >> 1)
        return int(cum_cycles[b] - cum_cycles[a]), int(cum_instructions[b] - cum_instructions[a])

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


def register_block_hook(uc, state: NativeState) -> int:
    """Register the native block hook on every address; returns the hook handle."""
    from unicorn import UC_HOOK_BLOCK, UcError

    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_BLOCK,
                               ctypes.c_void_p(block_hook.address), ctypes.c_void_p(state.address),
                               ctypes.c_uint64(1), ctypes.c_uint64(0))
    if status != 0:
        raise UcError(status)
    return handle.value
