"""Block summaries: what a translated block costs, computed once from the decode tables and
kept in a direct-mapped cache so the block hook adds it with a few loads."""
from __future__ import annotations


from .jit import njit
from .layout import (
    E_CLASSES, E_FETCH_EPOCH, E_FUNCTION, E_LAST_INSN, E_LINE_SLOT, FIELDS, F_CLASS_A, F_COUNTS, F_CYCLES,
    F_FP, F_INSTRUCTIONS, F_ISB, F_REFILL, F_STALLS, F_START_ADJUST, F_START_FLAGS, F_UNMASK, KIND,
    WINDOW_TABLE)
from .encoding import KIND_CONTINUATION, KIND_SELF_LOOP, KIND_START, KIND_UNKNOWN
from .tables import _ends_in_branch, _kind_at, _range_sum, _value_at, _window_of
from .power import _block_energy


@njit
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
        st[entry + E_LAST_INSN] = base + 2 * ((last_start - offset) // FIELDS)
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
        for k in range(3):
            st[entry + E_CLASSES + k] = st[row_last + F_CLASS_A + k] - st[row_first + F_CLASS_A + k]
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
        st[entry + E_LAST_INSN] = end - 4 if _kind_at(st, end - 2) == KIND_CONTINUATION else end - 2
        st[entry + 9] = 1 if _kind_at(st, address + 2) == KIND_CONTINUATION else 0
        st[entry + 10] = fp
        st[entry + 11] = _range_sum(st, address, end, F_UNMASK)
        st[entry + 12] = _range_sum(st, address, end, F_ISB)
        for k in range(3):
            st[entry + E_CLASSES + k] = _range_sum(st, address, end, F_CLASS_A + k)
    _block_energy(st, entry)
    st[entry + 13] = 1 if first_kind == KIND_SELF_LOOP else 0
    st[entry + E_FETCH_EPOCH] = 0
    st[entry + E_FUNCTION] = 0
    st[entry + E_LINE_SLOT] = 0
    st[entry] = address
    st[entry + 1] = size
    return True
