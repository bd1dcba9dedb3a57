"""PNG plots of a run's power: the power trace per rail (DIR/power.csv) stacked over simulated
time with the region runs (DIR/timeline.json) beneath it, the energy per region (run.json), and
the DVFS sweep's energy and latency per clock. Matplotlib's Agg canvas, no pyplot: nothing
global changes in the caller's matplotlib."""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from ..analysis.bundle import BundleError, open_text, timeline_slices
from ..analysis.bundle import load as load_bundle

MAX_REGION_BARS = 40


def _label(name: str) -> str:
    """A name as matplotlib text: `$` would start mathtext."""
    return str(name).replace("$", r"\$")


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


class NothingToPlot(ValueError):
    """The bundle has neither a power trace nor energy per region."""


def read_trace(path: str | Path) -> tuple[list[float], dict[str, list[float]]]:
    """power.csv: bin start times (s) and watts per rail; BundleError naming the line when it
    is not a power trace."""
    line = 1
    with open_text(path, "a power trace") as f:
        try:
            reader = csv.reader(f)
            header = next(reader, [])
            if not header or header[0] != "time_s":
                raise ValueError(f"first column {header[:1]}, expected time_s")
            rails = [name[:-2] if name.endswith("_w") else name for name in header[1:]]
            times, watts = [], {rail: [] for rail in rails}
            for line, row in enumerate(reader, start=2):
                values = [float(cell) for cell in row]
                if len(values) != len(header) or not all(math.isfinite(v) for v in values):
                    raise ValueError(f"expected {len(header)} finite numbers, got {row[:len(header) + 1]}")
                times.append(values[0])
                for rail, value in zip(rails, values[1:]):
                    watts[rail].append(value)
        except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
            raise BundleError(f"{path} is not a power trace (line {line}): {exc}") from None
    return times, watts


def _lanes(slices: list[dict]) -> list[tuple[dict, int]]:
    """Each slice with its nesting depth (a layer inside the inference sits one lane lower)."""
    out, open_ends = [], []
    for s in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
        while open_ends and open_ends[-1] <= s["ts"] + 1e-9:
            open_ends.pop()
        out.append((s, len(open_ends)))
        open_ends.append(s["ts"] + s["dur"])
    return out


def trace_axes(trace_axis, lane_axis, times, watts, slices) -> None:
    """The stacked rail power (mW) over time (ms) and, below, the region runs in lanes."""
    ms = [t * 1e3 for t in times]
    width_ms = (ms[1] - ms[0]) if len(ms) > 1 else 0.1
    rails = list(watts)
    trace_axis.stackplot(ms, *[[w * 1e3 for w in watts[r]] for r in rails], labels=[_label(r) for r in rails],
                         step="post")
    trace_axis.set_ylabel("power (mW)")
    trace_axis.set_xlim(0, (ms[-1] + width_ms) if ms else 1)
    trace_axis.set_ylim(0, trace_axis.get_ylim()[1] * 1.18)  # room for the legend
    trace_axis.legend(loc="upper right", fontsize=8, ncols=min(len(rails), 5))
    trace_axis.set_title("power per rail (stacked)", fontsize=10)
    if lane_axis is None:
        return
    placed = _lanes(slices)
    depth = max((d for _, d in placed), default=0) + 1
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    names = list(dict.fromkeys(s["name"] for s, _ in placed))
    span = trace_axis.get_xlim()[1]
    for s, d in placed:
        start, dur = s["ts"] / 1e3, s["dur"] / 1e3
        color = colors[names.index(s["name"]) % len(colors)]
        lane_axis.broken_barh([(start, dur)], (-d - 0.4, 0.8), facecolors=color, edgecolor="white", linewidth=0.5)
        if dur > span / 40:
            lane_axis.text(start + dur / 2, -d, _label(s["name"]), ha="center", va="center", fontsize=7,
                           clip_on=True)
        if d == 0:  # the outermost regions also shade the trace
            trace_axis.axvspan(start, start + dur, color="grey", alpha=0.08, linewidth=0)
    lane_axis.set_ylim(-depth + 0.5, 0.5)
    lane_axis.set_yticks([-d for d in range(depth)], [f"depth {d}" for d in range(depth)], fontsize=7)
    lane_axis.set_xlabel("simulated time (ms)")
    lane_axis.set_title("regions", fontsize=9)


def enclosing(slices: list[dict]) -> set[str]:
    """Names of regions whose runs contain other regions' runs (an inference around its layers)."""
    placed = _lanes(slices)
    return {s["name"] for (s, d), (_, after) in zip(placed, placed[1:]) if after > d}


