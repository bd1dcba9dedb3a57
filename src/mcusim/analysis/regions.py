"""Named regions from the firmware's ITM markers (firmware/include/mcusim.h): per name, how
often it ran and how long (mean, min, max, and the 50th, 95th and 99th percentiles, so the
tail shows when interrupts perturb repeated regions), its share of the run, and for layers
the work it does.

A marker is the address of the region's name; the name is read from the image, and the
image's optional `mcusim_region_info` table ({name, MACs, bytes} records, NULL-terminated)
gives each named region its MACs and bytes moved.
"""
from __future__ import annotations

import bisect

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

COLUMNS = ["name", "count", "cycles_mean", "cycles_min", "cycles_max", "seconds_mean", "share", "macs", "bytes",
           "macs_per_cycle", "cycles_p50", "cycles_p95", "cycles_p99"]

ENERGY_COLUMNS = ["energy_j", "energy_j_total", "average_power_w", "ops_per_joule"]  # with a power model
# the main stack below its top and the heap _sbrk handed out, inside the region; bytes moved per memory bank and MACs per byte
# (--memory-traffic; bytes_by_bank as JSON, {"bank": bytes}); energy
OPTIONAL_COLUMNS = ["stack_peak_bytes", "heap_peak_bytes", "bytes_by_bank", "intensity"] + ENERGY_COLUMNS


@dataclass
class RegionRecorder:
    """Markers as they arrive: (begin?, name address, cycle, seconds)."""

    events: list[tuple[bool, int, int, float]] = field(default_factory=list)
    limit: int = 1_000_000  # bounded memory: a run marking more keeps the first ones and says so
    dropped: int = 0
    unmatched: int = 0      # ends without a start and starts never ended (set by summarize)
    # per event, (the lowest main-stack SP since the previous marker, the main stack's SP at this one;
    # either None when unknown); None: not tracked
    stack_lows: list[tuple[int, int] | None] = field(default_factory=list)
    # per event, the bytes read and written so far per memory bank (Machine.traffic_now); None: not counted
    traffic: list = field(default_factory=list)
    # per event, (the most heap _sbrk had handed out since the previous marker, that now); None: no _sbrk
    heap: list[tuple[int, int] | None] = field(default_factory=list)

    def mark(self, begin: bool, name_address: int, cycle: int, seconds: float,
             stack: tuple[int | None, int | None] | None = None, traffic=None,
             heap: tuple[int, int] | None = None) -> None:
        if len(self.events) < self.limit:
            self.events.append((begin, name_address, cycle, seconds))
            self.stack_lows.append(stack)
            self.traffic.append(traffic)
            self.heap.append(heap)
        else:
            self.dropped += 1


def _pairs(recorder: RegionRecorder):
    """(begin index, end index) in recorder.events of each completed region run, in the order
    they end; an end closes the innermost open region of that name. Counts the markers without
    a partner in recorder.unmatched."""
    open_regions: dict[int, list[int]] = {}  # name address -> indices of the starts not yet ended
    recorder.unmatched = 0
    for index, (begin, address, _cycle, _seconds) in enumerate(recorder.events):
        if begin:
            open_regions.setdefault(address, []).append(index)
            continue
        starts = open_regions.get(address)
        if not starts:  # an end without a start
            recorder.unmatched += 1
            continue
        yield starts.pop(), index
    recorder.unmatched += sum(len(starts) for starts in open_regions.values())


def matched(recorder: RegionRecorder, read_string):
    """Each completed region run, in the order they end: (name, start cycle, end cycle, start
    seconds, end seconds), paired as _pairs pairs them."""
    names: dict[int, str] = {}
    for start, end in _pairs(recorder):
        _, address, start_cycle, start_seconds = recorder.events[start]
        _, _, cycle, seconds = recorder.events[end]
        if address not in names:
            names[address] = read_string(address) or f"0x{address:08x}"
        yield names[address], start_cycle, cycle, start_seconds, seconds


def _extreme_by_region(recorder: RegionRecorder, read_string, samples: list, pick) -> dict[str, int]:
    """Per region name, the extreme (`pick`: min or max) of a value the markers sample as (its
    extreme since the previous marker, its value at this one; either None when unknown): from
    the value at the region's begin marker through the extreme at each marker after it up to
    its end (the markers pair as in `matched`); names whose markers carried no value are left out."""
    open_runs: dict[int, list[list]] = {}  # name address -> [extreme so far] of each start not yet ended
    extreme: dict[int, int] = {}
    for (begin, address, _cycle, _seconds), sample in zip(recorder.events, samples):
        if sample is not None and sample[0] is not None:
            for runs in open_runs.values():
                for run in runs:
                    run[0] = sample[0] if run[0] is None else pick(run[0], sample[0])
        if begin:
            open_runs.setdefault(address, []).append([None if sample is None else sample[1]])
            continue
        runs = open_runs.get(address)
        if runs:
            value = runs.pop()[0]
            if value is not None:
                extreme[address] = pick(extreme.get(address, value), value)
    return {read_string(address) or f"0x{address:08x}": value for address, value in extreme.items()}


