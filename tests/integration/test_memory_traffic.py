"""--memory-traffic: the bytes each memory bank serves to loads and stores, per region and in
all, against firmware that moves a known number of bytes; the roofline built on them; and
counting that changes nothing the firmware computes or the cycle model reports."""
import json

import pytest
from click.testing import CliRunner

from conftest import BOARDS
from mcusim.api import Simulator, run
from mcusim.cli import main

WORDS = 1024  # firmware/programs/memory-traffic: reads WORDS words of `table`, writes WORDS / 2 of `buffer`
SLACK = 32    # the loop's literal-pool loads (the addresses of the table, the buffer and the ITM ports)


def _bank(board_spec, address):
    region = board_spec.region_at(address)
    return board_spec.storage_region(region).name


@pytest.mark.parametrize("board", BOARDS)
def test_region_bytes_per_bank_are_what_the_firmware_moved(firmware_build, board):
    simulator = Simulator(firmware_build / board / "memory-traffic.elf", board, memory_traffic=True)
    result = simulator.run()
    assert result.exit_code == 0, result.exit_detail
    table = _bank(simulator.board, simulator.image.symbol("table"))
    buffer = _bank(simulator.board, simulator.image.symbol("buffer"))
    region = next(r for r in result.regions if r["name"] == "traffic")
    moved = region["bytes_by_bank"]
    assert set(moved) == {m.name for m in simulator.board.memory if not m.alias_of}
    assert 4 * WORDS <= moved[table] <= 4 * WORDS + SLACK
    assert 2 * WORDS <= moved[buffer] <= 2 * WORDS + SLACK
    assert all(count == 0 for bank, count in moved.items() if bank not in (table, buffer))
    assert region["intensity"] == round(WORDS / sum(moved.values()), 4)
    # the run's totals hold the region's, reads and writes apart
    traffic = result.roofline["traffic"]
    assert traffic[table]["read_bytes"] >= 4 * WORDS and traffic[buffer]["written_bytes"] >= 2 * WORDS
    # the region on the roofline: a word a cycle at best from zero-wait memory, less from flash that waits
    placed = next(p for p in result.roofline["regions"] if p["name"] == "traffic")
    assert placed["intensity"]["load/store"] == pytest.approx(region["intensity"], abs=1e-3)
    limits = result.roofline["ceilings"]
    ceiling = {c["bank"]: c["bytes_per_cycle"] for c in limits["banks"]}
    assert ceiling[buffer] == limits["load_store_bytes_per_cycle"]
    bounds = {"compute": limits["simd_macs_per_cycle"], "load/store": placed["intensity"]["load/store"] *
              limits["load_store_bytes_per_cycle"], **{b: placed["intensity"][b] * ceiling[b] for b in (table, buffer)}}
    assert placed["bound"] == min(bounds, key=bounds.get)
    assert placed["ceiling_fraction"] == pytest.approx(placed["macs_per_cycle"] / min(bounds.values()), rel=1e-3)
    assert placed["ceiling_fraction"] <= 1.0  # every ceiling bounds what was counted


@pytest.mark.parametrize("board", BOARDS)
def test_counting_traffic_changes_nothing_the_run_reports(firmware_build, board):
    """The counting hook adds no cycles and, with the IT state restored, cannot change a result
    (docs/machine.md): coremark-like's state machines run conditional loads in IT blocks."""
    elf = firmware_build / board / "coremark-like.elf"
    plain = run(elf, board, max_cycles=20_000_000)
    counted = run(elf, board, max_cycles=20_000_000, memory_traffic=True)
    assert counted.roofline is not None and plain.roofline is None
    assert (counted.instructions, counted.cycles, counted.stdout, counted.exit_code, counted.stalls, counted.dwt) == \
        (plain.instructions, plain.cycles, plain.stdout, plain.exit_code, plain.stalls, plain.dwt)
    assert counted.energy == plain.energy


def test_roofline_command_plots_a_bundle_and_explains_a_missing_one(firmware_build, tmp_path):
    elf = str(firmware_build / "mcu-m" / "memory-traffic.elf")
    counted, plain = tmp_path / "counted", tmp_path / "plain"
    runner = CliRunner()
    assert runner.invoke(main, ["run", elf, "--board", "mcu-m", "--memory-traffic", "--out", str(counted), "-q"]) \
        .exit_code == 0
    assert runner.invoke(main, ["run", elf, "--board", "mcu-m", "--out", str(plain), "-q"]).exit_code == 0
    done = runner.invoke(main, ["roofline", str(counted), "-o", str(tmp_path / "r.svg")])
    assert done.exit_code == 0, done.output
    row = next(line for line in done.stdout.splitlines() if line.startswith("traffic "))
    assert f"{WORDS:,}" in row and "bound" in row
    assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")
    assert runner.invoke(main, ["roofline", str(counted)]).exit_code == 0
    assert (counted / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = runner.invoke(main, ["roofline", str(plain)])
    assert missing.exit_code == 2 and "--memory-traffic" in missing.output
    # regions.csv: the bytes per bank as JSON, the intensity as a number
    import csv

    with open(counted / "regions.csv") as f:
        row = next(r for r in csv.DictReader(f) if r["name"] == "traffic")
    run_json = json.loads((counted / "run.json").read_text())
    assert json.loads(row["bytes_by_bank"]) == next(r for r in run_json["regions"] if r["name"] == "traffic")[
        "bytes_by_bank"]
    assert float(row["intensity"]) > 0
    # the report: the roofline table, and its plot in the HTML page
    report = runner.invoke(main, ["report", str(counted)])
    assert report.exit_code == 0 and "roofline" in report.stdout and "traffic" in report.stdout
    assert runner.invoke(main, ["report", str(counted), "--html", str(tmp_path / "r.html")]).exit_code == 0
    assert 'alt="roofline"' in (tmp_path / "r.html").read_text()
