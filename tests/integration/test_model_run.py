"""`mcusim model run` and `model build` on the converter-made models: built for every board,
run, validated bit for bit against the TFLite Micro interpreter, a region per layer."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clirun import run_cli
from conftest import require_tool
from mcusim.config import board_names

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import test_tflite_reference as cases  # noqa: E402  (its model strategies)

DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"
MODELS = {"hello_world_int8": ["0_FULLY_CONNECTED", "1_FULLY_CONNECTED", "2_FULLY_CONNECTED"],
          "micro_speech_quantized": ["0_RESHAPE", "1_DEPTHWISE_CONV_2D", "2_FULLY_CONNECTED", "3_SOFTMAX"]}


@pytest.mark.parametrize("board", board_names())
@pytest.mark.parametrize("name", sorted(MODELS))
def test_converter_made_models_run_validated_on_every_board(tmp_path, board, name):
    require_tool("arm-none-eabi-gcc")
    done = run_cli("model", "run", DATA / f"{name}.tflite", "--board", board, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "validated" in done.stderr
    assert "output matches the reference" in done.stdout  # the firmware's own check, the interpreter's outputs embedded
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["model"]["validated"] is True and run["model"]["max_abs_diff"] == 0
    assert run["model"]["reference"].startswith("tflite-micro")
    regions = {r["name"]: r for r in run["regions"]}
    for layer in MODELS[name]:
        assert regions[layer]["count"] == 1 and regions[layer]["cycles_mean"] > 0
    inference = regions["inference"]
    assert inference["cycles_mean"] >= sum(regions[layer]["cycles_mean"] for layer in MODELS[name])
    if name == "micro_speech_quantized":  # Table III of the paper: 336,000 MACs
        assert inference["macs"] == 336_000 and regions["1_DEPTHWISE_CONV_2D"]["macs"] == 320_000
    assert (tmp_path / "build" / "model.c").is_file() and (tmp_path / "build" / "plan.txt").is_file()


def test_a_given_input_is_used_and_a_wrong_one_refused(tmp_path):
    require_tool("arm-none-eabi-gcc")
    x = np.full((1, 1), 37, np.int8)
    np.save(tmp_path / "x.npy", x)
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mcu-s", "--out", tmp_path / "b",
                   "--input", tmp_path / "x.npy")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "b" / "run.json").read_text())["model"]["input"] == "given"
    np.save(tmp_path / "wrong.npy", np.zeros((3, 3), np.int8))
    refused = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mcu-s", "--out", tmp_path / "c",
                      "--input", tmp_path / "wrong.npy")
    assert refused.returncode == 2 and "shape" in refused.stderr


def _one_off(y):
    """An interpreter answer one step off (as a wrong reference would be)."""
    return (y.astype(np.int16) + 1).clip(-128, 127).astype(y.dtype)


def test_outputs_that_differ_from_the_interpreter_exit_1(tmp_path, monkeypatch):
    """The comparison is real: an interpreter answer one step off makes the run a mismatch."""
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import tflm_reference

    honest = tflm_reference.outputs
    monkeypatch.setattr(tflm_reference, "outputs", lambda *a, **k: [_one_off(y) for y in honest(*a, **k)])
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mps2-an386", "--out", tmp_path)
    assert done.returncode == 1
    assert "MISMATCH" in done.stderr and "not of a correct inference" in done.stderr
    assert "MISMATCH: output 0 byte " in done.stdout  # the firmware found it too (and exited 1)
    assert "did not finish" not in done.stderr
    assert json.loads((tmp_path / "run.json").read_text())["model"]["validated"] is False


def test_model_build_writes_the_c_the_plan_and_the_elf(tmp_path):
    require_tool("arm-none-eabi-gcc")
    done = run_cli("model", "build", DATA / "micro_speech_quantized.tflite", "--board", "mcu-d", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tfl_depthwise_opt(" in (tmp_path / "model.c").read_text()  # the SIMD kernels by default
    assert "336,000 MACs" in (tmp_path / "plan.txt").read_text()
    assert (tmp_path / "model.elf").stat().st_size > 0
    done = run_cli("model", "build", DATA / "micro_speech_quantized.tflite", "--board", "mcu-d", "--out", tmp_path,
                   "--variant", "ref")
    assert done.returncode == 0, done.stderr
    source = (tmp_path / "model.c").read_text()
    assert "tfl_depthwise(" in source and "_opt(" not in source


def test_a_built_elf_checks_its_outputs_against_the_interpreter_s(tmp_path, monkeypatch):
    """`model build` embeds the interpreter's outputs: the ELF run on its own says whether its
    outputs match; without them (--no-check, or the interpreter failing) it compares nothing, and
    the build says so."""
    require_tool("arm-none-eabi-gcc")
    import mcusim
    from mcusim.tinyml import tflm_reference

    model = DATA / "hello_world_int8.tflite"
    assert run_cli("model", "build", model, "--board", "mcu-m", "--out", tmp_path / "a").returncode == 0
    checked = mcusim.run(tmp_path / "a" / "model.elf", "mcu-m")
    assert checked.exit_code == 0 and "output matches the reference" in checked.stdout
    done = run_cli("model", "build", model, "--board", "mcu-m", "--out", tmp_path / "b", "--no-check")
    assert done.returncode == 0 and "compares its outputs with nothing (--no-check)" in done.stderr
    assert "nothing compared" in mcusim.run(tmp_path / "b" / "model.elf", "mcu-m").stdout

    def fails(*args, **kwargs):
        raise tflm_reference.InterpreterError("the TFLite Micro interpreter is not installed")
    monkeypatch.setattr(tflm_reference, "outputs", fails)
    done = run_cli("model", "build", model, "--board", "mcu-m", "--out", tmp_path / "c")
    assert done.returncode == 0 and "compares its outputs with nothing (the TFLite Micro interpreter is not" \
        in done.stderr


def test_kernel_variants_per_layer_are_used_recorded_and_faster(tmp_path):
    """`kernels` and [layer_kernels] choose each layer's kernels; run.json's per-layer rows say
    which ran; the SIMD depthwise convolution takes fewer cycles than the plain one."""
    require_tool("arm-none-eabi-gcc")
    (tmp_path / "p.toml").write_text('kernels = "opt"\n[layer_kernels]\n"1_DEPTHWISE_CONV_2D" = "ref"\n')
    runs = {}
    for name, options in (("mixed", ["--config", tmp_path / "p.toml"]), ("opt", []), ("ref", ["--variant", "ref"])):
        done = run_cli("model", "run", DATA / "micro_speech_quantized.tflite", "--board", "mcu-m",
                       "--out", tmp_path / name, *options)
        assert done.returncode == 0, done.stderr
        runs[name] = json.loads((tmp_path / name / "run.json").read_text())
        assert runs[name]["model"]["validated"]
    kernels = {name: {row["name"]: row["kernel"] for row in run["model"]["per_layer"]} for name, run in runs.items()}
    assert kernels["mixed"] == {"0_RESHAPE": "ref", "1_DEPTHWISE_CONV_2D": "ref", "2_FULLY_CONNECTED": "opt",
                                "3_SOFTMAX": "ref"}
    assert kernels["opt"]["1_DEPTHWISE_CONV_2D"] == "opt" and set(kernels["ref"].values()) == {"ref"}
    assert runs["mixed"]["model"]["placement"]["layer_kernels"] == {"1_DEPTHWISE_CONV_2D": "ref"}
    cycles = {name: {r["name"]: r["cycles_mean"] for r in run["regions"]} for name, run in runs.items()}
    assert cycles["opt"]["1_DEPTHWISE_CONV_2D"] < cycles["ref"]["1_DEPTHWISE_CONV_2D"] / 2
    assert cycles["mixed"]["1_DEPTHWISE_CONV_2D"] == cycles["ref"]["1_DEPTHWISE_CONV_2D"]
    row = runs["opt"]["model"]["per_layer"][2]
    assert row["weights_bytes"] == 16_016 and row["weights_in"] == "flash" and row["macs"] == 16_000
    assert row["arena_live_bytes"] == 4_004 and row["output"] == [1, 4]


def test_a_layer_kernels_entry_the_model_lacks_is_a_usage_error(tmp_path):
    (tmp_path / "p.toml").write_text('[layer_kernels]\n"7_CONV_2D" = "ref"\n')
    done = run_cli("model", "build", DATA / "micro_speech_quantized.tflite", "--board", "mcu-m", "--out", tmp_path / "o",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 2 and "7_CONV_2D" in done.stderr and "1_DEPTHWISE_CONV_2D" in done.stderr


def test_unknown_board_and_unsupported_models_are_refused(tmp_path):
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "nope", "--out", tmp_path)
    assert done.returncode == 2 and "unknown board" in done.stderr
    (tmp_path / "x.tflite").write_bytes(b"garbage" * 10)
    assert run_cli("model", "build", tmp_path / "x.tflite", "--board", "mcu-d", "--out", tmp_path / "o").returncode == 3


def test_an_interpreter_that_cannot_run_leaves_the_run_unvalidated(tmp_path, monkeypatch):
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import tflm_reference

    def fails(*_args, **_kwargs):
        raise tflm_reference.InterpreterError("the TFLite Micro interpreter failed on this model (exit -6): abort")

    monkeypatch.setattr(tflm_reference, "outputs", fails)
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mcu-m", "--out", tmp_path)
    assert done.returncode == 1 and "NOT validated" in done.stderr and "unchecked run" in done.stderr
    model = json.loads((tmp_path / "run.json").read_text())["model"]
    assert model["validated"] is False and "exit -6" in model["validation_problem"]


def test_the_interpreter_process_failing_is_an_error_not_a_crash(tmp_path):
    """The interpreter runs in a child process: a model it cannot take fails there, not here."""
    from mcusim.tinyml import tflm_reference

    broken = tmp_path / "broken.tflite"
    broken.write_bytes((DATA / "micro_speech_quantized.tflite").read_bytes()[:4000])
    with pytest.raises(tflm_reference.InterpreterError):
        tflm_reference.outputs(broken, [np.zeros((1, 1960), np.int8)], 1)


@pytest.mark.parametrize("head, board, layers", [("average_pool", "mcu-m", 31), ("mean", "mcu-b", 30)])
def test_a_mobilenet_class_graph_runs_validated(tmp_path, head, board, layers):
    """The benchmark's MobileNet v1 (convolutions, depthwise blocks with strides, an average
    pool and reshape or a MEAN, fully connected, softmax) at a 32x32 input, end to end."""
    require_tool("arm-none-eabi-gcc")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from model_to_bundle import mobilenet

    (tmp_path / "m.tflite").write_bytes(mobilenet(size=32, head=head))
    done = run_cli("model", "run", tmp_path / "m.tflite", "--board", board, "--out", tmp_path / "b")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "b" / "run.json").read_text())
    assert run["model"]["validated"] and run["model"]["layers"] == layers
    assert len([r for r in run["regions"] if r["name"] != "inference"]) == layers
    assert (head == "mean") == any(r["name"].endswith("_MEAN") for r in run["regions"])


def test_weights_in_ram_are_linked_there_and_recorded(tmp_path):
    require_tool("arm-none-eabi-gcc")
    from mcusim.elf import ElfImage

    config = tmp_path / "placement.toml"
    config.write_text('weights = "ram"\n')
    done = run_cli("model", "run", DATA / "micro_speech_quantized.tflite", "--board", "mcu-m", "--out", tmp_path / "b",
                   "--config", config)
    assert done.returncode == 0, done.stderr
    model = json.loads((tmp_path / "b" / "run.json").read_text())["model"]
    assert model["weights_in"] == "ram"
    assert model["placement"] == {"weights": "ram", "arena": "ram", "code": "flash", "kernels": "opt",
                                  "layer_kernels": {}}
    assert model["placement_file"] == str(config) and model["validated"]
    image = ElfImage.load(tmp_path / "b" / "build" / "model.elf")
    assert 0x20000000 <= image.symbol("layer2_weights") < 0x20018000  # mcu-m SRAM1


def test_weights_that_do_not_fit_ram_are_refused_with_the_reason(tmp_path):
    require_tool("arm-none-eabi-gcc")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from model_to_bundle import mobilenet

    (tmp_path / "m.tflite").write_bytes(mobilenet())  # 218,928 bytes of weights; mcu-m has 96 KB of SRAM1
    (tmp_path / "p.toml").write_text('weights = "ram"\n')
    done = run_cli("model", "build", tmp_path / "m.tflite", "--board", "mcu-m", "--out", tmp_path / "o",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 3 and "does not fit mcu-m's RAM with weights in ram" in done.stderr


# mcu-d (STM32F746, RM0385 2.2.2): ITCM RAM 0x00000000-0x00003FFF, DTCM 0x20000000-0x2000FFFF,
# SRAM1 and SRAM2 0x20010000-0x2004FFFF.
ITCM, DTCM, SRAM = (0x0, 0x4000), (0x20000000, 0x20010000), (0x20010000, 0x20050000)


@pytest.mark.parametrize("text, arena_in, code_in", [('arena = "dtcm"\n', DTCM, None), ('arena = "sram"\n', SRAM, None),
                                                     ('code = "itcm"\narena = "sram"\n', SRAM, ITCM)])
def test_arena_and_code_placement_on_mcu_d(tmp_path, text, arena_in, code_in):
    """The levers the paper's TCM board offers: the arena in DTCM or SRAM, the layers' and
    kernels' code in ITCM (copied there before the inference); validated either way."""
    require_tool("arm-none-eabi-gcc")
    from mcusim.elf import ElfImage

    (tmp_path / "p.toml").write_text(text)
    done = run_cli("model", "run", DATA / "micro_speech_quantized.tflite", "--board", "mcu-d", "--out", tmp_path / "b",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "b" / "run.json").read_text())
    model = run["model"]
    assert model["validated"] and model["placement"]["arena"] == ("dtcm" if arena_in == DTCM else "sram")
    # the stack runs below an arena at the top of SRAM, the heap after .bss: both peaks are found
    assert run["memory"]["stack_peak_bytes"] > 100 and run["memory"]["heap_peak_bytes"] > 0
    image = ElfImage.load(tmp_path / "b" / "build" / "model.elf")
    arena = image.symbol("tfl_arena")
    assert arena_in[0] <= arena and arena + model["arena_bytes"] <= arena_in[1]
    kernel = image.symbol("tfl_depthwise_opt")
    if code_in:
        assert model["placement"]["code"] == "itcm" and code_in[0] < kernel < code_in[1]
    else:
        assert kernel >= 0x08000000  # flash


