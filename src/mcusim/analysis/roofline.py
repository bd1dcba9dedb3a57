"""The roofline of a run's regions (Williams et al., "Roofline: an insightful visual performance
model for multicore architectures", CACM 2009): per region, MACs per cycle against the
operational intensity (MACs per byte) of each memory it reads and writes, held against the
core's compute peaks and each memory's bandwidth (docs/profiling.md "Roofline").

Bytes are what the core's loads and stores moved to and from each memory bank inside the
region, counted by the simulator (`--memory-traffic`); instruction fetches are not data
traffic and are left out. A bank's ceiling is the most bytes per cycle the core can get from
it: the core's load/store bandwidth when the bank has no wait states or a data cache serves it
(cache hits), else one flash line per 1 + wait states cycles. The run's own flash and cache set-up
(as the firmware left it) gives the wait states and caches. Every ceiling is an upper bound
for the traffic counted, so a region at a fraction of the lowest ceiling that bounds it was held
back by neither compute nor bandwidth: by overhead (loop control, address arithmetic,
requantization, call set-up).
"""
from __future__ import annotations

from pathlib import Path

OVERHEAD_BELOW = 0.5  # a region reaching less than this fraction of its ceiling is called overhead-bound
TOTAL = "load/store"  # the level of all banks together, against the core's load/store bandwidth


def bank_ceiling(name: str, kind: str, core_bytes_per_cycle: float, line_bytes: int | None = None,
                 wait_cycles: int = 0, data_cache: bool = False) -> dict:
    """One bank's ceiling in bytes per cycle, with how it was derived. `line_bytes` and
    `wait_cycles`: what one read of the bank delivers and waits (None: a zero-wait bank the
    core reads at its own speed); `data_cache`: a data cache serves the bank's reads."""
    if line_bytes is None or data_cache:
        how = ("the core's load/store bandwidth (data cache hits)" if data_cache else
               "the core's load/store bandwidth (no wait states)")
        ceiling = {"bank": name, "kind": kind, "bytes_per_cycle": core_bytes_per_cycle, "how": how}
        if data_cache and line_bytes is not None:
            ceiling["miss_bytes_per_cycle"] = round(line_bytes / (1 + wait_cycles), 4)
        return ceiling
    per_cycle = min(core_bytes_per_cycle, line_bytes / (1 + wait_cycles))
    return {"bank": name, "kind": kind, "bytes_per_cycle": round(per_cycle, 4),
            "how": f"one {line_bytes}-byte line per {1 + wait_cycles} cycles ({wait_cycles} wait states)"}


def ceilings(core: dict, banks: list[dict]) -> dict:
    """The roofline's ceilings: the core's (its [roofline] table in cores/*.toml) and the banks'."""
    return {"simd_macs_per_cycle": core["simd_macs_per_cycle"], "plain_macs_per_cycle": core["plain_macs_per_cycle"],
            "load_store_bytes_per_cycle": core["load_store_bytes_per_cycle"], "banks": banks}


def _bandwidths(limits: dict) -> dict[str, float]:
    """Bytes per cycle of each level: each bank's ceiling, and all banks together (TOTAL)."""
    return {**{c["bank"]: c["bytes_per_cycle"] for c in limits["banks"]}, TOTAL: limits["load_store_bytes_per_cycle"]}


def place(row: dict, limits: dict) -> dict | None:
    """A region on the roofline: its intensity per level (each bank it touched, and all memory
    together), the ceiling each level allows at that intensity, the lowest of them and the
    compute peak (`bound`: "compute", a bank's name or "load/store"), the fraction of it the region
    reached and a verdict (compute-, memory- or, below OVERHEAD_BELOW of it, overhead-bound); None for a region with
    no MACs or no counted traffic."""
    macs, cycles, moved = row.get("macs") or 0, row.get("cycles_mean") or 0, row.get("bytes_by_bank")
    if not macs or not cycles or not moved or not sum(moved.values()):
        return None
    achieved = macs / cycles
    levels = _bandwidths(limits)
    touched = {bank: count for bank, count in moved.items() if count}
    touched[TOTAL] = sum(moved.values())
    intensity = {bank: macs / count for bank, count in touched.items()}
    allowed = {bank: intensity[bank] * levels[bank] for bank in touched if bank in levels}
    bound, attainable = "compute", limits["simd_macs_per_cycle"]
    for bank, value in allowed.items():
        if value < attainable:
            bound, attainable = bank, value
    fraction = achieved / attainable
    verdict = "compute-bound" if bound == "compute" else f"memory-bound ({bound})"
    if fraction < OVERHEAD_BELOW:
        verdict = "overhead-bound"
    return {"name": row["name"], "macs": macs, "cycles": cycles, "macs_per_cycle": round(achieved, 4),
            "bytes_by_bank": dict(moved), "intensity": {bank: round(v, 4) for bank, v in intensity.items()},
            "bound": bound, "attainable_macs_per_cycle": round(attainable, 4),
            "ceiling_fraction": round(fraction, 4), "verdict": verdict}


