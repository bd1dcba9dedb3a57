"""Reading a result bundle back (`mcusim report`, `compare`, `trace`, `power-budget`,
`power-plot`): run.json checked against the shape its readers rely on, and the artifacts
they plot (timeline.json, pc_samples.csv), each only when a regular file, so that a corrupt or hand-edited bundle is one
clear error naming the file, never a traceback from deep inside a renderer.

Every key is optional (an old bundle, or a run without --profile, gives a shorter report);
a key that is there must have its type. Rows of regions and functions must have their names.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from .. import files


class BundleError(ValueError):
    """A bundle file is missing or malformed; the message names the file."""


@dataclass(frozen=True)
class Maybe:
    """null, or `shape`."""
    shape: object


@dataclass(frozen=True)
class Required:
    """A key a row must have."""
    shape: object


NUMBER = "a number"
TEXT = "a string"
FLAG = "true or false"
COUNTS = {str: NUMBER}  # a table of numbers by name
ANY = None

REGION = {"name": Required(TEXT), "count": Required(NUMBER), "cycles_mean": Required(NUMBER),
          **dict.fromkeys(["cycles_min", "cycles_max", "cycles_p50", "cycles_p95", "cycles_p99", "seconds_mean",
                           "share", "macs", "bytes", "macs_per_cycle", "energy_j", "energy_j_total",
                           "average_power_w", "ops_per_joule"], NUMBER)}
FUNCTION = {"function": Required(TEXT), "exclusive_cycles": Required(NUMBER),
            **dict.fromkeys(["inclusive_cycles", "calls", "share", "energy_j"], NUMBER)}
RUN = {
    **dict.fromkeys(["mcusim_version", "board", "board_title", "core", "stdout"], TEXT),
    **dict.fromkeys(["clock_hz", "reset_clock_hz", "nominal_clock_hz", "instructions", "cycles", "simulated_seconds",
                     "host_seconds", "mips", "cpi", "ipc", "dual_issue_fraction", "branch_mispredicts",
                     "branches_predicted", "issue_cycles", "exceptions_taken"], NUMBER),
    "clock_pinned": FLAG,
    "clock_changes": [{"cycle": NUMBER, "clock_hz": NUMBER}],
    "firmware": {"path": Maybe(TEXT), "sha256": Maybe(TEXT)},
    "settings": {"voltage_range": Maybe(TEXT), "power_model": Maybe(TEXT)},
    "exit": {"reason": Maybe(TEXT), "code": Maybe(NUMBER), "detail": Maybe(TEXT)},
    "boot_note": Maybe(TEXT), "fault": Maybe(TEXT),
    "icache": COUNTS, "dcache": COUNTS, "stalls": COUNTS, "dwt": COUNTS,
    "regions": [REGION],
    "functions": [FUNCTION],
    "lines": [{"file": TEXT, "line": NUMBER, "function": Maybe(TEXT), "cycles": NUMBER, "share": NUMBER}],
    "pc_samples": Maybe({"period_cycles": NUMBER, "count": NUMBER, "shares": COUNTS}),
    "energy_j": Maybe(NUMBER), "average_power_w": Maybe(NUMBER), "peak_power_w": Maybe(NUMBER),
    "energy_by_rail_j": Maybe(COUNTS),
    "power": Maybe({"model": Maybe(TEXT), "bin_us": NUMBER, "trace_bin_us": NUMBER, "seconds_by_state": COUNTS,
                    "events": COUNTS, "voltage_ranges": [TEXT], "voltage_range": Maybe(TEXT)}),
    "warnings": [TEXT], "artifacts": [TEXT],
}


def problem(value, shape, where: str = "") -> str | None:
    """What is wrong with `value` against `shape` (None: nothing): the first mismatch, with
    its place in the document (e.g. regions[2].name)."""
    if shape is ANY:
        return None
    if isinstance(shape, Maybe):
        return None if value is None else problem(value, shape.shape, where)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _wrong(where, "a list", value)
        return next((p for i, item in enumerate(value) if (p := problem(item, shape[0], f"{where}[{i}]"))), None)
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _wrong(where, "an object", value)
        if str in shape:
            return next((p for key, item in value.items() if (p := problem(item, shape[str], _at(where, key)))), None)
        for key, item_shape in shape.items():
            if isinstance(item_shape, Required):
                if key not in value:
                    return f"{_at(where, key)} is missing"
                item_shape = item_shape.shape
            if key in value and (p := problem(value[key], item_shape, _at(where, key))):
                return p
        return None
    ok = {NUMBER: _number, TEXT: lambda v: isinstance(v, str), FLAG: lambda v: isinstance(v, bool)}[shape](value)
    return None if ok else _wrong(where, shape, value)


def _number(value) -> bool:
    """A JSON number the readers can compute with: finite, not true/false."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) and abs(value) < 2**63 or isinstance(value, float) and math.isfinite(value)


