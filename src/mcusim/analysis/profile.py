"""The exact profile: every cycle of the run attributed to the function it was spent in.

The native block hook does the attribution (native.profile_switch): when a block starts, the
cycles since the last block started go to that block's function, looked up once per block in
a table of the image's functions (STT_FUNC symbols). Exception entry and return overhead and
sleep go to their own rows, so an interrupt handler's cycles are its own and the code it
interrupted is charged nothing for it. Entering a function at its first instruction from
another function counts as a call (tail calls included). The exclusive cycles add up to the
run's cycles.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..machine import native as N

EXTRA_ROWS = {N.PROFILE_UNKNOWN: "(outside any function)", N.PROFILE_EXCEPTIONS: "(exception entry and return)",
              N.PROFILE_SLEEP: "(sleep)"}
COLUMNS = ["function", "exclusive_cycles", "share", "calls"]


def function_ends(functions: list[tuple[int, int, str]]) -> list[int]:
    """Where each function ends: start + size, or the next function's start when the symbol has
    no size (hand-written assembly), or 2 bytes for a last one without size."""
    starts = [address for address, _, _ in functions]
    return [address + size if size else (starts[i + 1] if i + 1 < len(starts) else address + 2)
            for i, (address, size, _) in enumerate(functions)]


class FunctionProfile:
    def __init__(self, state, functions: list[tuple[int, int, str]]):
        """`functions`: (address, size, name), sorted; a size of 0 reaches to the next function."""
        self.state = state
        self.names = [name for _, _, name in functions]
        n = len(functions)
        starts = [address for address, _, _ in functions]
        ends = function_ends(functions)
        self.n = n
        self.table = state.reserve(1 + 2 * n + 2 * (n + N.PROFILE_EXTRA))
        buffer = state.buffer
        buffer[self.table] = n
        buffer[self.table + 1: self.table + 1 + n] = starts
        buffer[self.table + 1 + n: self.table + 1 + 2 * n] = ends
        state[N.PROFILE_TABLE] = self.table
        state[N.PROFILE_FUNCTION] = -1

    def switch_to(self, row: int) -> None:
        """From now on the cycles belong to an extra row (exceptions, sleep)."""
        N.profile_switch(self.state.buffer, np.int64(self.n + row), np.int64(-1))

    def switch_to_address(self, address: int) -> None:
        """From now on the cycles belong to the function holding `address`."""
        buffer = self.state.buffer
        N.profile_switch(buffer, np.int64(N._function_of(buffer, np.int64(address))), np.int64(address))

    def flush(self) -> None:
        """Charge the cycles since the last switch to whoever is running."""
        current = self.state[N.PROFILE_FUNCTION]
        if current >= 0:
            N.profile_switch(self.state.buffer, np.int64(current), np.int64(-1))

    def rows(self, total_cycles: int) -> list[dict]:
        """Per function that ran: exclusive cycles, share of the run, calls; by cycles."""
        self.flush()
        b, n = self.state.buffer, self.n
        exclusive = b[self.table + 1 + 2 * n: self.table + 1 + 2 * n + n + N.PROFILE_EXTRA]
        calls = b[self.table + 1 + 3 * n + N.PROFILE_EXTRA: self.table + 1 + 4 * n + 2 * N.PROFILE_EXTRA]
        rows = []
        for i in np.nonzero(exclusive)[0]:
            name = self.names[i] if i < n else EXTRA_ROWS[i - n]
            rows.append({"function": name, "exclusive_cycles": int(exclusive[i]),
                         "share": round(int(exclusive[i]) / total_cycles, 6) if total_cycles else 0.0,
                         "calls": int(calls[i])})
        return sorted(rows, key=lambda r: -r["exclusive_cycles"])


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def format_table(rows: list[dict], limit: int = 20) -> str:
    header = f"{'function':<32} {'exclusive cycles':>16} {'share':>7} {'calls':>9}"
    lines = [header, "-" * len(header)]
    for r in rows[:limit]:
        lines.append(f"{r['function'][:32]:<32} {r['exclusive_cycles']:>16,} {100 * r['share']:>6.1f}% {r['calls']:>9,}")
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more in functions.csv")
    return "\n".join(lines)
