"""Look-ups in the per-window decode tables: which window holds an address, a halfword's
kind, a per-instruction value, and sums over address ranges (prefix-sum differences). Every
other native module reads the tables through these."""
from __future__ import annotations

import numpy as np

from .jit import njit
from .layout import (
    FIELDS, F_REFILL, KIND, LAST_WINDOW, SUMMED_FIELDS, WINDOW, WINDOW_COUNT, WINDOW_TABLE, W_BASE,
    W_SIZE, W_TABLES)
from .encoding import KIND_CONTINUATION, KIND_UNKNOWN


@njit
def _window_of(st, address):
    w = st[LAST_WINDOW]
    if w < st[WINDOW_COUNT]:
        base = st[WINDOW_TABLE + WINDOW * w + W_BASE]
        if base <= address < base + st[WINDOW_TABLE + WINDOW * w + W_SIZE]:
            return w
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + WINDOW * w + W_BASE]
        if base <= address < base + st[WINDOW_TABLE + WINDOW * w + W_SIZE]:
            st[LAST_WINDOW] = w
            return w
    return -1


@njit
def _kind_at(st, address):
    w = _window_of(st, address)
    if w < 0:
        return KIND_UNKNOWN
    base = st[WINDOW_TABLE + WINDOW * w + W_BASE]
    return st[st[WINDOW_TABLE + WINDOW * w + W_TABLES] + FIELDS * ((address - base) >> 1) + KIND]


@njit
def _range_sum_decoded(st, start, end, field):
    """(sum of `field` over the instructions in [start, end) up to the first address no window
    holds, that address or `end`): across windows."""
    total = 0
    while start < end:
        w = _window_of(st, start)
        if w < 0:
            return total, start
        base = st[WINDOW_TABLE + WINDOW * w + W_BASE]
        size = st[WINDOW_TABLE + WINDOW * w + W_SIZE]
        table = st[WINDOW_TABLE + WINDOW * w + W_TABLES] + field
        chunk_end = min(end, base + size)
        total += st[table + FIELDS * ((chunk_end - base) >> 1)] - st[table + FIELDS * ((start - base) >> 1)]
        start = chunk_end
    return total, end


@njit
def _range_sum(st, start, end, field):
    """Sum of `field` over the instructions in [start, end), across windows; -1 if undecoded."""
    total, reached = _range_sum_decoded(st, start, end, field)
    return total if reached >= end else -1


@njit
def range_sums(st, start, end, sums):
    """Into `sums` (FIELDS long): each summed field over the decoded instructions in [start, end)
    (up to the first undecoded address); NativeState.sums_between calls it from Python."""
    for field in SUMMED_FIELDS:
        sums[field] = _range_sum_decoded(st, start, end, field)[0]


@njit
def resum_window(st, offset, costs, first, stop):
    """A window's tables (at `offset`, rows of FIELDS) refreshed over rows [first, stop) from each
    instruction's own row in `costs`: the prefix sums of SUMMED_FIELDS, the other fields copied
    (KIND is written by the decoder). Decoder._resum calls it from Python after every decode;
    the rows past the last decoded one are never read, so it stops there."""
    summed = np.zeros(FIELDS, np.bool_)
    for field in SUMMED_FIELDS:
        summed[field] = True
    totals = st[offset + FIELDS * first: offset + FIELDS * (first + 1)].copy()
    for row in range(first, stop):
        at = offset + FIELDS * row
        for field in range(1, FIELDS):
            if summed[field]:
                totals[field] += costs[row, field]
                st[at + FIELDS + field] = totals[field]
            else:
                st[at + field] = costs[row, field]


@njit
def _value_at(st, address, field):
    """A per-instruction (not summed) field's value at `address`."""
    w = _window_of(st, address)
    if w < 0:
        return 0
    base = st[WINDOW_TABLE + WINDOW * w + W_BASE]
    return st[st[WINDOW_TABLE + WINDOW * w + W_TABLES] + FIELDS * ((address - base) >> 1) + field]


@njit
def _ends_in_branch(st, end):
    """F_REFILL of the instruction that ends at `end`."""
    last = end - 2
    if _kind_at(st, last) == KIND_CONTINUATION:
        last -= 2
    return _value_at(st, last, F_REFILL)
