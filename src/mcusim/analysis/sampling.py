"""Statistical PC sampling, as the DWT does it: the PC every N cycles (`--pc-sample-cycles N`).

The native block hook takes the samples that fell in each block once the block is over
(native._take_samples), into a bounded table; a run that takes more keeps the first ones
and says how many it dropped. Each sample names the instruction whose cycles cover it.
"""
from __future__ import annotations

import bisect
import csv
from pathlib import Path

import numpy as np

from ..machine import native as N
from .profile import function_ends

MAX_SAMPLES = 2_000_000  # 32 MB of samples at most
# PCs of the samples taken while Python, not code, moved time on (no instruction ran):
EXCEPTION_PC = 0xFFFFFFFE  # exception entry and return
SLEEP_PC = 0xFFFFFFFC      # asleep (WFI, WFE, sleep-on-exit)
MARKERS = {EXCEPTION_PC: "(exception entry and return)", SLEEP_PC: "(sleep)"}


class PcSampler:
    def __init__(self, state, period_cycles: int, capacity: int = MAX_SAMPLES):
        if period_cycles < 1:
            raise ValueError("the PC sampling period must be at least 1 cycle")
        self.state = state
        self.period = period_cycles
        self.table = state.reserve(2 * capacity)
        state[N.SAMPLE_TABLE] = self.table
        state[N.SAMPLE_PERIOD] = period_cycles
        state[N.SAMPLE_NEXT] = period_cycles
        state[N.SAMPLE_CAPACITY] = capacity

    def take_block(self) -> None:
        """Take the samples that fell in the block that ran last (after a stop: up to where it
        stopped), before anything else moves time on."""
        if self.state[N.BLOCK_SIZE] and self.state[N.SAMPLE_NEXT] < self.state[N.CYCLES]:
            N._take_samples(self.state.buffer)
        self.state[N.SAMPLE_BLOCK_START] = self.state[N.CYCLES]

    def charge(self, pc: int) -> None:
        """Samples of time Python moved on (exception overhead, sleep, a skipped `b .` loop)
        go to `pc` (a marker, or the loop's address)."""
        st = self.state
        pending = st[N.CYCLES] - st[N.SAMPLE_NEXT]
        if pending > 0:
            count = (pending - 1) // self.period + 1
            room = max(0, st[N.SAMPLE_CAPACITY] - st[N.SAMPLE_COUNT])
            kept = min(count, room)
            first = self.table + N.SAMPLE_RECORD * st[N.SAMPLE_COUNT]
            end = first + N.SAMPLE_RECORD * kept
            st.buffer[first + N.SAMPLE_AT_CYCLE: end: N.SAMPLE_RECORD] = (
                st[N.SAMPLE_NEXT] + self.period * np.arange(kept, dtype=np.int64))
            st.buffer[first + N.SAMPLE_PC: end: N.SAMPLE_RECORD] = pc
            st[N.SAMPLE_COUNT] = st[N.SAMPLE_COUNT] + kept
            st[N.SAMPLE_DROPPED] = st[N.SAMPLE_DROPPED] + count - kept
            st[N.SAMPLE_NEXT] = st[N.SAMPLE_NEXT] + count * self.period
        st[N.SAMPLE_BLOCK_START] = st[N.CYCLES]

    def finish(self) -> None:
        """Take the samples of the end of the run."""
        self.take_block()

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        count = self.state[N.SAMPLE_COUNT]
        rows = self.state.buffer[self.table: self.table + N.SAMPLE_RECORD * count].reshape(-1, N.SAMPLE_RECORD)
        return rows[:, N.SAMPLE_AT_CYCLE].copy(), rows[:, N.SAMPLE_PC].copy()

    @property
    def dropped(self) -> int:
        return self.state[N.SAMPLE_DROPPED]


def function_names(functions: list[tuple[int, int, str]], pcs: np.ndarray) -> list[str]:
    """The function each PC falls in, by the exact profile's rule ("" outside every function)."""
    starts = [address for address, _, _ in functions]
    ends = function_ends(functions)
    names = []
    for pc in pcs.tolist():
        if pc in MARKERS:
            names.append(MARKERS[pc])
            continue
        i = bisect.bisect_right(starts, pc) - 1
        names.append(functions[i][2] if i >= 0 and pc < ends[i] else "")
    return names


def shares(names: list[str]) -> dict[str, float]:
    """Share of the samples per function."""
    total = len(names) or 1
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return {name: count / total for name, count in sorted(counts.items(), key=lambda item: -item[1])}


def write_csv(cycles: np.ndarray, pcs: np.ndarray, names: list[str], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["cycle", "pc", "function"])
        for cycle, pc, name in zip(cycles.tolist(), pcs.tolist(), names):
            writer.writerow([cycle, f"0x{pc:08x}", name])
