"""DWT event counter packets for SWO: when CPICNT, LSUCNT or FOLDCNT wrap past 255
(analysis/swo.py writes the packets)."""
from __future__ import annotations

import numpy as np

from .jit import njit
from .layout import (
    COUNTER_EVENTS, CPI_TOTAL, CYCLES, EV_CAPACITY, EV_COUNT, EV_COUNTER, EV_COUNTERS, EV_DROPPED,
    EV_FIRST_DROPPED, EV_LAST_TOTAL, EV_RECORDS, EV_SINCE, EV_WRAP_AT, FOLD_TOTAL, LSU_TOTAL)


# Only with --swo, while firmware enables one of CPICNT, LSUCNT, FOLDCNT's events. The table at
# COUNTER_EVENTS: see layout.py (counter event table); its records are flag << 56 | cycle, the flag
# being the counter's bit in the packet payload (ARMv7-M ARM D4.3.1).
EV_FLAGS = (0x01, 0x08, 0x10)  # CPI, LSU, Fold


@njit
def counter_events(st):
    """A record for each wrap of CPICNT, LSUCNT or FOLDCNT since the last call (the block hook
    calls it at every block start, Python before it moves time on), at the cycle interpolated
    linearly from the counter's total between the last call and now: within one block's
    cycles, or exactly in a span of Python time (a skipped `b .` loop)."""
    t = st[COUNTER_EVENTS]
    since = st[t + EV_SINCE]
    now = st[CYCLES]
    for i in range(3):
        slot = t + EV_COUNTERS + EV_COUNTER * i
        total = st[CPI_TOTAL] if i == 0 else st[LSU_TOTAL] if i == 1 else st[FOLD_TOTAL]
        before = st[slot + EV_LAST_TOTAL]
        while total >= st[slot + EV_WRAP_AT]:
            cycle = since  # (a wrap Python set up before the last call, at an MMIO access in its block)
            if st[slot + EV_WRAP_AT] > before:
                span, part, whole = now - since, st[slot + EV_WRAP_AT] - before, total - before
                if span < (1 << 31) and part < (1 << 31):
                    cycle = since + (span * part + whole - 1) // whole
                else:
                    cycle = since + np.int64(span * (part / whole))
            if st[t + EV_COUNT] < st[t + EV_CAPACITY]:
                st[t + EV_RECORDS + st[t + EV_COUNT]] = EV_FLAGS[i] << 56 | cycle
                st[t + EV_COUNT] += 1
            else:
                if st[t + EV_DROPPED] == 0:
                    st[t + EV_FIRST_DROPPED] = cycle
                st[t + EV_DROPPED] += 1
            st[slot + EV_WRAP_AT] += 256
        st[slot + EV_LAST_TOTAL] = total
    st[t + EV_SINCE] = now
