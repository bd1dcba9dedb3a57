"""A run's energy from the power meter: totals per rail, the power trace in bins, and energy
per region and per function (run.json, power.csv)."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .accounting import FEMTO, PowerMeter

DYNAMIC_RAILS = ("core", "sram", "flash")  # the native energy columns, in snapshot order
PEAK_CHUNK = 1 << 16       # bins computed at a time for the peak power
MAX_TRACE_BINS = 1_000_000  # power.csv bins at most (about 60 MB) ...
MAX_COUNTER_BINS = 100_000  # ... and when the Perfetto timeline or the VCD carries them (an object per bin)


class RunEnergy:
    """Cumulative energy per rail as a function of simulated time, and what follows from it."""

    def __init__(self, meter: PowerMeter, end_cycle: int, end_s: float):
        self.model = meter.model
        self.end_s = end_s
        self.rails = [rail.name for rail in self.model.rails]
        self.segments = meter.segments(end_cycle, end_s)
        # static power (and the per-cycle energy) integrated over the segments: piecewise linear
        times = [0.0]
        static = {rail: [0.0] for rail in self.rails}
        self.state_seconds: dict[str, float] = {}
        self.static_by_state: dict[str, float] = {}  # joules, all rails
        for seg in self.segments:
            joules = self._segment_static(seg)
            for rail in self.rails:
                static[rail].append(static[rail][-1] + joules[rail])
            times.append(seg.end_s)
            self.state_seconds[seg.state] = self.state_seconds.get(seg.state, 0.0) + seg.end_s - seg.start_s
            self.static_by_state[seg.state] = self.static_by_state.get(seg.state, 0.0) + sum(joules.values())
        self.static_times = np.array(times)
        self.static = {rail: np.array(values) for rail, values in static.items()}
        snapshots = meter.dynamic_snapshots(end_cycle)
        self.dynamic_times = meter.seconds_of(snapshots[:, 0], end_cycle, end_s)
        self.dynamic = {rail: snapshots[:, 1 + k] * FEMTO for k, rail in enumerate(DYNAMIC_RAILS)}

    def cumulative(self, seconds) -> dict[str, np.ndarray]:
        """Joules per rail from the start to each time in `seconds`."""
        seconds = np.asarray(seconds, float)
        out = {}
        for rail in self.rails:
            total = np.interp(seconds, self.static_times, self.static[rail])
            if rail in self.dynamic:
                total = total + np.interp(seconds, self.dynamic_times, self.dynamic[rail])
            out[rail] = total
        return out

    def totals(self) -> dict[str, float]:
        return {rail: float(values[-1]) for rail, values in self.cumulative([self.end_s]).items()}

    def between(self, start_s: float, end_s: float) -> float:
        """Joules spent in [start_s, end_s], all rails."""
        ends = self.cumulative([start_s, end_s])
        return float(sum(values[1] - values[0] for values in ends.values()))

    def bin_count(self, bin_us: float) -> int:
        """Bins of `bin_us` in the run; the last one may be partial, never empty."""
        return max(1, int(np.ceil(self.end_s / (bin_us * 1e-6) - 1e-9)))

    def bins(self, index: np.ndarray, bin_us: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Start times and each rail's average watts of the bins numbered `index` (bin k spans
        k to k + 1 bin widths, cut at the end of the run): each bin on its own, so any subset
        gives the same numbers as the whole trace."""
        width = bin_us * 1e-6
        index = np.asarray(index)
        starts, ends = np.minimum(index * width, self.end_s), np.minimum((index + 1) * width, self.end_s)
        if self.end_s <= 0:
            starts, ends = np.zeros(len(index)), np.full(len(index), 1e-12)
        before, after = self.cumulative(starts), self.cumulative(ends)
        spans = ends - starts
        spans[spans <= 0] = 1e-12
        return starts, {rail: (after[rail] - before[rail]) / spans for rail in self.rails}

    def trace(self, bin_us: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Bin start times and each rail's average watts in the bin (every bin: bound its
        count with trace_bin_us first)."""
        return self.bins(np.arange(self.bin_count(bin_us)), bin_us)

    def peak_power(self, bin_us: float) -> float:
        """The highest total watts of any bin of trace(bin_us), in bounded memory: the bins go
        through in chunks, all of them up to MAX_TRACE_BINS (the same figure as the whole
        trace's maximum); beyond, only the bins around each knot of the cumulative energy
        (segment ends, snapshots), which is linear between knots, so that any other bin has
        the power of the bin after the knot before it (up to rounding)."""
        bin_us = max(bin_us, self.end_s * 1e6 / 2**50)  # (no finer than float64 tells apart at the end)
        count = self.bin_count(bin_us)
        if count <= MAX_TRACE_BINS:
            index = np.arange(count)
        else:
            knots = np.concatenate([self.static_times, self.dynamic_times])
            near = np.floor(knots / (bin_us * 1e-6))  # (as floats: exact below 2^53, never overflowing)
            index = np.sort(np.clip(np.concatenate([near - 1, near, near + 1, near + 2, [0, count - 1]]), 0, count - 1))
            index = index[np.concatenate([[True], index[1:] != index[:-1]])]  # (each once: np.unique imports numpy.ma)
        peak = 0.0
        for first in range(0, len(index), PEAK_CHUNK):
            chunk = index[first:first + PEAK_CHUNK]
            _, watts = self.bins(chunk, bin_us)
            peak = max(peak, float(sum(watts.values(), np.zeros(len(chunk))).max()))
        return peak

    def _segment_static(self, seg) -> dict[str, float]:
        """Joules per rail of a segment's static power, plus its per-cycle energy while running."""
        duration = seg.end_s - seg.start_s
        power = self.model.static_power(seg.state, seg.clock_hz, seg.voltage_range)
        cycles = (seg.end_cycle - seg.start_cycle) * self.model.scale(seg.voltage_range) ** 2 \
            if seg.state == "run" else 0.0
        return {rail.name: power[rail.name] * duration + rail.energy_j.get("cycle", 0.0) * cycles
                for rail in self.model.rails}


def write_trace(times: np.ndarray, watts: dict[str, np.ndarray], path: Path) -> None:
    """power.csv: time_s, then one watts column per rail."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["time_s"] + [f"{rail}_w" for rail in watts])
        for i, t in enumerate(times):
            writer.writerow([f"{t:.9f}"] + [f"{watts[rail][i]:.6g}" for rail in watts])


def annotate_regions(rows: list[dict], runs, energy: RunEnergy) -> None:
    """Each region row gains energy_j (mean per run), energy_j_total, average_power_w and, for
    regions with MACs, ops_per_joule (2 ops per MAC; equal to ops per second per watt)."""
    per_name: dict[str, list[float]] = {}
    for name, _, _, start_s, end_s in runs:
        per_name.setdefault(name, []).append(energy.between(start_s, end_s))
    for row in rows:
        joules = per_name.get(row["name"], [])
        if not joules:
            continue
        mean = sum(joules) / len(joules)
        row["energy_j"] = mean
        row["energy_j_total"] = sum(joules)
        row["average_power_w"] = mean / row["seconds_mean"] if row["seconds_mean"] else 0.0
        if row.get("macs"):
            row["ops_per_joule"] = 2 * row["macs"] / mean if mean else 0.0


def annotate_functions(rows: list[dict], energy: RunEnergy) -> None:
    """Each function row's energy_j: its dynamic energy plus its share, by cycles, of the static
    energy while running; the sleep row gets the static energy of sleep and stop."""
    code_cycles = sum(r["exclusive_cycles"] for r in rows if r["function"] != "(sleep)") or 1
    run_static = energy.static_by_state.get("run", 0.0)
    asleep = energy.static_by_state.get("sleep", 0.0) + energy.static_by_state.get("stop", 0.0)
    for row in rows:
        dynamic = row.pop("dynamic_energy_j", 0.0)
        if row["function"] == "(sleep)":
            row["energy_j"] = dynamic + asleep
        else:
            row["energy_j"] = dynamic + run_static * row["exclusive_cycles"] / code_cycles


def summary(energy: RunEnergy, bin_us: float, counts: dict[str, int]) -> dict:
    """run.json's energy fields."""
    totals = energy.totals()
    total = sum(totals.values())
    return {"energy_j": total, "energy_by_rail_j": totals,
            "average_power_w": total / energy.end_s if energy.end_s else 0.0,
            "peak_power_w": energy.peak_power(bin_us),
            "power": {"model": energy.model.source_file, "bin_us": bin_us,
                      "seconds_by_state": energy.state_seconds, "events": counts,
                      "voltage_ranges": sorted({seg.voltage_range for seg in energy.segments}),
                      "voltage_range": energy.segments[-1].voltage_range if energy.segments else None}}


def trace_bin_us(energy: RunEnergy, bin_us: float, max_bins: int = MAX_TRACE_BINS) -> float:
    """The power trace's bin width: `bin_us`, or its smallest multiple that keeps the trace
    within `max_bins` (a long run at a slow clock would otherwise take gigabytes)."""
    count = energy.bin_count(bin_us)
    return bin_us if count <= max_bins else bin_us * int(np.ceil(count / max_bins))


def with_power_counters(timeline: dict, trace) -> dict:
    """The Perfetto timeline plus one counter track per rail (milliwatts per bin)."""
    if trace is None:
        return timeline
    times, watts = trace
    counters = [{"name": "power (mW)", "ph": "C", "pid": 1, "ts": round(float(t) * 1e6, 3),
                 "args": {rail: round(float(w[i]) * 1e3, 6) for rail, w in watts.items()}}
                for i, t in enumerate(times)]
    return {**timeline, "traceEvents": timeline["traceEvents"] + counters}