def analyse(regions: list[dict], limits: dict) -> list[dict]:
    """Every region with MACs and counted traffic placed on the roofline, in the run's order."""
    return [placed for placed in (place(row, limits) for row in regions) if placed is not None]


def format_table(points: list[dict]) -> str:
    header = (f"{'region':<24} {'MACs':>11} {'MACs/cycle':>10} {'MACs/B':>8} {'bound':<12} {'of ceiling':>10}  verdict")
    lines = [header, "-" * len(header)]
    for p in points:
        lines.append(f"{p['name'][:24]:<24} {p['macs']:>11,} {p['macs_per_cycle']:>10.3f} "
                     f"{p['intensity'][TOTAL]:>8.2f} {p['bound'][:12]:<12} {100 * p['ceiling_fraction']:>9.0f}%  "
                     f"{p['verdict']}")
    return "\n".join(lines)


def plot(points: list[dict], limits: dict, title: str, path: str | Path | None = None, figure=None):
    """The roofline as a log-log plot: the compute peaks (SIMD and plain), each level's
    bandwidth roof, and each region once per level it touched (x: its intensity there; y: its
    MACs per cycle), named at the level that bounds it. Written to `path` (PNG, SVG, PDF by
    its suffix) when given; returns the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if figure is None:
        figure = Figure(figsize=(10, 6.5), dpi=100)
        FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    levels = _bandwidths(limits)
    shown = sorted({bank for p in points for bank in p["intensity"]}) or sorted(levels)
    xs = [v for p in points for v in p["intensity"].values()] or [1.0]
    low, high = min(xs) / 4, max(xs) * 4
    peak = limits["simd_macs_per_cycle"]
    colors = {bank: f"C{i}" for i, bank in enumerate(shown)}
    for bank in shown:
        if bank not in levels:
            continue
        bandwidth = levels[bank]
        knee = peak / bandwidth
        axes.plot([low, min(knee, high)], [low * bandwidth, min(knee, high) * bandwidth], color=colors[bank],
                  linestyle=":" if bank == TOTAL else "-", linewidth=2.5 if bank == TOTAL else 1.5,
                  label=f"{bank}: {bandwidth:g} B/cycle")
    axes.axhline(peak, color="k", label=f"SIMD peak: {peak:g} MACs/cycle")
    axes.axhline(limits["plain_macs_per_cycle"], color="k", linestyle="--",
                 label=f"plain MLA peak: {limits['plain_macs_per_cycle']:g} MACs/cycle")
    for p in points:
        bound_bank = TOTAL if p["bound"] == "compute" else p["bound"]
        for bank, x in p["intensity"].items():
            if bank in colors:
                axes.scatter([x], [p["macs_per_cycle"]], color=colors[bank], s=18,
                             alpha=1.0 if bank == bound_bank else 0.35, zorder=3)
        if bound_bank in p["intensity"]:
            axes.annotate(p["name"].replace("$", r"\$"), (p["intensity"][bound_bank], p["macs_per_cycle"]),
                          fontsize=6, xytext=(3, 2), textcoords="offset points")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_xlabel("operational intensity (MACs per byte moved)")
    axes.set_ylabel("MACs per cycle")
    axes.set_title(title)
    axes.legend(fontsize="small", loc="lower right")
    axes.grid(True, which="both", alpha=0.2)
    if path is not None:
        figure.tight_layout()
        figure.savefig(path)
    return figure
