"""DWT-style PC sampling: the PC at every SAMPLE_PERIOD cycles, found inside the block
that ran (analysis/sampling.py reads the samples)."""
from __future__ import annotations

from .jit import njit
from .layout import (
    BLOCK_ADDRESS, BLOCK_SIZE, CYCLES, F_CYCLES, SAMPLE_AT_CYCLE, SAMPLE_BLOCK_START, SAMPLE_CAPACITY,
    SAMPLE_COUNT, SAMPLE_DROPPED, SAMPLE_NEXT, SAMPLE_PC, SAMPLE_PERIOD, SAMPLE_RECORD, SAMPLE_TABLE)
from .encoding import KIND_CONTINUATION
from .tables import _kind_at, _range_sum


@njit
def _take_samples(st):
    """PC samples that fell in the block that ran last, as DWT PC sampling takes them every
    SAMPLE_PERIOD cycles: the instruction whose cycles cover the sample point (the block's
    last one when dynamic waits ran past its static cost). Each sample: cycle, PC."""
    block = st[BLOCK_ADDRESS]
    end = block + st[BLOCK_SIZE]
    start = st[SAMPLE_BLOCK_START]
    while st[SAMPLE_NEXT] < st[CYCLES]:
        offset = st[SAMPLE_NEXT] - start
        pc = block
        at = block
        spent = 0
        while at < end:
            step = 4 if _kind_at(st, at + 2) == KIND_CONTINUATION and at + 2 < end else 2
            spent += _range_sum(st, at, at + step, F_CYCLES)
            pc = at
            if spent > offset:
                break
            at += step
        if st[SAMPLE_COUNT] < st[SAMPLE_CAPACITY]:
            slot = st[SAMPLE_TABLE] + SAMPLE_RECORD * st[SAMPLE_COUNT]
            st[slot + SAMPLE_AT_CYCLE] = st[SAMPLE_NEXT]
            st[slot + SAMPLE_PC] = pc
            st[SAMPLE_COUNT] += 1
        else:
            st[SAMPLE_DROPPED] += 1
        st[SAMPLE_NEXT] += st[SAMPLE_PERIOD]
