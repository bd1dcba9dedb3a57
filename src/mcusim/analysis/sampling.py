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

MAX_SAMPLES = 2_000_000  # 32 MB of samples at most


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

    def finish(self) -> None:
        """Take the samples of the last block (the run ended inside it)."""
        if self.state[N.BLOCK_SIZE]:
            N._take_samples(self.state.buffer)

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        count = self.state[N.SAMPLE_COUNT]
        rows = self.state.buffer[self.table: self.table + 2 * count].reshape(-1, 2)
        return rows[:, 0].copy(), rows[:, 1].copy()

    @property
    def dropped(self) -> int:
        return self.state[N.SAMPLE_DROPPED]


def function_names(functions: list[tuple[int, int, str]], pcs: np.ndarray) -> list[str]:
    """The function each PC falls in ("" outside every function)."""
    starts = [address for address, _, _ in functions]
    names = []
    for pc in pcs.tolist():
        i = bisect.bisect_right(starts, pc) - 1
        inside = i >= 0 and (pc < functions[i][0] + functions[i][1] or functions[i][1] == 0)
        names.append(functions[i][2] if inside else "")
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
