"""`mcusim report DIR` (rich tables) and `mcusim report DIR --html` on a real bundle: a KWS
model on mcu-m with the exact profile, PC samples and the regions' timeline."""
import json
import os
import re
import subprocess
import sys
from html import escape

import pytest
from click.testing import CliRunner

from mcusim.cli import main


pytestmark = pytest.mark.slow  # a KWS inference with its profile and samples


@pytest.fixture(scope="module")
def bundle(firmware_build, tmp_path_factory):
    """Made by `mcusim run` with its stderr on a pipe: the progress bar must stay away."""
    out = tmp_path_factory.mktemp("kws")
    done = subprocess.run([sys.executable, "-m", "mcusim.cli", "run", str(firmware_build / "mcu-m" / "kws_dscnn-opt.elf"),
                           "--board", "mcu-m", "--profile", "--pc-sample-cycles", "1000", "--perfetto", "--power-trace", "--out",
                           str(out)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stderr and "\r" not in done.stderr
    assert all(line.startswith("mcusim: ") for line in done.stderr.splitlines())
    return out, json.loads((out / "run.json").read_text())


def test_terminal_report_lists_the_functions_and_regions_with_their_numbers(bundle):
    out, run = bundle
    done = CliRunner().invoke(main, ["report", str(out)])
    assert done.exit_code == 0, done.output
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert any(line.split()[:2] == ["cycles", f"{run['cycles']:,}"] for line in lines)
    top = run["functions"][0]
    row = next(line for line in lines if line.startswith(top["function"] + " "))
    cells = row.split()
    assert cells[1:3] == [f"{top['exclusive_cycles']:,}", f"{100 * top['share']:.1f}%"] and cells[-1] == f"{top['calls']:,}"
    if "inclusive_cycles" in top:
        assert cells[3] == f"{top['inclusive_cycles']:,}"
    for line in run.get("lines", [])[:20]:  # the hottest source lines, when the bundle has them
        assert any(text.split()[:1] == [f"{line['file']}:{line['line']}"] and f"{line['cycles']:,}" in text
                   for text in lines)
    regions = lines[lines.index("regions") + 3:]  # title, header, rule
    assert regions[0].split()[0] == "inference"  # by cost: the whole inference first
    for region in run["regions"]:
        cells = next(line for line in regions if line.split()[0] == region["name"]).split()
        assert cells[1:8] == [str(region["count"]), f"{region['cycles_mean']:,.0f}", f"{region['cycles_p50']:,}",
                              f"{region['cycles_p95']:,}", f"{region['cycles_p99']:,}", f"{region['cycles_max']:,}",
                              f"{100 * region['share']:.1f}%"]
        assert cells[-1] == f"{region['macs_per_cycle']:.3f}"


def test_html_report_is_one_self_contained_page(bundle, tmp_path):
    out, run = bundle
    done = CliRunner().invoke(main, ["report", str(out), "--html"])
    assert done.exit_code == 0, done.output
    page = (out / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)  # nothing fetched from elsewhere
    # regions timeline, hottest functions, PC samples over time, power (power.csv) with the energy per region
    assert page.count("data:image/png;base64,") == 4 and 'alt="power over time and energy per region"' in page
    for row in run["functions"][:5]:
        assert f">{escape(row['function'])}</td>" in page
    for region in run["regions"]:
        assert f">{escape(region['name'])}</td>" in page
    assert f"{run['cycles']:,}" in page
    elsewhere = tmp_path / "kws.html"
    quiet = CliRunner().invoke(main, ["report", str(out), "--html", str(elsewhere), "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert elsewhere.read_text().count("data:image/png;base64,") == 4


def test_html_report_of_a_bundle_without_profile_samples_or_regions(firmware_build, tmp_path):
    import mcusim

    mcusim.run(firmware_build / "mcu-m" / "hello.elf", "mcu-m").write_bundle(tmp_path)
    done = CliRunner().invoke(main, ["report", str(tmp_path), "--html"])
    assert done.exit_code == 0, done.output
    page = (tmp_path / "report.html").read_text()
    assert "no regions" in page and "data:image/png" not in page and "hello.elf" in page
