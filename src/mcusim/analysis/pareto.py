"""The Pareto front of a sweep (`mcusim pareto DIR`, docs/sweeps.md): the runs no other run beats
on both of two metrics (lower is better for each), and a plot with the front highlighted and
the dominated runs faded."""
from __future__ import annotations

from pathlib import Path

METRICS = {"latency": ("latency_s", "latency (s)"), "energy": ("energy_j", "energy (J)"),
           "power": ("peak_power_w", "peak power (W)"), "memory": ("peak_memory_bytes", "peak memory (bytes)"),
           "cycles": ("cycles", "cycles"), "host": ("host_seconds", "host seconds")}


def column(metric: str) -> str:
    """The results column of a metric name (or a column name itself)."""
    return METRICS[metric][0] if metric in METRICS else metric


def front(rows: list[dict], x: str, y: str) -> list[int]:
    """Indices of the rows on the front of columns `x` and `y` (both minimized), by `x`; rows
    missing either are left out. A row is on it when no other is at least as good on both and
    better on one."""
    points = [(row[x], row[y], i) for i, row in enumerate(rows) if row.get(x) is not None and row.get(y) is not None]
    points.sort()
    kept, best_y = [], None
    for px, py, i in points:
        if best_y is None or py < best_y:
            kept.append(i)
            best_y = py
    return kept


def label(row: dict) -> str:
    program = Path(str(row.get("program") or "?")).stem
    parts = [str(row.get("board")), program, row.get("variant") or "",
             "" if row.get("clock") in (None, "nominal") else f"{float(row['clock']) / 1e6:g} MHz"]
    return " ".join(part for part in parts if part)


def plot(rows: list[dict], x: str, y: str, path: str | Path, title: str) -> None:
    """The runs as points of `x` against `y`, the front drawn and named."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 6), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    on_front = front(rows, x, y)
    others = [r for i, r in enumerate(rows) if i not in on_front and r.get(x) is not None and r.get(y) is not None]
    axes.scatter([r[x] for r in others], [r[y] for r in others], color="C0", alpha=0.3, label="dominated")
    best = [rows[i] for i in on_front]
    axes.plot([r[x] for r in best], [r[y] for r in best], "o-", color="C3", label="Pareto front")
    for r in best:
        axes.annotate(label(r).replace("$", r"\$"), (r[x], r[y]), fontsize=7, xytext=(4, 4),
                      textcoords="offset points")
    names = {c: n for c, n in METRICS.values()}
    axes.set_xlabel(names.get(x, x))
    axes.set_ylabel(names.get(y, y))
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
