"""Per-layer regions of a TinyML model: run.json, regions.csv and `mcusim report`."""
import csv
import io
import json

import pytest

import mcusim
from clirun import run_cli
from mcusim.tinyml.build import build
from mcusim.tinyml.kit_firmware import layer_regions
from mcusim.tinyml.models import MODELS


@pytest.mark.slow
def test_layers_are_regions_with_their_work(firmware_build, tmp_path):
    result = mcusim.run(firmware_build / "mcu-m" / "kws_dscnn-opt.elf", "mcu-m")
    built = build(MODELS["kws_dscnn"])
    regions = layer_regions("kws_dscnn")  # the kit's layer names -> "<index>_<OP>"
    rows = {row["name"]: row for row in result.regions}
    assert list(rows) == [regions[q.layer.name] for q in built.layers] + ["inference"]
    for q in built.layers:
        assert rows[regions[q.layer.name]]["macs"] == q.macs and rows[regions[q.layer.name]]["count"] == 1
    layers = sum(rows[regions[q.layer.name]]["cycles_mean"] for q in built.layers)
    assert layers <= rows["inference"]["cycles_mean"] < result.cycles
    pw1, dw1 = rows[regions["pw1"]], rows[regions["dw1"]]
    assert pw1["macs_per_cycle"] > dw1["macs_per_cycle"]  # the SIMD kernel at work
    result.write_bundle(tmp_path)
    with open(tmp_path / "regions.csv") as f:
        table = list(csv.DictReader(f))
    assert table[0].keys() >= {"name", "count", "cycles_mean", "macs", "macs_per_cycle"}
    assert [row["name"] for row in table] == list(rows)
    done = run_cli("report", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    regions = lines[lines.index("regions") + 3:]  # title, header, rule: then by cost
    assert regions[0].split()[0] == "inference" and any(line.startswith("2_CONV_2D ") for line in regions)


def test_report_of_a_bundle_without_regions_says_so(firmware_build, tmp_path):
    mcusim.run(firmware_build / "mcu-m" / "hello.elf", "mcu-m").write_bundle(tmp_path)
    done = run_cli("report", tmp_path)
    assert done.returncode == 0 and "no regions" in done.stdout
    missing = run_cli("report", tmp_path / "nothing")
    assert missing.returncode == 2


@pytest.mark.slow
def test_compare_two_bundles(firmware_build, tmp_path):
    for name, board, variant in (("a", "mcu-m", "ref"), ("b", "mcu-m", "opt"), ("d", "mcu-d", "opt")):
        mcusim.run(firmware_build / board / f"kws_dscnn-{variant}.elf", board, profile=True).write_bundle(tmp_path / name)
    done = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    pw1 = next(line for line in lines if line.startswith("2_CONV_2D "))  # kws_dscnn's pw1
    assert float(pw1.split()[-1].rstrip("x")) < 0.5  # the SIMD kernels take less than half the cycles
    assert next(line for line in lines if line.startswith("tfl_conv ")).endswith("gone")  # the plain C kernel
    assert next(line for line in lines if line.startswith("tfl_conv_opt ")).endswith("new")
    refused = run_cli("compare", tmp_path / "a", tmp_path / "d")
    assert refused.returncode == 2 and "not comparable" in refused.stderr and "board: mcu-m vs mcu-d" in refused.stderr
    forced = run_cli("compare", "--force", tmp_path / "a", tmp_path / "d")
    assert forced.returncode == 0 and "warning: board" in forced.stderr
    assert run_cli("compare", "--force", "-q", tmp_path / "a", tmp_path / "d").stderr == ""
    data = json.loads(run_cli("compare", "--json", tmp_path / "a", tmp_path / "b").stdout)
    pw1 = next(row for row in data["regions"] if row["name"] == "2_CONV_2D")
    assert pw1["ratio"] == round(pw1["b"] / pw1["a"], 6) < 0.5 and data["b"]["board"] == "mcu-m"
    conv = next(row for row in data["functions"] if row["name"] == "tfl_conv")
    assert conv["a"] > 0 and conv["b"] is None and conv["ratio"] is None
    rows = list(csv.DictReader(io.StringIO(run_cli("compare", "--csv", tmp_path / "a", tmp_path / "b").stdout)))
    assert rows[0]["kind"] == "total" and int(rows[0]["a"]) == data["a"]["cycles"]
    assert {row["name"] for row in rows if row["kind"] == "region"} == {row["name"] for row in data["regions"]}
    assert run_cli("compare", "--json", "--csv", tmp_path / "a", tmp_path / "b").returncode == 2


@pytest.mark.slow
def test_regions_timeline_for_perfetto(firmware_build, tmp_path):
    result = mcusim.run(firmware_build / "mcu-m" / "kws_dscnn-opt.elf", "mcu-m", timeline=True)
    slices = [e for e in result.timeline["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in slices][0] == "inference" and len(slices) == len(result.regions)
    inference = slices[0]
    for layer in slices[1:]:  # every layer nests inside the inference, in simulated microseconds
        assert inference["ts"] <= layer["ts"] and layer["ts"] + layer["dur"] <= inference["ts"] + inference["dur"] + 1e-6
    assert sum(e["args"]["cycles"] for e in slices[1:]) <= inference["args"]["cycles"]
    result.write_bundle(tmp_path)
    assert (tmp_path / "timeline.json").is_file()


def test_timeline_has_exception_handlers_and_itm_writes_at_ns_timestamps(tmp_path):
    """The `exceptions` example takes SysTick and other exceptions: each handler run is a slice
    on the exceptions track, its cycles those between entry and return; ITM port 0 output is an
    instant on the ITM track; timestamps are whole nanoseconds."""
    from mcusim import examples
    from mcusim.machine.exceptions import exception_name

    result = mcusim.run(examples.path("exceptions", "mcu-m"), "mcu-m", timeline=True)
    events = result.timeline["traceEvents"]
    handlers = [e for e in events if e.get("tid") == 2 and e["ph"] == "X"]
    assert len(handlers) >= result.exceptions_taken // 2 and handlers
    assert all(e["name"] == exception_name(e["args"]["exception"]) and e["args"]["cycles"] > 0 for e in handlers)
    assert {e["args"]["name"] for e in events if e["ph"] == "M"} >= {"regions", "exceptions", "ITM writes"}
    for e in events:
        if "ts" in e:
            assert e["ts"] == round(e["ts"], 3) and len(repr(e["ts"]).split(".")[-1]) <= 3
    from elfgen import program

    firmware = tmp_path / "itm.elf"
    firmware.write_bytes(program("itm"))  # writes "OK\n" to ITM port 0, a byte at a time
    itm = mcusim.run(firmware, "mps2-an386", timeline=True)
    instants = [e for e in itm.timeline["traceEvents"] if e.get("tid") == 3 and e["ph"] != "M"]
    assert [(e["ph"], e["name"], e["args"]["data"]) for e in instants] == [("i", "ITM port 0", c) for c in "OK\n"]
    assert [e["ts"] for e in instants] == sorted(e["ts"] for e in instants)
    json.loads(json.dumps(result.timeline, allow_nan=False))  # strict JSON, as a Chrome-trace importer reads it
