"""What `mcusim report` shows of a bundle's run.json, as plain tables of strings, so that the
terminal report (rich) and the HTML page (html_report.py) show the same figures.

Every part of run.json is optional here: an old bundle, or one from a run without
--profile, sampling or regions, gives a shorter report, never an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..units import joules, mhz, seconds

TOP_FUNCTIONS = 20
TOP_LINES = 20
TOP_SAMPLES = 10
NO_REGIONS = "no regions: the firmware marked none (firmware/include/mcusim.h, mcusim_region_begin/end)"


@dataclass
class Section:
    """A titled table; the first `text_columns` columns are text, the rest numbers (right-aligned).
    `columns` None: a key/value table without a header row."""

    title: str
    columns: list[str] | None
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    text_columns: int = 1






def _count(value) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) else ""


def _share(value) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) else ""


def header(run: dict) -> Section:
    """What ran, on what, how long, how it ended."""
    clock = mhz(run.get("clock_hz") or 0)
    if run.get("clock_pinned"):
        clock += " (pinned by --clock-hz)"
    elif run.get("clock_changes"):
        clock += f" (set by firmware; reset {mhz(run.get('reset_clock_hz') or 0)})"
    board = run.get("board", "?") + (f" ({run['board_title']})" if run.get("board_title") else "")
    ipc = f"{run.get('ipc', 0):.2f}"
    if run.get("dual_issue_fraction"):
        ipc += f" ({100 * run['dual_issue_fraction']:.0f}% dual-issued)"
    exit_ = run.get("exit") or {}
    rows = [["firmware", (run.get("firmware") or {}).get("path", "?")], ["board", board],
            ["core", run.get("core", "?")], ["clock", clock],
            ["instructions", _count(run.get("instructions"))], ["cycles", _count(run.get("cycles"))],
            ["simulated time", seconds(run.get("simulated_seconds") or 0)],
            ["host time", f"{run.get('host_seconds', 0):.2f} s, {run.get('mips', 0):.1f} MIPS"],
            ["CPI", f"{run.get('cpi', 0):.2f}"], ["IPC", ipc],
            ["exit", f"{exit_.get('detail') or exit_.get('reason', '?')} -> exit code {exit_.get('code', '?')}"]]
    return Section("run", None, rows, text_columns=2)


def counters(run: dict) -> Section:
    """DWT counters, where the stall cycles went, predictor and caches."""
    cycles = run.get("cycles") or 0
    of_cycles = lambda n: f"{100 * n / cycles:.1f}% of cycles" if cycles else ""  # noqa: E731
    rows = [[f"DWT {name.upper()}", _count(value), ""] for name, value in (run.get("dwt") or {}).items()]
    if "issue_cycles" in run:
        rows.append(["issue cycles", _count(run["issue_cycles"]), of_cycles(run["issue_cycles"])])
    for name, value in (run.get("stalls") or {}).items():
        if value:
            rows.append([f"stall: {name.replace('_', ' ')}", _count(value), of_cycles(value)])
    if run.get("exceptions_taken"):
        rows.append(["exceptions taken", _count(run["exceptions_taken"]), ""])
    predicted = run.get("branches_predicted") or 0
    if predicted:
        mispredicts = run.get("branch_mispredicts") or 0
        rows.append(["branches predicted", _count(predicted), ""])
        rows.append(["branch mispredicts", _count(mispredicts), f"{100 * mispredicts / predicted:.1f}% of branches"])
    for label, key in (("I-cache", "icache"), ("D-cache", "dcache")):
        cache = run.get(key) or {}
        accesses = cache.get("hits", 0) + cache.get("misses", 0)
        if accesses:
            rows.append([f"{label} hits", _count(cache["hits"]), ""])
            rows.append([f"{label} misses", _count(cache["misses"]), f"{100 * cache['misses'] / accesses:.2f}% of accesses"])
            if cache.get("writebacks"):
                rows.append([f"{label} write-backs", _count(cache["writebacks"]), "dirty lines written back"])
    sampled = run.get("sampled_data") or {}
    if sampled.get("untimed_cycles"):
        rows.append(["cycles between sampling windows", _count(sampled["untimed_cycles"]),
                     f"--data-timing sampled: {sampled.get('windows', 0):,} windows timed access by access"])
        rows.append(["estimated data wait", _count(sampled.get("estimated_wait_cycles", 0)),
                     "cycles charged from each block's average in the windows"])
        rows.append(["estimated fetch wait", _count(sampled.get("estimated_fetch_wait_cycles", 0)),
                     "instruction-fetch cycles charged from each block's average in the windows"])
        rows.append(["estimated flash reads", _count(sampled.get("estimated_flash_reads", 0)), "counted for energy"])
    resident = run.get("resident_pages") or {}  # (bundles of runs before the forty-first pass only)
    if resident.get("pages_read_plain"):
        rows.append(["flash data pages read plain", _count(resident["pages_read_plain"]),
                     "while all their lines were cached (untimed hits: D-cache hits count the timed reads)"])
    return Section("counters", ["counter", "value", "share"], rows)


def functions(run: dict) -> Section | None:
    rows = run.get("functions") or []
    if not rows:
        return None
    inclusive = "inclusive_cycles" in rows[0]
    columns = ["function", "exclusive cycles", "share"] + (["inclusive cycles"] if inclusive else []) + ["calls"]
    table = []
    for r in rows[:TOP_FUNCTIONS]:
        cells = [r.get("function") or "?", _count(r.get("exclusive_cycles")), _share(r.get("share"))]
        if inclusive:
            cells.append(_count(r.get("inclusive_cycles")))
        table.append(cells + [_count(r.get("calls"))])
    note = f"... {len(rows) - TOP_FUNCTIONS} more in functions.csv" if len(rows) > TOP_FUNCTIONS else ""
    return Section("functions (exact profile)", columns, table, note)


def lines(run: dict) -> Section | None:
    rows = run.get("lines") or []
    if not rows:
        return None
    table = [[f"{r.get('file', '?')}:{r.get('line', '?')}", r.get("function") or "", _count(r.get("cycles")),
              _share(r.get("share"))] for r in rows[:TOP_LINES]]
    return Section("source lines", ["line", "function", "cycles", "share"], table, text_columns=2)


def samples(run: dict) -> Section | None:
    sampled = run.get("pc_samples")
    if not sampled:
        return None
    table = [[name or "(outside any function)", _share(share)]
             for name, share in list((sampled.get("shares") or {}).items())[:TOP_SAMPLES]]
    title = f"PC samples: {sampled.get('count', 0):,}, one every {sampled.get('period_cycles', 0):,} cycles"
    return Section(title, ["function", "share of samples"], table)


def regions(run: dict) -> Section:
    """By total cost (count x mean), as a profiler lists functions."""
    rows = sorted(run.get("regions") or [], key=lambda r: -r.get("cycles_mean", 0) * r.get("count", 0))
    table = [[r.get("name", "?"), _count(r.get("count")), _count(r.get("cycles_mean")), _count(r.get("cycles_p50")),
              _count(r.get("cycles_p95")), _count(r.get("cycles_p99")), _count(r.get("cycles_max")),
              _share(r.get("share")), _count(r.get("macs")), f"{r.get('macs_per_cycle', 0):.3f}"] for r in rows]
    return Section("regions", ["region", "count", "mean cycles", "p50", "p95", "p99", "max", "share", "MACs",
                               "MACs/cycle"], table, "" if table else NO_REGIONS)


def energy(run: dict) -> Section | None:
    """Energy per rail and power, then per region (mean per run), when the board has a power model."""
    if run.get("energy_j") is None:
        return None
    total = run["energy_j"] or 1e-30
    table = [[f"energy: {rail}", joules(j), _share(j / total)] for rail, j in (run.get("energy_by_rail_j") or {}).items()]
    table += [["energy", joules(run["energy_j"]), ""],
              ["power model", Path(str((run.get("power") or {}).get("model", "?"))).name, ""],
              ["average power", f"{1e3 * (run.get('average_power_w') or 0):.3f} mW", ""],
              ["peak power", f"{1e3 * (run.get('peak_power_w') or 0):.3f} mW", ""]]
    for r in run.get("regions") or []:
        if "energy_j" in r:
            table.append([f"region {r['name']}", joules(r["energy_j"]) + " per run",
                          f"{1e3 * r.get('average_power_w', 0):.3f} mW"])
    return Section("energy", None, table)


def memory(run: dict) -> Section | None:
    """The footprint per memory bank and the stack and heap peaks (analysis/memory.py)."""
    used = run.get("memory")
    if not used:
        return None
    table = [[bank["name"], bank.get("kind", "?"), _count(bank.get("used_bytes")), _count(bank.get("size_bytes")),
              _share(bank.get("used_fraction")), _count(bank.get("changed_bytes"))]
             for bank in used.get("banks", []) if bank.get("used_bytes") or bank.get("changed_bytes")]
    table += [["flash (code, constants, data image)", "", _count(used.get("flash_bytes")), "", "", ""],
              ["RAM (data, bss)", "", _count(used.get("ram_bytes")), "", "", ""],
              ["stack peak (main stack)" + (f", deepest in {used['stack_peak_function']}"
                                            if used.get("stack_peak_function") else ""),
               "", _count(used.get("stack_peak_bytes")), "", "", ""],
              ["heap peak", "", _count(used.get("heap_peak_bytes")), "", "", ""]]
    process = used.get("process_stack")
    if process:
        table.insert(-1, ["stack peak (process stack)" + (f", deepest in {process['peak_function']}"
                                                          if process.get("peak_function") else ""),
                          "", _count(process.get("peak_bytes")), "", "", ""])
    if used.get("heap_sbrk_peak_bytes") is not None:
        table.append(["heap handed out by _sbrk (peak)", "", _count(used["heap_sbrk_peak_bytes"]), "", "", ""])
    return Section("memory (bytes)", ["bank", "kind", "used", "size", "share", "changed by the run"], table,
                   text_columns=2)


def roofline(run: dict) -> Section | None:
    """The regions on the roofline (--memory-traffic; analysis/roofline.py), then the ceilings."""
    placed = run.get("roofline")
    if not placed or not placed.get("ceilings"):
        return None
    limits = placed["ceilings"]
    table = [[p.get("name", "?"), _count(p.get("macs")), f"{p.get('macs_per_cycle', 0):.3f}",
              f"{(p.get('intensity') or {}).get('load/store', 0):.3f}", str(p.get("bound", "?")),
              _share(p.get("ceiling_fraction")), str(p.get("verdict", "?"))] for p in placed.get("regions", [])]
    note = (f"Ceilings: SIMD peak {limits['simd_macs_per_cycle']:g} MACs/cycle, plain {limits['plain_macs_per_cycle']:g}; "
            f"load/store {limits['load_store_bytes_per_cycle']:g} B/cycle; "
            + "; ".join(f"{b['bank']} {b['bytes_per_cycle']:g} B/cycle ({b['how']})" for b in limits["banks"])
            + ". Bytes moved per bank: " + ", ".join(f"{bank} {v['read_bytes']:,} read, {v['written_bytes']:,} written"
                                                     for bank, v in (placed.get("traffic") or {}).items()) + ".")
    return Section("roofline", ["region", "MACs", "MACs/cycle", "MACs/byte", "bound", "of ceiling", "verdict"],
                   table, note)


def sections(run: dict) -> list[Section]:
    """The report's tables, in order; the optional ones only when the bundle has them."""
    parts = [header(run), counters(run), memory(run), energy(run), functions(run), lines(run), samples(run),
             regions(run), roofline(run)]
    return [part for part in parts if part is not None]


def render_terminal(run: dict, console) -> None:
    """Print the report as rich tables on `console`; names are rich Text, never markup."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    for i, part in enumerate(sections(run)):
        if i:
            console.print()
        if part.rows:
            table = Table(title=Text(part.title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD,
                          show_header=part.columns is not None, show_edge=False, pad_edge=False)
            for i, name in enumerate(part.columns or ["", ""]):
                text = i < part.text_columns
                table.add_column(name, justify="left" if text else "right", overflow="fold", no_wrap=not text)
            for row in part.rows:
                table.add_row(*(Text(cell) for cell in row))
            console.print(table)
        if part.note:
            console.print(Text(part.note))