def lowest_sp_by_region(recorder: RegionRecorder, read_string) -> dict[str, int]:
    """Per region name, the lowest main-stack SP reached inside any of its runs."""
    return _extreme_by_region(recorder, read_string, recorder.stack_lows, min)


def heap_peak_by_region(recorder: RegionRecorder, read_string) -> dict[str, int]:
    """Per region name, the most heap `_sbrk` had handed out inside any of its runs."""
    return _extreme_by_region(recorder, read_string, recorder.heap, max)


def traffic_by_region(recorder: RegionRecorder, read_string, banks: list[str]) -> dict[str, dict[str, int]]:
    """Per region name, the mean bytes its runs moved per memory bank (reads and writes): the
    counts at its end marker less those at its begin marker (paired as _pairs pairs them);
    names whose markers carried no counts are left out."""
    moved: dict[int, list] = {}  # name address -> [runs, summed counts]
    for start, end in _pairs(recorder):
        before, after = recorder.traffic[start], recorder.traffic[end]
        if before is None or after is None:
            continue
        total = moved.setdefault(recorder.events[end][1], [0, 0])
        total[0] += 1
        total[1] = total[1] + (after - before).sum(axis=1)
    return {read_string(address) or f"0x{address:08x}": {bank: int(round(total / runs)) for bank, total in
                                                          zip(banks, summed)}
            for address, (runs, summed) in moved.items()}


def summarize(recorder: RegionRecorder, read_string, info: dict[str, tuple[int, int]], total_cycles: int) -> list[dict]:
    """Per region name: count, cycles mean/min/max, mean seconds, share of the run's cycles,
    MACs and bytes (from `info`), MACs per cycle. Unmatched ends are ignored; regions still
    open at the end are not counted."""
    spans: dict[str, list[tuple[int, float]]] = {}  # in the order names first complete
    runs_of: dict[str, list[tuple[int, int]]] = {}
    for name, start_cycle, end_cycle, start_seconds, end_seconds in matched(recorder, read_string):
        spans.setdefault(name, []).append((end_cycle - start_cycle, end_seconds - start_seconds))
        runs_of.setdefault(name, []).append((start_cycle, end_cycle))
    work = _work_inside(runs_of, info)
    rows = []
    for name, runs in spans.items():
        cycles = [c for c, _ in runs]
        macs, moved = info.get(name) or work.get(name, (0, 0))
        mean = sum(cycles) / len(cycles)
        p50, p95, p99 = np.percentile(np.asarray(cycles, np.float64), [50, 95, 99], method="nearest")
        rows.append({"name": name, "count": len(cycles), "cycles_mean": round(mean, 1), "cycles_min": min(cycles),
                     "cycles_max": max(cycles), "seconds_mean": sum(s for _, s in runs) / len(cycles),
                     "share": round(sum(cycles) / total_cycles, 6) if total_cycles else 0.0,
                     "macs": macs, "bytes": moved, "macs_per_cycle": round(macs / mean, 4) if macs and mean else 0.0,
                     "cycles_p50": int(p50), "cycles_p95": int(p95), "cycles_p99": int(p99)})
    return rows


def _work_inside(runs_of: dict[str, list[tuple[int, int]]], info: dict[str, tuple[int, int]]) -> dict:
    """For a region the info table does not describe (an "inference" around its layers): the
    MACs and bytes of the described region runs inside each of its runs (the outermost ones,
    so nothing counts twice), as a mean per run."""
    described = sorted((start, end, *info[name]) for name, runs in runs_of.items() if name in info
                       for start, end in runs)
    starts = [run[0] for run in described]
    work = {}
    for name, runs in runs_of.items():
        if name in info or not described:
            continue
        macs = moved = 0
        for start, end in runs:
            taken = None  # the last outermost run counted: runs inside it are not counted again
            for inner in described[bisect.bisect_left(starts, start):bisect.bisect_right(starts, end)]:
                if inner[1] > end or (taken is not None and inner[0] >= taken[0] and inner[1] <= taken[1]):
                    continue
                macs, moved, taken = macs + inner[2], moved + inner[3], inner
        if macs or moved:
            work[name] = (round(macs / len(runs)), round(moved / len(runs)))
    return work


