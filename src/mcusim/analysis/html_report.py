"""`mcusim report DIR --html`: the terminal report's tables (report.py) and plots in one
self-contained HTML page (inline CSS, plots as base64 PNG), so it can be mailed or attached
to a CI run and opened anywhere without the bundle.

Plots: the regions over simulated time (DIR/timeline.json; without it, each region's total
cycles as bars), the hottest functions, the PC samples over time by function
(DIR/pc_samples.csv), the power trace with the energy per region (DIR/power.csv, as `mcusim
power-plot` draws it) and the roofline (run.json `roofline`, from --memory-traffic). Each plot
and table only when the bundle has its data.
"""
from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path

from .bundle import pc_samples as read_pc_samples
from .bundle import timeline_slices
from .report import Section, sections

TOP_PLOTTED_FUNCTIONS = 15
TOP_SAMPLED_FUNCTIONS = 8
MAX_TIMELINE_ROWS = 40

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: right; border-bottom: 2px solid #888; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.text, td.text { text-align: left; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.note { color: #666; }
"""


def build(run: dict, timeline: str | Path | None = None, pc_samples: str | Path | None = None,
          bundle: str | Path | None = None) -> str:
    """The page for a run.json document; `timeline` and `pc_samples` are the bundle's
    timeline.json and pc_samples.csv when it has them (BundleError when they are malformed),
    `bundle` its folder (for the power plot)."""
    firmware = (run.get("firmware") or {}).get("path", "?")
    body = [f"<h1>mcusim report: {escape(Path(firmware).name)} on {escape(str(run.get('board', '?')))}</h1>"]
    for part in sections(run):
        body.append(_table(part))
        if part.title == "regions" and run.get("regions"):
            body.append(_regions_plot(run, timeline_slices(timeline) if timeline else []))
        if part.title.startswith("functions"):
            body.append(_functions_plot(run["functions"]))
        if part.title.startswith("PC samples"):
            body.append(_samples_plot(read_pc_samples(pc_samples) if pc_samples else []))
        if part.title == "energy" and bundle is not None:
            body.append(_power_plot(run, bundle))
        if part.title == "roofline" and part.rows:
            body.append(_roofline_plot(run))
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>mcusim report: {escape(Path(firmware).name)}</title><style>{STYLE}</style></head>\n"
            "<body>\n" + "\n".join(part for part in body if part) + "\n</body></html>\n")


def _table(part: Section) -> str:
    html = [f"<h2>{escape(part.title)}</h2>"]
    if part.rows:
        html.append("<table>")
        if part.columns is not None:
            html.append("<tr>" + "".join(f"<th class=\"{_kind(i, part)}\">{escape(name)}</th>"
                                         for i, name in enumerate(part.columns)) + "</tr>")
        for row in part.rows:
            html.append("<tr>" + "".join(f"<td class=\"{_kind(i, part)}\">{escape(cell)}</td>"
                                         for i, cell in enumerate(row)) + "</tr>")
        html.append("</table>")
    if part.note:
        html.append(f"<p class=\"note\">{escape(part.note)}</p>")
    return "\n".join(html)


def _kind(column: int, part: Section) -> str:
    return "text" if column < part.text_columns else "num"


def _label(name: str) -> str:
    """A name as matplotlib text: `$` would start mathtext."""
    return name.replace("$", r"\$")


def _figure(height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, min(max(height, 2.5), 14)), dpi=90)
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _png(figure, alt: str) -> str:
    figure.tight_layout()
    data = io.BytesIO()
    figure.savefig(data, format="png")
    encoded = base64.b64encode(data.getvalue()).decode("ascii")
    return f"<img alt=\"{escape(alt)}\" src=\"data:image/png;base64,{encoded}\">"


def _regions_plot(run: dict, slices: list[dict]) -> str:
    """Each region's runs over simulated time; without a timeline, each region's total cycles."""
    if not slices:
        rows = sorted(run["regions"], key=lambda r: -r.get("cycles_mean", 0) * r.get("count", 0))[:MAX_TIMELINE_ROWS]
        figure, axes = _figure(0.25 * len(rows) + 1)
        axes.barh([_label(r["name"]) for r in rows], [r.get("cycles_mean", 0) * r.get("count", 0) for r in rows])
        axes.invert_yaxis()
        axes.set_xlabel("cycles (all runs of the region)")
        return _png(figure, "regions by total cycles")
    spans: dict[str, list[tuple[float, float]]] = {}
    for e in slices:  # rows in the order the regions first start
        spans.setdefault(str(e.get("name")), []).append((e.get("ts", 0) / 1e3, e.get("dur", 0) / 1e3))
    names = sorted(spans, key=lambda n: -sum(d for _, d in spans[n]))[:MAX_TIMELINE_ROWS]
    names = [n for n in spans if n in names]
    figure, axes = _figure(0.25 * len(names) + 1)
    for row, name in enumerate(names):
        axes.broken_barh(spans[name], (row - 0.4, 0.8))
    axes.set_yticks(range(len(names)), [_label(n) for n in names])
    axes.invert_yaxis()
    axes.set_xlabel("simulated time (ms)")
    return _png(figure, "regions over simulated time")


def _functions_plot(rows: list[dict]) -> str:
    rows = rows[:TOP_PLOTTED_FUNCTIONS]
    figure, axes = _figure(0.3 * len(rows) + 1)
    axes.barh([_label(r.get("function") or "?") for r in rows], [r.get("exclusive_cycles", 0) for r in rows])
    axes.invert_yaxis()
    axes.set_xlabel("exclusive cycles")
    return _png(figure, "hottest functions")


def _samples_plot(samples: list[tuple[int, str]]) -> str:
    """Samples per time slice, stacked by function (the top ones; the rest as one)."""
    if not samples:
        return ""
    counts: dict[str, int] = {}
    for _, name in samples:
        counts[name] = counts.get(name, 0) + 1
    top = sorted(counts, key=lambda n: -counts[n])[:TOP_SAMPLED_FUNCTIONS]
    series = {name: [] for name in top + ["(other functions)"]}
    for cycle, name in samples:
        series[name if name in series else "(other functions)"].append(cycle / 1e6)
    series = {name: cycles for name, cycles in series.items() if cycles}
    figure, axes = _figure(4.5)
    axes.hist(list(series.values()), bins=min(100, max(10, len(samples) // 50)), stacked=True,
              label=[_label(n) for n in series])
    axes.set_xlabel("cycle (millions)")
    axes.set_ylabel("PC samples")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    return _png(figure, "PC samples over time by function")


def _power_plot(run: dict, bundle: str | Path) -> str:
    """`mcusim power-plot`'s figure (power.csv's trace with the region runs, energy per region),
    when the bundle has either."""
    from ..power.plots import NothingToPlot, power_plot

    data = io.BytesIO()
    try:
        power_plot(bundle, data, run)
    except NothingToPlot:
        return ""
    encoded = base64.b64encode(data.getvalue()).decode("ascii")
    return f"<img alt=\"power over time and energy per region\" src=\"data:image/png;base64,{encoded}\">"


def _roofline_plot(run: dict) -> str:
    from .roofline import plot

    figure, _ = _figure(6.5)
    figure.clear()
    placed = run["roofline"]
    plot(placed["regions"], placed["ceilings"], f"roofline: {run.get('board', '?')}", figure=figure)
    return _png(figure, "roofline")
