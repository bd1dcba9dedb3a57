"""The bundle's shipped JSON Schemas (src/mcusim/schemas): run.json and every CSV of real bundles
validate against them (a bundle with every capture, a model bundle, a sweep's results), and
ITM ports keep their bytes losslessly."""
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from mcusim import schemas
from mcusim.machine.machine import OUTPUT_HEAD, Kept, port_record

pytestmark = pytest.mark.slow  # three bundles


def _mcusim(*args):
    done = subprocess.run([sys.executable, "-m", "mcusim.cli", *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def _check_bundle(folder: Path) -> dict:
    document = json.loads((folder / "run.json").read_text())
    Draft202012Validator(schemas.load("run")).validate(document)
    assert document["schema_version"] == schemas.SCHEMA_VERSION
    csv_schema = schemas.load("csv")
    for path in folder.glob("*.csv"):
        row_schema = {**csv_schema["$defs"][path.name], "$defs": csv_schema["$defs"]}
        rows = schemas.csv_rows(path)
        assert rows, path
        for row in rows:
            Draft202012Validator(row_schema).validate(row)
    return document


def test_a_bundle_with_every_capture_validates(firmware_build, tmp_path):
    _mcusim("run", firmware_build / "mcu-s" / "micro_speech-opt.elf", "--board", "mcu-s", "--all", "--out", tmp_path,
            "-q")
    document = _check_bundle(tmp_path)
    assert {"regions.csv", "functions.csv", "lines.csv", "pc_samples.csv", "power.csv"} <= set(document["artifacts"])
    assert document["roofline"]["regions"] and document["memory"]["banks"]
    # the region markers' port is binary: kept as base64, each marker's word the address of its region's name
    markers = document["itm"]["30"]
    assert markers["encoding"] == "base64"
    words = base64.b64decode(markers["data"])
    assert len(words) == 4 * sum(r["count"] for r in document["regions"])


def test_a_model_bundle_and_a_sweep_s_results_validate(firmware_build, tmp_path):
    model = Path(__file__).parents[1] / "data" / "tflite" / "micro_speech_quantized.tflite"
    _mcusim("model", "run", model, "--board", "mcu-m", "--out", tmp_path / "model")
    assert _check_bundle(tmp_path / "model")["model"]["validated"]
    _mcusim("sweep", "--board", "mcu-s", "--firmware", firmware_build / "mcu-s" / "hello.elf", "--out", tmp_path / "sweep",
            "--workers", "1")
    csv_schema = schemas.load("csv")
    for row in schemas.csv_rows(tmp_path / "sweep" / "results.csv"):
        Draft202012Validator(csv_schema["$defs"]["results.csv"]).validate(row)
        _check_bundle(Path(row["bundle"]))


def test_a_new_run_json_key_fails_validation_until_the_schema_has_it():
    """The schema is closed: a key added to run.json without a schema (and version) change is caught."""
    from jsonschema import ValidationError

    from mcusim import examples, run

    document = run(examples.path("hello", "mcu-d"), "mcu-d").to_dict()
    validator = Draft202012Validator(schemas.load("run"))
    validator.validate(document)
    with pytest.raises(ValidationError, match="unexpected_key"):
        validator.validate({**document, "unexpected_key": 1})
    with pytest.raises(ValidationError):
        validator.validate({**document, "schema_version": "0.9"})


def test_itm_ports_keep_their_bytes_losslessly():
    text = Kept()
    text += "héllo\n".encode()
    assert port_record(text) == {"encoding": "utf-8", "data": "héllo\n"}
    binary = Kept()
    binary += bytes([0x08, 0x00, 0x8c, 0xc4])  # 0xc4088c... as words: not UTF-8
    assert base64.b64decode(port_record(binary)["data"]) == bytes([0x08, 0x00, 0x8c, 0xc4])
    flood = Kept()
    flood += b"\xff" * (OUTPUT_HEAD + 10 ** 6)
    record = port_record(flood)
    assert record["dropped_bytes"] == flood.dropped and record["dropped_at"] == OUTPUT_HEAD
