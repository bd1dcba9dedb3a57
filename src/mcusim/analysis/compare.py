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
    return [f"setting {key}: {sa.get(key)} vs {sb.get(key)}" for key in CAPTURE_SETTINGS if sa.get(key) != sb.get(key)]


def _delta_rows(a_rows: list[dict], b_rows: list[dict], key: str, value: str) -> list[tuple]:
    a_map = {row[key]: row[value] for row in a_rows}
    b_map = {row[key]: row[value] for row in b_rows}
    rows = []
    for name in sorted(set(a_map) | set(b_map), key=lambda n: -max(a_map.get(n, 0), b_map.get(n, 0))):
        before, after = a_map.get(name), b_map.get(name)
        if before is None:
            ratio = "new"
        elif after is None:
            ratio = "gone"
        else:
            ratio = f"{after / before:.3f}x" if before else "-"
        rows.append((name, before, after, ratio))
    return rows


def _table(title: str, rows: list[tuple], limit: int) -> list[str]:
    lines = [f"\n{title}", f"{'name':<32} {'A':>14} {'B':>14} {'B/A':>9}", "-" * 72]
    for name, before, after, ratio in rows[:limit]:
        fmt = lambda v: "-" if v is None else f"{v:,.0f}"  # noqa: E731
        lines.append(f"{name[:32]:<32} {fmt(before):>14} {fmt(after):>14} {ratio:>9}")
    return lines


def report(a: dict, b: dict, limit: int = 20) -> str:
    lines = [f"A: {a.get('firmware', {}).get('path')} on {a.get('board')}: {a.get('cycles', 0):,} cycles",
             f"B: {b.get('firmware', {}).get('path')} on {b.get('board')}: {b.get('cycles', 0):,} cycles"]
    if a.get("cycles"):
        lines.append(f"B/A: {b.get('cycles', 0) / a['cycles']:.3f}x cycles")
    if a.get("functions") or b.get("functions"):
        lines += _table("functions (exclusive cycles)",
                        _delta_rows(a.get("functions") or [], b.get("functions") or [], "function",
                                    "exclusive_cycles"), limit)
    if a.get("regions") or b.get("regions"):
        lines += _table("regions (mean cycles)",
                        _delta_rows(a.get("regions") or [], b.get("regions") or [], "name", "cycles_mean"), limit)
    return "\n".join(lines)