def read_info(read_word, read_string, table_address: int | None, limit: int = 4096) -> dict[str, tuple[int, int]]:
    """The image's mcusim_region_info table: name -> (MACs, bytes)."""
    info: dict[str, tuple[int, int]] = {}
    if table_address is None:
        return info
    for i in range(limit):
        name_address = read_word(table_address + 12 * i)
        if not name_address:
            break
        name = read_string(name_address)
        if name:
            info[name] = (read_word(table_address + 12 * i + 4), read_word(table_address + 12 * i + 8))
    return info


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS + [c for c in OPTIONAL_COLUMNS if any(c in r for r in rows)],
                                extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            if isinstance(row.get("bytes_by_bank"), dict):
                row = dict(row, bytes_by_bank=json.dumps(row["bytes_by_bank"], separators=(",", ":")))
            writer.writerow(row)


def format_table(rows: list[dict]) -> str:
    """The regions sorted by the cycles they took in all, as a profiler lists functions."""
    ordered = sorted(rows, key=lambda r: -r["cycles_mean"] * r["count"])
    header = (f"{'region':<24} {'count':>6} {'cycles':>12} {'p99':>12} {'share':>7} {'MACs':>11} "
              f"{'MACs/cycle':>10}")
    lines = [header, "-" * len(header)]
    for r in ordered:
        lines.append(f"{r['name'][:24]:<24} {r['count']:>6} {r['cycles_mean']:>12,.0f} {r.get('cycles_p99', 0):>12,} "
                     f"{100 * r['share']:>6.1f}% {r['macs']:>11,} {r['macs_per_cycle']:>10.3f}")
    return "\n".join(lines)


def _us(seconds: float) -> float:
    """Simulated seconds as the trace's microseconds, to the nanosecond (no 2015.3000000000002)."""
    return round(seconds * 1e6, 3)


def timeline(recorder: RegionRecorder, read_string, board: str, events=(), exception_name=str, calls=()) -> dict:
    """A Chrome/Perfetto trace (JSON), in simulated microseconds: track 1, one slice per region
    run, nested as the firmware nested them, each with its cycles; track 2, one slice per
    exception handler run (`events`: the machine's (cycle, seconds, "enter"/"return", number));
    track 3, each ITM write (("itm", (port, bytes))) but the region markers as an instant event;
    track 4, one slice per function call (`calls`: (function, start cycle, end cycle, start
    seconds, end seconds), from the exact profile's call log), nested as the calls were."""
    slices = [{"name": name, "ph": "X", "pid": 1, "tid": 1, "ts": _us(start_seconds),
               "dur": _us(end_seconds - start_seconds), "args": {"cycles": end_cycle - start_cycle}}
              for name, start_cycle, end_cycle, start_seconds, end_seconds in matched(recorder, read_string)]
    handlers: list[tuple[int, int, float]] = []  # (number, cycle, seconds) of the handlers entered, innermost last
    for cycle, seconds, what, detail in events:
        if what == "enter":
            handlers.append((detail, cycle, seconds))
        elif what == "return" and handlers:
            number, start_cycle, start_seconds = handlers.pop()
            slices.append({"name": exception_name(number), "ph": "X", "pid": 1, "tid": 2, "ts": _us(start_seconds),
                           "dur": _us(seconds - start_seconds),
                           "args": {"cycles": cycle - start_cycle, "exception": number}})
        elif what == "itm":
            port, data = detail
            text = data.decode("utf-8", errors="replace") if port == 0 else data.hex()
            slices.append({"name": f"ITM port {port}", "ph": "i", "s": "t", "pid": 1, "tid": 3, "ts": _us(seconds),
                           "args": {"cycle": cycle, "data": text}})
    slices += [{"name": name, "ph": "X", "pid": 1, "tid": 4, "ts": _us(start_seconds),
                "dur": _us(end_seconds - start_seconds), "args": {"cycles": end_cycle - start_cycle}}
               for name, start_cycle, end_cycle, start_seconds, end_seconds in calls]
    slices.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))  # parents before their children
    names = {1: "regions", 2: "exceptions", 3: "ITM writes", **({4: "functions"} if calls else {})}
    return {"traceEvents": [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": f"mcusim {board}"}}]
            + [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}
               for tid, name in names.items()] + slices, "displayTimeUnit": "ns"}
