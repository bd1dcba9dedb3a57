"""Flame graph exports of the exact profile's call tree: folded stacks (Brendan Gregg's
flamegraph.pl, inferno, speedscope all read them) and a speedscope JSON document.

Each line of `stacks.folded` is a call path, root first, frames joined by ';', then the
cycles spent at its end. The speedscope file is a "sampled" profile whose samples are those
paths, weighted by cycles (https://github.com/jlfwong/speedscope/wiki/Importing-from-custom-sources).
"""
from __future__ import annotations

import json
from pathlib import Path

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _frame(name: str) -> str:
    return name.replace(";", ":").replace(" ", "_") if name else "?"


def write_folded(stacks: list[tuple[list[str], int]], path: Path) -> None:
    """One line per path that spent cycles, heaviest first."""
    lines = [";".join(_frame(f) for f in frames) + f" {cycles}" for frames, cycles in
             sorted(stacks, key=lambda s: -s[1])]
    Path(path).write_text("\n".join(lines) + "\n")


def speedscope(stacks: list[tuple[list[str], int]], name: str, exporter: str) -> dict:
    """The call paths as a speedscope "sampled" profile, weights in cycles."""
    index: dict[str, int] = {}
    samples, weights = [], []
    for frames, cycles in stacks:
        samples.append([index.setdefault(frame, len(index)) for frame in frames])
        weights.append(cycles)
    total = sum(weights)
    return {"$schema": SPEEDSCOPE_SCHEMA, "name": name, "exporter": exporter, "activeProfileIndex": 0,
            "shared": {"frames": [{"name": frame} for frame in index]},
            "profiles": [{"type": "sampled", "name": f"{name} (cycles)", "unit": "none", "startValue": 0,
                          "endValue": total, "samples": samples, "weights": weights}]}


def write_speedscope(stacks: list[tuple[list[str], int]], name: str, exporter: str, path: Path) -> None:
    Path(path).write_text(json.dumps(speedscope(stacks, name, exporter)))