def _at(where: str, key) -> str:
    return f"{where}.{key}" if where else str(key)


def _wrong(where: str, expected: str, value) -> str:
    shown = {dict: "an object", list: "a list"}.get(type(value)) or json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{where or 'the document'}: expected {expected}, got {shown}"


def open_regular(path: str | Path, what: str = "a bundle file"):
    """`path` open for reading in binary when it is a regular file (files.open_regular: a FIFO
    or /dev/zero is refused before any read, without blocking); BundleError naming it when it
    is missing or not a regular file."""
    try:
        return files.open_regular(path)
    except FileNotFoundError:
        raise BundleError(f"{path} does not exist") from None
    except files.NotRegular as exc:
        raise BundleError(f"{path} is {exc.kind}, not {what} (a regular file)") from None
    except OSError as exc:
        raise BundleError(f"{path}: cannot read it: {exc.strerror}") from None


def open_text(path: str | Path, what: str):
    """`path` as UTF-8 text for the csv module, when it is a regular file (open_regular)."""
    return io.TextIOWrapper(open_regular(path, what), encoding="utf-8", newline="")


def load(directory: str | Path) -> dict:
    """DIR/run.json, checked; BundleError saying what is wrong."""
    path = Path(directory) / "run.json"
    if not os.path.lexists(path):
        raise BundleError(f"{path} does not exist: write it with `mcusim run ... --out {directory}`")
    try:
        with open_regular(path, "a run.json bundle") as f:
            run = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{path} is not a run.json bundle: {exc}") from None
    wrong = problem(run, RUN)
    if wrong:
        raise BundleError(f"{path} is not a run.json bundle: {wrong}")
    return run


REGIONS_TRACK = 1  # timeline.json's tid of the region slices (analysis/regions.timeline)


def timeline_slices(path: str | Path) -> list[dict]:
    """The region slices ("X" events of the regions track: name, ts and dur in µs) of a
    timeline.json, not the exception handlers' or the function calls'; BundleError when it is
    not a Chrome/Perfetto trace."""
    try:
        with open_regular(path, "a Perfetto timeline") as f:
            events = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{path} is not a Perfetto timeline: {exc}") from None
    events = events.get("traceEvents") if isinstance(events, dict) else events
    slices = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"] if isinstance(events, list) else None
    wrong = "no traceEvents list" if slices is None else next(
        (p for i, e in enumerate(slices) if (p := problem(e, {"name": Required(TEXT), "ts": Required(NUMBER),
                                                             "dur": Required(NUMBER)}, f"slice {i}"))), None)
    if wrong:
        raise BundleError(f"{path} is not a Perfetto timeline: {wrong}")
    return [e for e in slices if e.get("tid", REGIONS_TRACK) == REGIONS_TRACK]


def pc_samples(path: str | Path) -> list[tuple[int, str]]:
    """(cycle, function) per sample of a pc_samples.csv; BundleError naming the line when it
    is not one."""
    samples, line = [], 1
    with open_text(path, "a PC sample file") as f:
        try:
            reader = csv.DictReader(f)
            if not {"cycle", "function"} <= set(reader.fieldnames or ()):
                raise ValueError(f"columns {reader.fieldnames}, expected cycle, pc, function")
            for line, row in enumerate(reader, start=2):
                if None in row or None in row.values():
                    raise ValueError(f"{len(row) - (None in row)} columns, expected {len(reader.fieldnames)}")
                samples.append((int(row["cycle"]), row["function"] or "(outside any function)"))
        except (OSError, UnicodeDecodeError, csv.Error, ValueError, TypeError) as exc:
            raise BundleError(f"{path} is not a PC sample file (line {line}): {exc}") from None
    return samples