def region_axes(axis, regions: list[dict], outer: set[str] = frozenset()) -> None:
    """Mean energy per run of each region (µJ), in the order the firmware first marked them;
    regions that enclose others (`outer`) in grey, as their energy includes the others'."""
    rows = [r for r in regions if r.get("energy_j") is not None][:MAX_REGION_BARS]
    names = [_label(r["name"]) + (" (encloses others)" if r["name"] in outer else "") for r in rows]
    values = [r["energy_j"] * 1e6 for r in rows]
    bars = axis.barh(names, values, color=["tab:grey" if r["name"] in outer else "tab:green" for r in rows])
    axis.invert_yaxis()
    axis.set_xlabel("energy per run of the region (µJ)")
    axis.set_title("energy per region", fontsize=10)
    for bar, row in zip(bars, rows):
        note = f" {row['energy_j'] * 1e6:,.1f} µJ"
        if row.get("average_power_w"):
            note += f", {row['average_power_w'] * 1e3:.1f} mW"
        axis.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, note, va="center", fontsize=7)
    axis.margins(x=0.25)


def power_plot(bundle: str | Path, out: str | Path, run: dict | None = None) -> list[str]:
    """One PNG for a bundle (its run.json document `run`, read when not given): the trace with
    the regions (when power.csv exists) and the energy per region (when run.json has regions
    with energy). Returns what was left out and why; NothingToPlot when there is nothing to
    plot, BundleError for a malformed file."""
    bundle = Path(bundle)
    run = load_bundle(bundle) if run is None else run
    trace_path, timeline_path = bundle / "power.csv", bundle / "timeline.json"
    missing = []
    trace = read_trace(trace_path) if os.path.lexists(trace_path) else None
    if trace is not None and not trace[0]:
        trace = None
    if trace is None:
        missing.append("no power trace (power.csv): run with --power-trace")
    slices = timeline_slices(timeline_path) if os.path.lexists(timeline_path) else []
    if trace and not slices:
        missing.append("no region runs on the trace (timeline.json): run with --perfetto")
    regions = [r for r in run.get("regions") or [] if r.get("energy_j") is not None]
    if not regions:
        missing.append("no energy per region (the firmware marks no regions, or the run had no power model)")
    if trace is None and not regions:
        raise NothingToPlot("nothing to plot: " + "; ".join(missing))
    parts = {}
    if trace:
        parts["trace"] = 4.0
    if trace and slices:
        parts["lanes"] = 0.9 + 0.45 * (max(d for _, d in _lanes(slices)) + 1)
    if regions:
        parts["regions"] = 1.2 + 0.22 * min(len(regions), MAX_REGION_BARS)
    figure = _figure(11, sum(parts.values()) + 0.8)
    grid = figure.add_gridspec(len(parts), 1, height_ratios=list(parts.values()))
    axes = {}
    for k, name in enumerate(parts):
        axes[name] = figure.add_subplot(grid[k], sharex=axes.get("trace") if name == "lanes" else None)
    if trace:
        trace_axes(axes["trace"], axes.get("lanes"), *trace, slices)
        if "lanes" not in axes:
            axes["trace"].set_xlabel("simulated time (ms)")
    if regions:
        region_axes(axes["regions"], regions, enclosing(slices))
    energy = run.get("energy_j")
    title = f"{run.get('board')}: {Path((run.get('firmware') or {}).get('path') or '?').name}"
    if energy is not None:
        title += f", {energy * 1e3:.3f} mJ, average {run['average_power_w'] * 1e3:.2f} mW"
    figure.suptitle(_label(title), fontsize=11)
    figure.tight_layout()
    figure.savefig(out, format="png")
    return missing


def dvfs_plot(rows: list[dict], out: str | Path, title: str = "") -> None:
    """Energy per inference (left axis) and latency (right axis) against the clock."""
    figure = _figure(8, 4.5)
    axis = figure.add_subplot()
    mhz = [row["clock_hz"] / 1e6 for row in rows]
    energy = axis.plot(mhz, [row["energy_j"] * 1e3 for row in rows], "o-", color="tab:green",
                       label="energy per inference")
    axis.set_xlabel("core clock (MHz)")
    axis.set_ylabel("energy per inference (mJ)", color="tab:green")
    for row, x in zip(rows, mhz):
        axis.annotate(_label(row["voltage_range"]), (x, row["energy_j"] * 1e3), textcoords="offset points",
                      xytext=(0, 6), ha="center", fontsize=7, color="tab:green")
    best = min(rows, key=lambda row: row["energy_j"])
    axis.plot([best["clock_hz"] / 1e6], [best["energy_j"] * 1e3], "*", color="black", markersize=12,
              label=f"energy-optimal: {best['clock_hz'] / 1e6:g} MHz")
    twin = axis.twinx()
    latency = twin.plot(mhz, [row["latency_s"] * 1e3 for row in rows], "s--", color="tab:blue", label="latency")
    twin.set_ylabel("latency (ms)", color="tab:blue")
    handles = energy + latency + [axis.lines[-1]]
    axis.legend(handles, [h.get_label() for h in handles], loc="upper center", fontsize=8)
    axis.set_ylim(0, axis.get_ylim()[1] * 1.12)
    twin.set_ylim(0, twin.get_ylim()[1] * 1.12)
    if title:
        axis.set_title(_label(title), fontsize=10)
    figure.tight_layout()
    figure.savefig(out, format="png")
