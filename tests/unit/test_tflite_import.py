"""`mcusim model show` and the TFLite import under it: converter-made models read as written,
the arena plan never overlaps live tensors, and files mcusim cannot build are refused by name."""
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clirun import run_cli
from mcusim.tinyml.model_plan import ARENA_ALIGNMENT, plan_arena
from mcusim.tinyml.tflite_model import ModelError, Operator, Tensor, TfliteModel, load_model
from mcusim.tinyml.tflite_writer import Op, T, model_bytes

DATA = Path(__file__).parent.parent / "data" / "tflite"
MICRO_SPEECH = DATA / "micro_speech_quantized.tflite"
HELLO_WORLD = DATA / "hello_world_int8.tflite"


def test_micro_speech_reads_as_the_converter_wrote_it():
    model = load_model(MICRO_SPEECH)
    assert [op.name for op in model.operators] == ["RESHAPE", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"]
    conv = model.operators[1]
    assert conv.options["padding"] == "SAME" and conv.options["stride_h"] == conv.options["stride_w"] == 2
    assert conv.options["depth_multiplier"] == 8 and conv.options["activation"] == "RELU"
    weights = model.tensors[conv.inputs[1]]
    assert weights.shape == (1, 10, 8, 8) and weights.dtype == "int8" and len(weights.scales) == 8
    assert weights.quantized_dimension == 3  # per output channel
    bias = model.tensors[conv.inputs[2]]
    assert bias.dtype == "int32" and bias.data.shape == (8,)
    assert model.tensors[model.inputs[0]].shape == (1, 1960)
    assert model.operators[0].options["new_shape"] == (-1, 49, 40, 1)


def test_show_counts_the_macs_the_paper_gives_for_micro_speech():
    """Zhang et al., "Power-Performance Characterization of TinyML Systems" (ICCD 2022), Table
    III: micro_speech has 336,000 MACs (320,000 in the convolution, 16,000 in the classifier)."""
    result = run_cli("model", "show", str(MICRO_SPEECH), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert summary["macs"] == 336_000
    assert [layer["macs"] for layer in summary["layers"]] == [0, 320_000, 16_000, 0]
    assert summary["weights_bytes"] == 16 + 640 + 32 + 16_000 + 16  # shape, weights, bias, weights, bias
    assert [layer["name"] for layer in summary["layers"]][1] == "1_DEPTHWISE_CONV_2D"


def test_show_prints_layers_and_totals():
    result = run_cli("model", "show", str(HELLO_WORLD))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("_FULLY_CONNECTED") == 3
    assert "288 MACs" in result.stdout and "activation arena 32 bytes" in result.stdout


def _check_plan(model: TfliteModel):
    plan = plan_arena(model)
    placed = list(plan.offsets)
    for t in placed:
        assert plan.offsets[t] % ARENA_ALIGNMENT == 0
        assert plan.offsets[t] + model.tensors[t].bytes <= plan.size
    for i, a in enumerate(placed):
        for b in placed[i + 1:]:
            (fa, la), (fb, lb) = plan.lifetimes[a], plan.lifetimes[b]
            if fa <= lb and fb <= la:  # both live at once: disjoint bytes
                ea = plan.offsets[a] + model.tensors[a].bytes
                eb = plan.offsets[b] + model.tensors[b].bytes
                assert ea <= plan.offsets[b] or eb <= plan.offsets[a], (a, b)
    peak = max((plan.live_bytes(model, n) for n in range(len(model.operators))), default=0)
    assert plan.size >= peak
    return plan


def test_arena_plans_of_the_real_models_keep_live_tensors_apart():
    for path in (MICRO_SPEECH, HELLO_WORLD):
        _check_plan(load_model(path))


def _chain_model(sizes, skips):
    """A chain of nodes whose activations have `sizes` bytes; skips[i] also feeds node i's output
    to a node further on (longer lifetimes)."""
    tensors = [Tensor(i, f"t{i}", (size,), "int8", np.zeros(0), np.zeros(0), 0, None) for i, size in enumerate(sizes)]
    operators = []
    for i in range(1, len(sizes)):
        inputs = [i - 1] + [j for j, reach in enumerate(skips[:i - 1]) if j + reach == i]
        operators.append(Operator(i - 1, "ADD", tuple(inputs), (i,)))
    return TfliteModel("chain", "", "", tensors, operators, (0,), (len(sizes) - 1,))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=2, max_size=12).flatmap(
    lambda sizes: st.tuples(st.just(sizes), st.lists(st.integers(1, 6), min_size=len(sizes), max_size=len(sizes)))))
