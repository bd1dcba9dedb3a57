"""The report's tables (terminal and HTML) from run.json documents with and without the
optional parts; names are escaped in HTML and never read as rich markup."""
import io

from rich.console import Console

from mcusim.analysis.html_report import build
from mcusim.analysis.report import render_terminal

HOSTILE = "<script>alert('x')</script>"
RUN = {
    "firmware": {"path": "app.elf"}, "board": "mcu-m", "cycles": 1000, "clock_hz": 80_000_000,
    "functions": [{"function": HOSTILE, "exclusive_cycles": 600, "share": 0.6, "calls": 1, "inclusive_cycles": 900},
                  {"function": "[bold]not markup[/bold] a$b$c", "exclusive_cycles": 400, "share": 0.4, "calls": 2,
                   "inclusive_cycles": 400}],
    "lines": [{"file": "main.c", "line": 42, "function": "main", "cycles": 300, "share": 0.3}],
    "regions": [{"name": "a&b<i>", "count": 2, "cycles_mean": 250.0, "cycles_max": 260, "cycles_p50": 250,
                 "cycles_p95": 260, "cycles_p99": 260, "share": 0.5, "macs": 100, "macs_per_cycle": 0.4}],
}


def terminal(run):
    out = io.StringIO()
    render_terminal(run, Console(file=out, width=160))
    return out.getvalue()


def test_html_escapes_names_and_embeds_the_plots():
    page = build(RUN)
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&amp;b&lt;i&gt;" in page
    assert page.count("data:image/png;base64,") == 2  # hottest functions, regions by total cycles
    assert "inclusive cycles" in page and "main.c:42" in page


def test_terminal_shows_optional_columns_and_prints_names_verbatim():
    shown = terminal(RUN)
    assert HOSTILE in shown and "[bold]not markup[/bold]" in shown
    assert "inclusive cycles" in shown and "main.c:42" in shown
    assert "inclusive cycles" not in terminal({**RUN, "functions": [
        {k: v for k, v in row.items() if k != "inclusive_cycles"} for row in RUN["functions"]]})


def test_a_bare_run_json_still_reports():
    assert "no regions" in terminal({})
    page = build({}, timeline="/nonexistent/timeline.json", pc_samples="/nonexistent/pc_samples.csv")
    assert "no regions" in page and "data:image/png" not in page


def test_energy_section_only_with_a_power_model():
    from mcusim.analysis.report import energy

    assert energy({"cycles": 10}) is None
    run = {"energy_j": 0.002, "energy_by_rail_j": {"core": 0.0015, "board": 0.0005}, "average_power_w": 0.1,
           "peak_power_w": 0.12, "power": {"model": "/x/mcu-m.toml"},
           "regions": [{"name": "inference", "energy_j": 0.001, "average_power_w": 0.11}]}
    rows = {row[0]: row[1:] for row in energy(run).rows}
    assert rows["energy: core"] == ["1.500 mJ", "75.0%"] and rows["energy"][0] == "2.000 mJ"
    assert rows["peak power"][0] == "120.000 mW" and rows["power model"][0] == "mcu-m.toml"
    assert rows["region inference"] == ["1.000 mJ per run", "110.000 mW"]


def test_compare_warns_when_capture_or_power_settings_differ():
    from mcusim.analysis.compare import setting_differences

    a = {"settings": {"pc_sample_cycles": 1000, "voltage_range": None}}
    b = {"settings": {"pc_sample_cycles": 500, "voltage_range": "range2"}}
    assert setting_differences(a, b) == ["setting pc_sample_cycles: 1000 vs 500", "setting voltage_range: not set vs range2"]
    assert setting_differences(a, a) == [] and setting_differences({}, {}) == []


def test_compare_as_data_csv_rows_and_text():
    """`mcusim compare --json/--csv` and the text share one comparison: ratios B/A, a function
    only one side has (new, gone), a zero on side A (no ratio)."""
    from mcusim.analysis.compare import comparison, csv_rows, report

    a = {"board": "mcu-m", "cycles": 1000, "energy_j": 2e-3, "firmware": {"path": "a.elf"},
         "functions": [{"function": "f", "exclusive_cycles": 600}, {"function": "old", "exclusive_cycles": 400}],
         "regions": [{"name": "r", "cycles_mean": 0}]}
    b = {"board": "mcu-m", "cycles": 1500, "energy_j": 3e-3, "firmware": {"path": "b.elf"},
         "functions": [{"function": "f", "exclusive_cycles": 900}, {"function": "new", "exclusive_cycles": 600}],
         "regions": [{"name": "r", "cycles_mean": 5}]}
    data = comparison(a, b)
    assert data["cycles_ratio"] == 1.5 and data["energy_ratio"] == 1.5
    assert data["functions"] == [{"name": "f", "a": 600, "b": 900, "ratio": 1.5},
                                 {"name": "new", "a": None, "b": 600, "ratio": None},
                                 {"name": "old", "a": 400, "b": None, "ratio": None}]
    assert data["regions"] == [{"name": "r", "a": 0, "b": 5, "ratio": None}]
    rows = csv_rows(data)
    assert [(r["kind"], r["name"]) for r in rows] == [("total", "cycles"), ("total", "energy_j"), ("function", "f"),
                                                      ("function", "new"), ("function", "old"), ("region", "r")]
    text = report(a, b)
    assert "B/A: 1.500x cycles" in text and " new" in text and " gone" in text and "1.500x" in text
