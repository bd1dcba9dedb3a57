"""The kit's models exported as .tflite run validated through `mcusim model run`
(benchmarks/kit_vs_tflite.py compares their cycles with the hand-built firmware's)."""
import pytest

from conftest import require_tool
from mcusim.tinyml import model_run
from mcusim.tinyml.build import build
from mcusim.tinyml.kit_export import export
from mcusim.tinyml.models import MODELS
from mcusim.tinyml.tflite_model import load_model


@pytest.mark.parametrize("name, board", [("micro_speech", "mcu-s"), ("anomaly_ae", "mcu-m"), ("kws_dscnn_s", "mcu-b"),
                                         ("odd_shapes", "mcu-d")])
def test_an_exported_kit_model_runs_validated(tmp_path, name, board):
    require_tool("arm-none-eabi-gcc")
    (tmp_path / "m.tflite").write_bytes(export(build(MODELS[name])))
    done = model_run.run(load_model(tmp_path / "m.tflite"), board, tmp_path / "b")
    assert done.result.model["validated"], done.result.model
    layers = [r["name"] for r in done.result.regions if r["name"] != "inference"]
    assert len(layers) == len(MODELS[name].layers)
