"""Flame graph exports of the exact profile's call tree: folded stacks (Brendan Gregg's
flamegraph.pl, inferno, speedscope all read them) and a speedscope JSON document.

Each line of `stacks.folded` is a call path, root first, frames joined by ';', then the
cycles spent at its end. The speedscope file is a "sampled" profile whose samples are those
paths, weighted by cycles (https://github.com/jlfwong/speedscope/wiki/Importing-from-custom-sources),
and, from the profile's call log, an "evented" one: every call opened and closed at its cycle,
in time order (speedscope's time-order view). Frames carry the function's source file and line
where the ELF has DWARF lines. speedscope has no unit for cycles: the profiles say "none" and
their names say "(cycles)".
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


def speedscope(stacks: list[tuple[list[str], int]], name: str, exporter: str, events=None,
               locations: dict[str, tuple[str, int]] | None = None) -> dict:
    """The call paths as a speedscope "sampled" profile, weights in cycles; with `events`
    (FunctionProfile.call_events: ("O"/"C", cycle, depth, function)) also an "evented" one.
    `locations`: function -> (file, line) for the frames."""
    index: dict[str, int] = {}
    samples, weights = [], []
    for frames, cycles in stacks:
        samples.append([index.setdefault(frame, len(index)) for frame in frames])
        weights.append(cycles)
    total = sum(weights)
    profiles = [{"type": "sampled", "name": f"{name} (cycles)", "unit": "none", "startValue": 0,
                 "endValue": total, "samples": samples, "weights": weights}]
    if events:
        profiles.append({"type": "evented", "name": f"{name}: calls in time order (cycles)", "unit": "none",
                         "startValue": events[0][1], "endValue": events[-1][1],
                         "events": [{"type": kind, "frame": index.setdefault(function, len(index)), "at": cycle}
                                    for kind, cycle, _, function in events]})
    locations = locations or {}
    frames = []
    for frame in index:
        entry = {"name": frame}
        if frame in locations:
            entry["file"], entry["line"] = locations[frame]
        frames.append(entry)
    return {"$schema": SPEEDSCOPE_SCHEMA, "name": name, "exporter": exporter, "activeProfileIndex": 0,
            "shared": {"frames": frames}, "profiles": profiles}


def write_speedscope(stacks: list[tuple[list[str], int]], name: str, exporter: str, path: Path, events=None,
                     locations=None) -> None:
    Path(path).write_text(json.dumps(speedscope(stacks, name, exporter, events, locations)))
