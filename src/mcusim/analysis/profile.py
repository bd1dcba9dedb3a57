"""The exact profile: every cycle of the run attributed to the function it was spent in.

The native block hook does the attribution (native.profile_switch): when a block starts, the
cycles since the last block started go to that block's function, looked up once per block in
a table of the image's functions (STT_FUNC symbols). Exception entry and return overhead and
sleep go to their own rows, so an interrupt handler's cycles are its own and the code it
interrupted is charged nothing for it. Entering a function at its first instruction from
another function, or by BL/BLX, counts as a call (tail calls and recursion included). The
exclusive cycles add up to the run's cycles.

At each change of function the hook also moves along a call tree (native._tree_move): down on
a call, back up to the function returned to, across on a jump; an exception hangs below the
code it preempted on a boundary node, so handlers never count in their victim's inclusive
cycles. The tree gives inclusive cycles, folded stacks and speedscope profiles.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..machine import native as N

EXTRA_ROWS = {N.PROFILE_UNKNOWN: "(outside any function)", N.PROFILE_EXCEPTIONS: "(exception entry and return)",
              N.PROFILE_SLEEP: "(sleep)"}
EVENT_ROWS = {N.EVENT_ENTRY: N.PROFILE_EXCEPTIONS, N.EVENT_RETURN: N.PROFILE_EXCEPTIONS, N.EVENT_SLEEP: N.PROFILE_SLEEP}
COLUMNS = ["function", "exclusive_cycles", "inclusive_cycles", "calls", "share", "energy_j"]
TREE_CAPACITY = 1 << 16  # call tree nodes (distinct call paths); beyond, calls go to "(call tree full)"
FULL_NODE_NAME = "(call tree full)"


def function_ends(functions: list[tuple[int, int, str]]) -> list[int]:
    """Where each function ends: start + size, or the next function's start when the symbol has
    no size (hand-written assembly), or 2 bytes for a last one without size."""
    starts = [address for address, _, _ in functions]
    return [address + size if size else (starts[i + 1] if i + 1 < len(starts) else address + 2)
            for i, (address, size, _) in enumerate(functions)]


class FunctionProfile:
    def __init__(self, state, functions: list[tuple[int, int, str]], tree_capacity: int = TREE_CAPACITY,
                 line_ranges: list[tuple[int, int]] = (), log_capacity: int = 0):
        """`functions`: (address, size, name), sorted; a size of 0 reaches to the next function.
        `line_ranges`: code ranges [start, end) whose instructions are counted (the line profile).
        `log_capacity`: how many moves of the call tree to log in time order (call_events)."""
        self.state = state
        self.names = [name for _, _, name in functions]
        n = len(functions)
        starts = [address for address, _, _ in functions]
        ends = function_ends(functions)
        self.n = n
        self.meta = 1 + 4 * n + 2 * N.PROFILE_EXTRA
        line_ranges = list(line_ranges)[:N.MAX_LINE_RANGES]
        counters = sum(N.LINE_COUNTER * ((end - start) // 2 + 1) for start, end in line_ranges)
        self.table = state.reserve(self.meta + N.PROFILE_TREE_META + (N.PROFILE_NODE + 2) * tree_capacity
                                   + N.LINE_RANGE * N.MAX_LINE_RANGES + counters + n + N.PROFILE_EXTRA
                                   + N.CALL_LOG_ROW * log_capacity)
        self.meta += self.table
        buffer = state.buffer
        buffer[self.table] = n
        buffer[self.table + 1: self.table + 1 + n] = starts
        buffer[self.table + 1 + n: self.table + 1 + 2 * n] = ends
        buffer[self.meta + N.TREE_NODE] = N.TREE_ROOT
        buffer[self.meta + N.TREE_COUNT] = 2  # the root and TREE_FULL
        buffer[self.meta + N.TREE_CAPACITY] = tree_capacity
        buffer[self.meta + N.TREE_OVERFLOWS] = 0
        buffer[self.meta + N.TREE_LINE_RANGES] = len(line_ranges)
        ranges = self.meta + N.PROFILE_TREE_META + (N.PROFILE_NODE + 2) * tree_capacity
        offset = ranges + N.LINE_RANGE * N.MAX_LINE_RANGES
        self.line_ranges = []  # (start, end, offset of the counters)
        for i, (start, end) in enumerate(line_ranges):
            row = ranges + N.LINE_RANGE * i
            buffer[row + N.LR_START], buffer[row + N.LR_END], buffer[row + N.LR_COUNTERS] = start, end, offset
            self.line_ranges.append((start, end, offset))
            offset += N.LINE_COUNTER * ((end - start) // 2 + 1)
        self.energy = offset  # per function: dynamic energy in femtojoules
        buffer[self.meta + N.TREE_ENERGY] = offset
        self.log = offset + n + N.PROFILE_EXTRA if log_capacity else 0
        self.log_capacity = log_capacity
        buffer[self.meta + N.TREE_LOG] = self.log
        buffer[self.meta + N.TREE_LOG_CAPACITY] = log_capacity
        buffer[self.meta + N.TREE_LOG_COUNT] = buffer[self.meta + N.TREE_LOG_DROPPED] = 0
        nodes = self.meta + N.PROFILE_TREE_META
        for node, function in ((N.TREE_ROOT, -1), (N.TREE_FULL, -2)):  # the root, TREE_FULL (both below the root)
            row = nodes + N.PROFILE_NODE * node
            buffer[row + N.NODE_PARENT], buffer[row + N.NODE_FUNCTION] = N.TREE_ROOT, function
            buffer[row + N.NODE_CYCLES], buffer[row + N.NODE_CALLS], buffer[row + N.NODE_RETURNS_TO] = 0, 0, -1
        state[N.PROFILE_TABLE] = self.table
        state[N.PROFILE_FUNCTION] = -1

    def flush_lines(self) -> None:
        """Charge the block that ran last in the line counters before Python moves time on."""
        N.line_flush(self.state.buffer, np.int64(self.meta))

    def switch_to(self, event: int) -> None:
        """From now on the cycles belong to exception entry or return overhead, or to sleep."""
        self.flush_lines()
        N.profile_switch(self.state.buffer, np.int64(self.n + EVENT_ROWS[event]), np.int64(-1), np.int64(event))

    def switch_to_address(self, address: int) -> None:
        """From now on the cycles belong to the function holding `address`."""
        self.flush_lines()
        buffer = self.state.buffer
        N.profile_switch(buffer, np.int64(N._function_of(buffer, np.int64(address))), np.int64(address),
                         np.int64(N.EVENT_CODE))

    def charge_instruction(self, address: int, cycles: int, executions: int) -> None:
        """Time Python moved on running one instruction over and over (a skipped `b .` loop)."""
        for start, end, offset in self.line_ranges:
            if start <= address < end:
                slot = offset + N.LINE_COUNTER * ((address - start) >> 1)
                b = self.state.buffer
                b[slot + N.LC_RUNS] += executions
                b[slot + N.LINE_COUNTER + N.LC_RUNS] -= executions
                b[slot + N.LC_EXTRA_CYCLES] += cycles - executions * self.state.sums_between(address, address + 2)[N.F_CYCLES]

    def instruction_counts(self):
        """Per line range: start address, then per halfword the times it ran, the cycles spent
        on it (its static cost per run plus the extra cycles of the blocks starting at it) and
        whether an instruction starts there."""
        self.flush_lines()
        out = []
        for start, end, offset in self.line_ranges:
            halfwords = (end - start) // 2
            counters = self.state.buffer[offset: offset + N.LINE_COUNTER * (halfwords + 1)]
            runs = np.cumsum(counters[N.LC_RUNS::N.LINE_COUNTER])[:halfwords]
            static, starts = self.state.static_cycles(start, end)
            out.append((start, runs, runs * static + counters[N.LC_EXTRA_CYCLES::N.LINE_COUNTER][:halfwords], starts))
        return out

    def flush(self) -> None:
        """Charge the cycles since the last switch to whoever is running."""
        current = self.state[N.PROFILE_FUNCTION]
        if current >= 0:
            N.profile_switch(self.state.buffer, np.int64(current), np.int64(-1), np.int64(N.EVENT_FLUSH))

    def name(self, function: int) -> str:
        if function == -2:
            return FULL_NODE_NAME
        return self.names[function] if function < self.n else EXTRA_ROWS[function - self.n]

    def tree(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The call tree: parent, function, exclusive cycles and calls per node (node 0 is the
        root; a parent always comes before its children)."""
        self.flush()
        count = self.state[self.meta + N.TREE_COUNT]
        nodes = self.meta + N.PROFILE_TREE_META
        rows = self.state.buffer[nodes: nodes + N.PROFILE_NODE * count].reshape(count, N.PROFILE_NODE)
        return (rows[:, N.NODE_PARENT].copy(), rows[:, N.NODE_FUNCTION].copy(), rows[:, N.NODE_CYCLES].copy(),
                rows[:, N.NODE_CALLS].copy())

    @property
    def tree_overflow(self) -> int:
        """Calls that found the call tree full (their cycles went to FULL_NODE_NAME)."""
        return int(self.state[self.meta + N.TREE_OVERFLOWS])

    def inclusive(self) -> dict[int, int]:
        """Inclusive cycles per function: its own and its callees', counted once per activation
        (recursion), without interrupt handlers that preempted it (they are their own)."""
        parent, function, exclusive, _ = self.tree()
        boundary = self.n + N.PROFILE_EXCEPTIONS
        subtree = exclusive.copy()
        for node in range(len(parent) - 1, 0, -1):  # children after parents: one backward pass
            if function[node] != boundary:
                subtree[parent[node]] += subtree[node]
        totals: dict[int, int] = {}
        for node in range(1, len(parent)):
            f, at, nested = function[node], parent[node], False
            if f > self.n:
                continue  # exception overhead and sleep: nothing runs below them in the same context
            while at != N.TREE_ROOT and function[at] != boundary:
                if function[at] == f:
                    nested = True  # an outer activation already counts these cycles
                    break
                at = parent[at]
            if not nested:
                totals[f] = totals.get(f, 0) + int(subtree[node])
        return totals

    def rows(self, total_cycles: int) -> list[dict]:
        """Per function that ran: exclusive and inclusive cycles, calls, share of the run; by
        exclusive cycles."""
        self.flush()
        b, n = self.state.buffer, self.n
        exclusive = b[self.table + 1 + 2 * n: self.table + 1 + 2 * n + n + N.PROFILE_EXTRA]
        calls = b[self.table + 1 + 3 * n + N.PROFILE_EXTRA: self.table + 1 + 4 * n + 2 * N.PROFILE_EXTRA]
        inclusive = self.inclusive()
        energy = b[self.energy: self.energy + n + N.PROFILE_EXTRA]
        rows = []
        for i in np.nonzero(exclusive)[0]:
            rows.append({"function": self.name(i), "exclusive_cycles": int(exclusive[i]),
                         "inclusive_cycles": max(inclusive.get(i, 0), int(exclusive[i])), "calls": int(calls[i]),
                         "share": round(int(exclusive[i]) / total_cycles, 6) if total_cycles else 0.0,
                         "dynamic_energy_j": int(energy[i]) * 1e-15})
        return sorted(rows, key=lambda r: -r["exclusive_cycles"])

    def call_events(self, end_cycle: int) -> tuple[list[tuple[str, int, int, str]], int]:
        """The call log replayed as time-ordered frame events ("O" open, "C" close, at a cycle,
        the frame's depth and function), every frame open at the end closed at `end_cycle`; and
        how many moves of the tree did not fit the log (the events then end where it filled)."""
        if not self.log:
            return [], 0
        parent, function, _, _ = self.tree()
        count = int(self.state[self.meta + N.TREE_LOG_COUNT])
        log = self.state.buffer[self.log: self.log + N.CALL_LOG_ROW * count].reshape(count, N.CALL_LOG_ROW)[
            :, [N.LOG_CYCLE, N.LOG_NODE]]
        paths: dict[int, tuple[int, ...]] = {N.TREE_ROOT: ()}  # node -> the nodes from below the root to it

        def path(node: int) -> tuple[int, ...]:
            chain = []
            while node not in paths:
                chain.append(node)
                node = int(parent[node])
            for below in reversed(chain):
                paths[below] = paths[node] + (below,)
                node = below
            return paths[node]

        dropped = int(self.state[self.meta + N.TREE_LOG_DROPPED])
        last = end_cycle if not dropped or not count else int(log[-1][0])
        events, stack = [], []
        for cycle, node in log.tolist() + [[last, N.TREE_ROOT]]:  # (the root last: everything closes)
            target = path(node)
            keep = 0
            while keep < min(len(stack), len(target)) and stack[keep] == target[keep]:
                keep += 1
            while len(stack) > keep:
                events.append(("C", cycle, len(stack) - 1, self.name(int(function[stack.pop()]))))
            for opened in target[keep:]:
                events.append(("O", cycle, len(stack), self.name(int(function[opened]))))
                stack.append(opened)
        return events, dropped

    def stacks(self) -> list[tuple[list[str], int]]:
        """Each call path that spent cycles, root first, with the cycles spent at its end."""
        parent, function, exclusive, _ = self.tree()
        paths: list[list[str]] = [[] for _ in parent]
        result = []
        for node in range(1, len(parent)):
            paths[node] = paths[parent[node]] + [self.name(function[node])]
            if exclusive[node]:
                result.append((paths[node], int(exclusive[node])))
        return result


def call_spans(events: list[tuple[str, int, int, str]]) -> list[tuple[str, int, int, int]]:
    """FunctionProfile.call_events as one (function, depth, start cycle, end cycle) per call, in
    the order they end."""
    spans, opened = [], []
    for kind, cycle, depth, name in events:
        if kind == "O":
            opened.append(cycle)
        else:
            spans.append((name, depth, opened.pop(), cycle))
    return spans


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def format_table(rows: list[dict], limit: int = 20) -> str:
    header = f"{'function':<32} {'exclusive cycles':>16} {'share':>7} {'inclusive cycles':>16} {'calls':>9}"
    lines = [header, "-" * len(header)]
    for r in rows[:limit]:
        inclusive = r.get("inclusive_cycles", r["exclusive_cycles"])
        lines.append(f"{r['function'][:32]:<32} {r['exclusive_cycles']:>16,} {100 * r['share']:>6.1f}% "
                     f"{inclusive:>16,} {r['calls']:>9,}")
    if len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more in functions.csv")
    return "\n".join(lines)
