"""The line profile (`lines.csv`): the exact profile's cycles per source line, from DWARF.

With the profile on and DWARF line information in the ELF, the block hook counts how often
each halfword of the image's code ran (native._count_lines); each instruction's cycles are
its static cost times its runs, plus the extra cycles (flash waits, refills, mispredictions)
of the blocks that start at it. Summed per (file, line) these give the same totals as the
function profile: code without line information gets one row per function, and the time
Python moved on (exception entry and return, sleep) keeps its own rows.
"""
from __future__ import annotations

import bisect
import csv
from pathlib import Path

import numpy as np

COLUMNS = ["file", "line", "function", "cycles", "share", "instructions"]


def line_rows(counts, line_table, function_of, extra_rows: list[dict], total_cycles: int) -> list[dict]:
    """`counts`: per code range (start, runs, cycles, starts) per halfword (FunctionProfile
    .instruction_counts); `line_table`: ElfImage.line_table(); `function_of(address)`: a
    name; `extra_rows`: the function profile's rows that are not code. By cycles."""
    addresses = [row[0] for row in line_table]
    totals: dict[tuple[str, int, str], list[int]] = {}
    for start, runs, cycles, starts in counts:
        for h in np.nonzero(cycles | runs)[0]:
            address = start + 2 * int(h)
            i = bisect.bisect_right(addresses, address) - 1
            file, line = (line_table[i][1], line_table[i][2]) if i >= 0 else ("", 0)
            key = (file, line, function_of(address))
            entry = totals.setdefault(key, [0, 0])
            entry[0] += int(cycles[h])
            entry[1] += int(runs[h]) if starts[h] else 0
    rows = [{"file": f, "line": n, "function": fn, "cycles": c, "instructions": k} for (f, n, fn), (c, k) in
            totals.items()]
    rows += [{"file": "", "line": 0, "function": r["function"], "cycles": r["exclusive_cycles"], "instructions": 0}
             for r in extra_rows]
    for row in rows:
        row["share"] = round(row["cycles"] / total_cycles, 6) if total_cycles else 0.0
    return sorted(rows, key=lambda r: -r["cycles"])


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
