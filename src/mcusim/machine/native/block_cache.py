"""Block summaries: what a translated block costs, computed once from the decode tables and
kept in a direct-mapped cache so the block hook adds it with a few loads."""
from __future__ import annotations

from .jit import njit
from .layout import (
    E_ADDRESS, E_CLASSES, E_COUNTS, E_CYCLES, E_FETCH_KNOWN, E_FETCH_PORT, E_FP, E_FUNCTION, E_INSTRUCTIONS, E_ISB,
    E_SP_WRITE, E_LAST_INSN, E_LINE_SLOT, E_LITERALS, E_REFILL, E_SELF_LOOP, E_SIZE, E_STALLS, E_START_ADJUST,
    E_START_FLAGS, E_UNMASK, E_WIDE_FIRST, FIELDS, F_CLASS_A, F_COUNTS, F_CYCLES, F_FP, F_INSTRUCTIONS, F_ISB,
    F_LITERAL, F_REFILL, F_SP_WRITE, F_STALLS, F_START_ADJUST, F_START_FLAGS, F_UNMASK, KIND, WINDOW, WINDOW_TABLE,
    W_BASE, W_SIZE, W_TABLES)
from .encoding import KIND_CONTINUATION, KIND_SELF_LOOP, KIND_START, KIND_UNKNOWN
from .tables import _ends_in_branch, _kind_at, _range_sum, _value_at, _window_of
from .power import _block_energy
from .core_timing import again_deltas
from .memory_model import flash_port


@njit
def _summarize(st, address, size, entry):
    """Fill the block cache entry from the decode tables; False if the block is not decoded."""
    end = address + size
    w = _window_of(st, address)
    base = st[WINDOW_TABLE + WINDOW * w + W_BASE] if w >= 0 else 0
    window_end = base + st[WINDOW_TABLE + WINDOW * w + W_SIZE] if w >= 0 else 0
    if w >= 0 and end <= window_end:  # the common case: the whole block in one window
        offset = st[WINDOW_TABLE + WINDOW * w + W_TABLES]
        row_first = offset + FIELDS * ((address - base) >> 1)
        row_last = offset + FIELDS * ((end - base) >> 1)
        first_kind = st[row_first + KIND]
        last_kind = st[row_last - FIELDS + KIND]
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or last_kind == KIND_UNKNOWN:
            return False
        last_start = row_last - 2 * FIELDS if last_kind == KIND_CONTINUATION else row_last - FIELDS
        st[entry + E_LAST_INSN] = base + 2 * ((last_start - offset) // FIELDS)
        st[entry + E_CYCLES] = st[row_last + F_CYCLES] - st[row_first + F_CYCLES]
        st[entry + E_INSTRUCTIONS] = st[row_last + F_INSTRUCTIONS] - st[row_first + F_INSTRUCTIONS]
        st[entry + E_COUNTS] = st[row_last + F_COUNTS] - st[row_first + F_COUNTS]
        st[entry + E_STALLS] = st[row_last + F_STALLS] - st[row_first + F_STALLS]
        st[entry + E_START_ADJUST] = st[row_first + F_START_ADJUST]
        st[entry + E_START_FLAGS] = st[row_first + F_START_FLAGS]
        st[entry + E_REFILL] = st[last_start + F_REFILL]
        st[entry + E_WIDE_FIRST] = 1 if st[row_first + FIELDS + KIND] == KIND_CONTINUATION else 0
        st[entry + E_FP] = st[row_last + F_FP] - st[row_first + F_FP]
        st[entry + E_UNMASK] = st[row_last + F_UNMASK] - st[row_first + F_UNMASK]
        st[entry + E_ISB] = st[row_last + F_ISB] - st[row_first + F_ISB]
        st[entry + E_SP_WRITE] = st[row_last + F_SP_WRITE] - st[row_first + F_SP_WRITE]
        for k in range(3):
            st[entry + E_CLASSES + k] = st[row_last + F_CLASS_A + k] - st[row_first + F_CLASS_A + k]
        literals = 0
        for row in range(row_first, row_last, FIELDS):
            literals += st[row + F_LITERAL] & 1
        st[entry + E_LITERALS] = literals
    else:
        first_kind = _kind_at(st, address)
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or _kind_at(st, end - 2) == KIND_UNKNOWN:
            return False
        fp = _range_sum(st, address, end, F_FP)
        if fp < 0:
            return False
        st[entry + E_CYCLES] = _range_sum(st, address, end, F_CYCLES)
        st[entry + E_INSTRUCTIONS] = _range_sum(st, address, end, F_INSTRUCTIONS)
        st[entry + E_COUNTS] = _range_sum(st, address, end, F_COUNTS)
        st[entry + E_STALLS] = _range_sum(st, address, end, F_STALLS)
        st[entry + E_START_ADJUST] = _value_at(st, address, F_START_ADJUST)
        st[entry + E_START_FLAGS] = _value_at(st, address, F_START_FLAGS)
        st[entry + E_REFILL] = _ends_in_branch(st, end)
        st[entry + E_LAST_INSN] = end - 4 if _kind_at(st, end - 2) == KIND_CONTINUATION else end - 2
        st[entry + E_WIDE_FIRST] = 1 if _kind_at(st, address + 2) == KIND_CONTINUATION else 0
        st[entry + E_FP] = fp
        st[entry + E_UNMASK] = _range_sum(st, address, end, F_UNMASK)
        st[entry + E_ISB] = _range_sum(st, address, end, F_ISB)
        st[entry + E_SP_WRITE] = _range_sum(st, address, end, F_SP_WRITE)
        for k in range(3):
            st[entry + E_CLASSES + k] = _range_sum(st, address, end, F_CLASS_A + k)
        literals = 0
        for at in range(address, end, 2):
            literals += _value_at(st, at, F_LITERAL) & 1
        st[entry + E_LITERALS] = literals
    _block_energy(st, entry)
    st[entry + E_SELF_LOOP] = 1 if first_kind == KIND_SELF_LOOP else 0
    again_deltas(st, entry, address)
    st[entry + E_FETCH_KNOWN] = 0
    st[entry + E_FETCH_PORT] = flash_port(st, address)
    st[entry + E_FUNCTION] = 0
    st[entry + E_LINE_SLOT] = 0
    st[entry + E_ADDRESS] = address
    st[entry + E_SIZE] = size
    return True
