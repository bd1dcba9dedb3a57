"""The kit's models exported as .tflite (`python -m mcusim.tinyml.kit_export`) run validated
through `mcusim model run`, and with the kit's test input give the cycles of the kit's own
example firmware (`<model>-<variant>.elf`), layer by layer: one program, one set of kernels."""
import subprocess
import sys

import pytest

import mcusim
from conftest import require_tool
from mcusim.tinyml import model_run
from mcusim.tinyml.build import build
from mcusim.tinyml.models import MODELS, PAPER_MODELS
from mcusim.tinyml.placement import Placement
from mcusim.tinyml.tflite_model import load_model


def exported(name, folder):
    """The model as a user exports it, and the kit's fixed test input."""
    path = folder / f"{name}.tflite"
    done = subprocess.run([sys.executable, "-m", "mcusim.tinyml.kit_export", name, str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    model = load_model(path)
    test_input = build(MODELS[name]).tensors["input"].data.reshape(model.tensors[model.inputs[0]].shape)
    return model, test_input


@pytest.mark.parametrize("name, board", [("micro_speech", "mcu-s"), ("anomaly_ae", "mcu-m"), ("kws_dscnn_s", "mcu-b"),
                                         ("odd_shapes", "mcu-d")])
def test_an_exported_kit_model_runs_validated(tmp_path, name, board):
    require_tool("arm-none-eabi-gcc")
    model, _ = exported(name, tmp_path)
    done = model_run.run(model, board, tmp_path / "b")
    assert done.result.model["validated"], done.result.model
    layers = [r["name"] for r in done.result.regions if r["name"] != "inference"]
    assert len(layers) == len(MODELS[name].layers)


CASES = [(m.name, board, "opt") for m, board in zip(PAPER_MODELS, ["mcu-d", "mcu-s", "mcu-m", "mcu-b", "mcu-d"])] + \
        [("micro_speech", "mcu-m", "ref")]


@pytest.mark.slow
@pytest.mark.parametrize("name, board, variant", CASES)
def test_an_exported_kit_model_takes_the_kit_firmware_s_cycles(firmware_build, tmp_path, name, board, variant):
    model, test_input = exported(name, tmp_path)
    done = model_run.run(model, board, tmp_path / "b", inputs=[test_input], placement=Placement(kernels=variant))
    assert done.result.model["validated"], done.result.model
    kit = mcusim.run(firmware_build / board / f"{name}-{variant}.elf", board)
    assert kit.exit_code == 0 and "output matches the reference" in kit.stdout
    ours = {r["name"]: r["cycles_mean"] for r in done.result.regions}
    theirs = {r["name"]: r["cycles_mean"] for r in kit.regions}
    assert len(ours) == len(model.operators) + 1
    assert ours == theirs
    assert done.result.cycles == kit.cycles
