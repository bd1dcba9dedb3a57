"""Two result bundles side by side (`mcusim compare A B`): per function and per region, B
against A, the way a hardware profiler compares two captures. Runs on different boards,
clocks or cores are compared only when asked to (their cycles do not mean the same)."""
from __future__ import annotations

SETTINGS = ("board", "core", "clock_hz")


CAPTURE_SETTINGS = ("pc_sample_cycles", "voltage_range", "power_model", "power_bin_us", "flash_latency")


def differences(a: dict, b: dict) -> list[str]:
    """What makes the two runs' cycles incomparable."""
    return [f"{key}: {a.get(key)} vs {b.get(key)}" for key in SETTINGS if a.get(key) != b.get(key)]


def setting_differences(a: dict, b: dict) -> list[str]:
    """Capture and power settings that differ: the runs compare, but their samples or energy
    do not mean the same (warned about, not refused)."""
    sa, sb = a.get("settings") or {}, b.get("settings") or {}
    shown = lambda value: "not set" if value is None else value  # noqa: E731
    return [f"setting {key}: {shown(sa.get(key))} vs {shown(sb.get(key))}" for key in CAPTURE_SETTINGS
            if sa.get(key) != sb.get(key)]


def _ratio(before, after) -> float | None:
    return round(after / before, 6) if before and after is not None else None


def _delta_rows(a_rows: list[dict], b_rows: list[dict], key: str, value: str) -> list[dict]:
    """{name, a, b, ratio (B/A; None when either side lacks it or A is 0)}, largest first."""
    a_map = {row[key]: row[value] for row in a_rows}
    b_map = {row[key]: row[value] for row in b_rows}
    return [{"name": name, "a": a_map.get(name), "b": b_map.get(name), "ratio": _ratio(a_map.get(name), b_map.get(name))}
            for name in sorted(set(a_map) | set(b_map), key=lambda n: -max(a_map.get(n) or 0, b_map.get(n) or 0))]


def comparison(a: dict, b: dict) -> dict:
    """The comparison as data (`mcusim compare --json`): both runs, the cycles ratio, and the
    functions (exclusive cycles) and regions (mean cycles) side by side."""
    side = lambda run: {"firmware": (run.get("firmware") or {}).get("path"), "board": run.get("board"),  # noqa: E731
                        "cycles": run.get("cycles", 0), "energy_j": run.get("energy_j")}
    return {"a": side(a), "b": side(b), "cycles_ratio": _ratio(a.get("cycles"), b.get("cycles", 0)),
            "energy_ratio": _ratio(a.get("energy_j"), b.get("energy_j")),
            "functions": _delta_rows(a.get("functions") or [], b.get("functions") or [], "function",
                                     "exclusive_cycles"),
            "regions": _delta_rows(a.get("regions") or [], b.get("regions") or [], "name", "cycles_mean")}


def csv_rows(compared: dict) -> list[dict]:
    """One row per figure (`mcusim compare --csv`): kind (total, function, region), name, A, B, B/A."""
    rows = [{"kind": "total", "name": "cycles", "a": compared["a"]["cycles"], "b": compared["b"]["cycles"],
             "ratio": compared["cycles_ratio"]}]
    if compared["a"]["energy_j"] is not None or compared["b"]["energy_j"] is not None:
        rows.append({"kind": "total", "name": "energy_j", "a": compared["a"]["energy_j"],
                     "b": compared["b"]["energy_j"], "ratio": compared["energy_ratio"]})
    for kind in ("functions", "regions"):
        rows += [{"kind": kind[:-1], **row} for row in compared[kind]]
    return rows


def _shown_ratio(row: dict) -> str:
    if row["a"] is None:
        return "new"
    if row["b"] is None:
        return "gone"
    return "-" if row["ratio"] is None else f"{row['ratio']:.3f}x"


def _table(title: str, rows: list[dict], limit: int) -> list[str]:
    lines = [f"\n{title}", f"{'name':<32} {'A':>14} {'B':>14} {'B/A':>9}", "-" * 72]
    fmt = lambda v: "-" if v is None else f"{v:,.0f}"  # noqa: E731
    for row in rows[:limit]:
        lines.append(f"{row['name'][:32]:<32} {fmt(row['a']):>14} {fmt(row['b']):>14} {_shown_ratio(row):>9}")
    return lines


def report(a: dict, b: dict, limit: int = 20) -> str:
    compared = comparison(a, b)
    lines = [f"A: {compared['a']['firmware']} on {a.get('board')}: {compared['a']['cycles']:,} cycles",
             f"B: {compared['b']['firmware']} on {b.get('board')}: {compared['b']['cycles']:,} cycles"]
    if compared["cycles_ratio"] is not None:
        lines.append(f"B/A: {compared['cycles_ratio']:.3f}x cycles")
    if compared["functions"]:
        lines += _table("functions (exclusive cycles)", compared["functions"], limit)
    if compared["regions"]:
        lines += _table("regions (mean cycles)", compared["regions"], limit)
    return "\n".join(lines)