def test_arena_plan_never_overlaps_tensors_live_at_once(case):
    sizes, skips = case
    _check_plan(_chain_model(sizes, skips))


def _conv_model(path, op="CONV_2D", dtype="int8", filter_channels=3):
    rng = np.random.default_rng(0)
    shape = (4, 3, 3, filter_channels)
    tensors = [T("input", (1, 8, 8, 3), dtype), T("weights", shape, "int8", rng.integers(-5, 5, shape)),
               T("bias", (4,), "int32", np.zeros(4, np.int32)), T("conv", (1, 8, 8, 4), dtype),
               T("out", (1, 8, 8, 4), dtype)]
    ops = [Op("CONV_2D", (0, 1, 2), (3,), "Conv2DOptions", {"Padding": 0, "StrideW": 1, "StrideH": 1}),
           Op(op, (3,), (4,))]
    path.write_bytes(model_bytes(tensors, ops, [0], [4]))
    return path


def test_a_written_model_reads_back(tmp_path):
    model = load_model(_conv_model(tmp_path / "m.tflite", op="RELU"))
    assert [op.name for op in model.operators] == ["CONV_2D", "RELU"]
    assert model.operators[0].options["padding"] == "SAME"
    result = run_cli("model", "show", str(tmp_path / "m.tflite"), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["macs"] == 8 * 8 * 4 * 3 * 3 * 3


def test_unsupported_operators_are_named_node_by_node(tmp_path):
    result = run_cli("model", "show", str(_conv_model(tmp_path / "m.tflite", op="SQUARED_DIFFERENCE")))
    assert result.returncode == 3
    assert "node 1: SQUARED_DIFFERENCE is not supported" in result.stderr
    assert "(not supported)" in result.stdout  # the table still shows what the model holds


def test_a_grouped_convolution_is_refused(tmp_path):
    """(A filter with fewer channels than the input: TFLite's grouped convolution, which the kernels
    would compute as an ordinary one.)"""
    result = run_cli("model", "show", str(_conv_model(tmp_path / "m.tflite", op="RELU", filter_channels=1)))
    assert result.returncode == 3
    assert "node 0: CONV_2D with 1 filter channels for 3 input channels" in result.stderr


def test_a_float_model_is_refused(tmp_path):
    result = run_cli("model", "show", str(_conv_model(tmp_path / "m.tflite", op="RELU", dtype="float32")))
    assert result.returncode == 3
    assert "node 0: CONV_2D has float32 tensor" in result.stderr and "only int8" in result.stderr


@pytest.mark.parametrize("content", [b"", b"\x7fELF" + bytes(60), b"not a model at all, just text\n" * 4])
def test_files_that_are_not_models_exit_3(tmp_path, content):
    path = tmp_path / "x.tflite"
    path.write_bytes(content)
    result = run_cli("model", "show", str(path))
    assert result.returncode == 3 and "not a TFLite model" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_missing_file_exits_3(tmp_path):
    result = run_cli("model", "show", str(tmp_path / "none.tflite"))
    assert result.returncode == 3 and "cannot read" in result.stderr


def test_corrupted_models_are_refused_cleanly():
    """Every byte flip of a real model either still reads or is refused as corrupt: never a crash."""
    original = bytearray(MICRO_SPEECH.read_bytes())
    rng = np.random.default_rng(7)
    for _ in range(300):
        data = bytearray(original)
        for position in rng.integers(8, min(len(data), 2048), 4):  # the tables, not the weight bytes
            data[position] ^= int(rng.integers(1, 256))
        try:
            model = _load_bytes(bytes(data))
        except ModelError:
            continue
        assert isinstance(model, TfliteModel)


def _load_bytes(data: bytes):
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".tflite") as f:
        f.write(data)
        f.flush()
        return load_model(f.name)