@pytest.mark.parametrize("board, text, message", [
    ("mcu-m", 'arena = "dtcm"\n', "mcu-m has no DTCM"), ("mcu-s", 'code = "itcm"\n', "mcu-s has no ITCM"),
    ("mcu-m", 'arena = "sram"\n', "has no DTCM (its arena is in SRAM already)")])
def test_placement_a_board_cannot_give_is_refused(tmp_path, board, text, message):
    (tmp_path / "p.toml").write_text(text)
    done = run_cli("model", "build", DATA / "hello_world_int8.tflite", "--board", board, "--out", tmp_path / "o",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 3 and message in done.stderr, done.stderr


def test_an_arena_larger_than_dtcm_is_refused(tmp_path):
    require_tool("arm-none-eabi-gcc")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from model_to_bundle import mobilenet

    (tmp_path / "m.tflite").write_bytes(mobilenet(size=128))  # an arena of 98,304 bytes; DTCM is 64 KB
    (tmp_path / "p.toml").write_text('arena = "dtcm"\n')
    done = run_cli("model", "build", tmp_path / "m.tflite", "--board", "mcu-d", "--out", tmp_path / "o",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 3 and "does not fit mcu-d's DTCM (65,536 bytes)" in done.stderr, done.stderr


@pytest.mark.parametrize("text, message", [('weights = "sram"\n', "choose one of"),
                                           ('heap = "dtcm"\n', "unknown keys"), ("weights = \n", "not valid TOML")])
def test_bad_placement_files_are_usage_errors(tmp_path, text, message):
    (tmp_path / "p.toml").write_text(text)
    done = run_cli("model", "build", DATA / "hello_world_int8.tflite", "--board", "mcu-m", "--out", tmp_path / "o",
                   "--config", tmp_path / "p.toml")
    assert done.returncode == 2 and message in done.stderr


def test_dump_keeps_every_layer_output_and_equals_the_reference(tmp_path):
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import tflite_reference as R
    from mcusim.tinyml.model_build import default_inputs
    from mcusim.tinyml.tflite_model import load_model

    done = run_cli("model", "run", DATA / "micro_speech_quantized.tflite", "--board", "mcu-d", "--out", tmp_path,
                   "--dump")
    assert done.returncode == 0, done.stderr
    model = load_model(DATA / "micro_speech_quantized.tflite")
    expected = R.run(model, default_inputs(model))
    with np.load(tmp_path / "tensors.npz") as dumped:
        names = {int(key.split(":")[0]): key for key in dumped.files}
        for op in model.operators:  # every layer's output, not only the model's
            assert (dumped[names[op.outputs[0]]] == expected[op.outputs[0]]).all(), op.name
    assert json.loads((tmp_path / "run.json").read_text())["model"]["tensors_dumped"] == "tensors.npz"


def test_a_mismatch_names_the_first_layer_that_differs(tmp_path, monkeypatch):
    """With the interpreter's answer off by one and the reference's second layer changed, the
    rerun that keeps every tensor finds where the firmware and the reference part."""
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import tflite_reference as R
    from mcusim.tinyml import tflm_reference

    honest_outputs, honest_fc = tflm_reference.outputs, R.fully_connected
    monkeypatch.setattr(tflm_reference, "outputs", lambda *a, **k: [_one_off(y) for y in honest_outputs(*a, **k)])
    monkeypatch.setitem(R.KERNELS, "FULLY_CONNECTED",
                        lambda model, op, x: honest_fc(model, op, x) ^ np.int8(1 if op.index == 1 else 0))
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mcu-s", "--out", tmp_path)
    assert done.returncode == 1
    assert "first layer that differs: 1_FULLY_CONNECTED" in done.stderr


def test_interpreter_outputs_of_another_size_are_a_mismatch_not_a_crash(tmp_path, monkeypatch):
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import tflm_reference

    monkeypatch.setattr(tflm_reference, "outputs", lambda *a, **k: [np.zeros((1, 2), np.int8)])
    done = run_cli("model", "run", DATA / "hello_world_int8.tflite", "--board", "mcu-b", "--out", tmp_path)
    assert done.returncode == 1 and "other sizes" in done.stderr
    assert json.loads((tmp_path / "run.json").read_text())["model"]["max_abs_diff"] is None


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(cases.layers(), cases.elementwise(kinds=("AVERAGE_POOL_2D", "ADD", "MEAN", "SOFTMAX"))),
       board=st.sampled_from(board_names()), variant=st.sampled_from(["opt", "ref"]))
def test_random_models_run_validated_on_the_boards(tmp_path_factory, case, board, variant):
    """Random single-layer models, the SIMD kernels' instructions executed by the simulator
    (the host tests run them as plain C): validated against the interpreter on every board."""
    require_tool("arm-none-eabi-gcc")
    from mcusim.tinyml import model_run
    from mcusim.tinyml.placement import Placement
    from mcusim.tinyml.tflite_model import load_model

    data, inputs = case
    work = tmp_path_factory.mktemp("random")
    (work / "m.tflite").write_bytes(data)
    done = model_run.run(load_model(work / "m.tflite"), board, work / "b",
                         [inputs] if isinstance(inputs, np.ndarray) else inputs, Placement(kernels=variant))
    assert done.result.model["validated"], done.result.model
