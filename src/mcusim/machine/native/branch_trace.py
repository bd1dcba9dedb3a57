"""The ETM-style branch trace: taken branches, exceptions and the trace window, recorded
at block starts (analysis/branch_trace.py moves the records out and decodes them)."""
from __future__ import annotations

from .jit import njit
from .layout import (
    CYCLES, DEADLINE, PREVIOUS_BRANCH_AT, PREVIOUS_END, TRACE_CAPACITY, TRACE_COUNT, TRACE_DROPPED,
    TRACE_FROM, TRACE_FROM_CYCLE, TRACE_RECORD, TRACE_STATE, TRACE_TABLE, TRACE_TO, TRACE_TO_CYCLE,
    TR_KIND_CYCLE, TR_SOURCE, TR_TARGET)


# Branch trace records (analysis/branch_trace.py): 3 slots each, kind << 56 | cycle, source, target.
TRACE_SYNC, TRACE_BRANCH, TRACE_EXCEPTION, TRACE_RETURN, TRACE_LOOP, TRACE_END = 0, 1, 2, 3, 4, 5
TRACE_HEADROOM = 2  # records a block start may add after the table asks for room (a branch, the end)


@njit
def trace_record(st, kind, source, target):
    """Store one record at the current cycle while the window is open. When the table is nearly
    full, stop at this block start (the deadline): Python moves the records out (make_room)."""
    if st[TRACE_STATE] != 1:
        return
    if st[TRACE_COUNT] >= st[TRACE_CAPACITY]:
        st[TRACE_DROPPED] += 1
        return
    slot = st[TRACE_TABLE] + TRACE_RECORD * st[TRACE_COUNT]
    st[slot + TR_KIND_CYCLE] = kind << 56 | st[CYCLES]
    st[slot + TR_SOURCE] = source
    st[slot + TR_TARGET] = target
    st[TRACE_COUNT] += 1
    if st[TRACE_COUNT] == st[TRACE_CAPACITY] - TRACE_HEADROOM:
        st[DEADLINE] = 0


@njit
def _trace(st, address, out_of_sequence):
    """At a block start: open the window when its start address or cycle is reached (a sync
    record says where the code was), record the taken branch that led here (from the last
    instruction of the block before), close the window at its end address or cycle."""
    if st[TRACE_STATE] == 0:
        if (st[TRACE_FROM] < 0 or address == st[TRACE_FROM]) and st[CYCLES] >= st[TRACE_FROM_CYCLE]:
            st[TRACE_STATE] = 1
            trace_record(st, TRACE_SYNC, address, address)
        return
    if st[TRACE_STATE] == 1:
        if out_of_sequence and st[PREVIOUS_END] >= 0:  # (-1: Python moved the PC, and recorded why)
            trace_record(st, TRACE_BRANCH, st[PREVIOUS_BRANCH_AT], address)
        if address == st[TRACE_TO] or st[CYCLES] >= st[TRACE_TO_CYCLE]:
            trace_record(st, TRACE_END, address, address)
            st[TRACE_STATE] = 2
