"""The numpy reference of TFLite's int8 arithmetic (tinyml/tflite_reference.py) against the
TFLite Micro interpreter (its reference kernels), bit for bit: the converter-made models, and
single-layer models written here with random shapes, options and quantization."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcusim.tinyml import tflite_reference as R
from mcusim.tinyml.tflite_model import load_model
from mcusim.tinyml.tflite_writer import Op, T, model_bytes

from tflite_micro.python.tflite_micro import runtime  # noqa: E402  (test extra: tflite-micro)

DATA = Path(__file__).parent.parent / "data" / "tflite"


def interpreter(data: bytes):
    """An interpreter keeping every tensor, with an arena large enough for it (its default, ten
    times the model's size, is too small for a tiny model and the interpreter then crashes)."""
    return runtime.Interpreter.from_bytes(data, arena_size=1 << 20,
                                          intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)


def test_hello_world_matches_for_every_input():
    path = DATA / "hello_world_int8.tflite"
    model, it = load_model(path), interpreter(path.read_bytes())
    for value in range(-128, 128):
        x = np.array([[value]], np.int8)
        it.set_input(x, 0)
        it.invoke()
        assert (R.run(model, [x])[model.outputs[0]] == it.get_output(0)).all(), value


def test_micro_speech_matches_layer_by_layer():
    """Reshape, the depth-multiplier-8 depthwise convolution (SAME, stride 2, per-channel, RELU),
    the fully connected layer and the softmax, on random spectrograms."""
    path = DATA / "micro_speech_quantized.tflite"
    model, it = load_model(path), interpreter(path.read_bytes())
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = rng.integers(-128, 128, (1, 1960)).astype(np.int8)
        it.set_input(x, 0)
        it.invoke()
        ours = R.run(model, [x])
        assert (ours[model.outputs[0]] == it.get_output(0)).all()
        for op in model.operators:
            theirs = it.GetTensor(op.outputs[0], 0)["tensor_data"]
            assert (ours[op.outputs[0]].reshape(-1) == np.asarray(theirs).reshape(-1)).all(), op.name


ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
PADDING = {"SAME": 0, "VALID": 1}


@st.composite
def layers(draw):
    """A one-layer model (CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED) with its input."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"]))
    in_scale = draw(st.floats(0.005, 0.5))
    in_zp = draw(st.integers(-128, 127))
    out_zp = draw(st.integers(-128, 127))
    activation = draw(st.sampled_from(sorted(ACTIVATIONS)))
    if kind == "FULLY_CONNECTED":
        batches, depth, units = draw(st.integers(1, 3)), draw(st.integers(1, 40)), draw(st.integers(1, 16))
        w_scales = (draw(st.floats(0.001, 0.05)),)
        weights = rng.integers(-127, 128, (units, depth))
        in_shape, out_shape, channels = (batches, depth), (batches, units), units
        options = ("FullyConnectedOptions", {"FusedActivationFunction": ACTIVATIONS[activation]})
        w_shape, w_dim = (units, depth), 0
    else:
        h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
        # 1x1 kernels (pointwise convolutions) often: the SIMD convolution reads their taps in place
        kh, kw = (draw(st.sampled_from([k for k in (1, 1, 2, 3, 4) if k <= limit])) for limit in (h + 2, w + 2))
        sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        pad = draw(st.sampled_from(sorted(PADDING)))
        in_c = draw(st.integers(1, 6))
        if pad == "VALID" and ((kh - 1) * dh + 1 > h or (kw - 1) * dw + 1 > w):
            pad = "SAME"
        oh, _ = R.padding(h, kh, sh, dh, pad)
        ow, _ = R.padding(w, kw, sw, dw, pad)
        if kind == "CONV_2D":
            channels = draw(st.integers(1, 8))
            w_shape = (channels, kh, kw, in_c)
            w_dim = 0
            options = ("Conv2DOptions", {"Padding": PADDING[pad], "StrideH": sh, "StrideW": sw,
                                         "DilationHFactor": dh, "DilationWFactor": dw,
                                         "FusedActivationFunction": ACTIVATIONS[activation]})
        else:
            multiplier = draw(st.sampled_from([1, 2, 3, 4, 8]))  # the SIMD depthwise has three lane layouts
            channels = in_c * multiplier
            w_shape = (1, kh, kw, channels)
            w_dim = 3
            options = ("DepthwiseConv2DOptions", {"Padding": PADDING[pad], "StrideH": sh, "StrideW": sw,
                                                  "DilationHFactor": dh, "DilationWFactor": dw,
                                                  "DepthMultiplier": multiplier,
                                                  "FusedActivationFunction": ACTIVATIONS[activation]})
        w_scales = tuple(draw(st.lists(st.floats(0.001, 0.05), min_size=channels, max_size=channels)))
        weights = rng.integers(-127, 128, w_shape)
        in_shape, out_shape = (1, h, w, in_c), (1, oh, ow, channels)
    taps = int(np.prod(w_shape)) // channels
    out_scale = in_scale * max(w_scales) * draw(st.floats(2.0, 60.0)) * np.sqrt(taps)
    bias = rng.integers(-2000, 2000, channels).astype(np.int32)
    tensors = [T("input", in_shape, "int8", None, (in_scale,), (in_zp,)),
               T("weights", w_shape, "int8", weights.astype(np.int8), w_scales, (0,) * len(w_scales), w_dim),
               T("bias", (channels,), "int32", bias, tuple(in_scale * s for s in w_scales), (0,) * len(w_scales)),
               T("output", out_shape, "int8", None, (out_scale,), (out_zp,))]
    data = model_bytes(tensors, [Op(kind, (0, 1, 2), (3,), *options)], [0], [3])
    x = rng.integers(-128, 128, in_shape).astype(np.int8)
    return data, x


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers())
def test_single_layers_match_the_interpreter(tmp_path_factory, case):
    data, x = case
    path = tmp_path_factory.mktemp("m") / "layer.tflite"
    path.write_bytes(data)
    model, it = load_model(path), interpreter(data)
    it.set_input(x, 0)
    it.invoke()
    theirs = it.get_output(0)
    ours = R.run(model, [x])[model.outputs[0]]
    assert ours.shape == theirs.shape
    assert (ours == theirs).all(), f"{model.operators[0].name} {model.operators[0].options}"


def _scale(draw):
    return draw(st.floats(0.01, 0.2))


OTHER_KINDS = ("AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "MUL", "RELU", "RELU6", "QUANTIZE", "QUANTIZE_FLOAT",
               "DEQUANTIZE", "PAD", "CONCATENATION", "SOFTMAX", "LOGISTIC", "TANH", "MEAN")


@st.composite
def elementwise(draw, kinds=OTHER_KINDS):
    """A one-node model of the other operators, with random shapes and quantization."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(kinds))
    shape = (1, draw(st.integers(1, 7)), draw(st.integers(1, 7)), draw(st.integers(1, 5)))
    zp_in, zp_out = draw(st.integers(-128, 127)), draw(st.integers(-128, 127))
    s_in, s_out = _scale(draw), _scale(draw)
    activation = draw(st.sampled_from(sorted(ACTIVATIONS)))
    x = rng.integers(-128, 128, shape).astype(np.int8)
    source = T("input", shape, "int8", None, (s_in,), (zp_in,))
    op_name, options = kind, ("", {})
    if kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        fh, fw = draw(st.integers(1, shape[1])), draw(st.integers(1, shape[2]))
        sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        pad = draw(st.sampled_from(sorted(PADDING)))
        oh, _ = R.padding(shape[1], fh, sh, 1, pad)
        ow, _ = R.padding(shape[2], fw, sw, 1, pad)
        tensors = [T("input", shape, "int8", None, (s_in,), (zp_in,)),
                   T("out", (1, oh, ow, shape[3]), "int8", None, (s_in,), (zp_in,))]
        options = ("Pool2DOptions", {"Padding": PADDING[pad], "StrideH": sh, "StrideW": sw, "FilterHeight": fh,
                                     "FilterWidth": fw, "FusedActivationFunction": ACTIVATIONS[activation]})
        ops, inputs = [Op(kind, (0,), (1,), *options)], [x]
    elif kind in ("ADD", "MUL"):
        other_shape = tuple(d if draw(st.booleans()) else 1 for d in shape)  # broadcast along some axes
        y = rng.integers(-128, 128, other_shape).astype(np.int8)
        tensors = [source, T("other", other_shape, "int8", None, (_scale(draw),), (draw(st.integers(-128, 127)),)),
                   T("out", shape, "int8", None, (s_out * (4 if kind == "MUL" else 1),), (zp_out,))]
        options = ("AddOptions" if kind == "ADD" else "MulOptions", {"FusedActivationFunction": ACTIVATIONS[activation]})
        ops, inputs = [Op(kind, (0, 1), (2,), *options)], [x, y]
    elif kind in ("RELU", "RELU6", "QUANTIZE"):
        same = kind == "RELU6"
        tensors = [source, T("out", shape, "int8", None, (s_in if same else s_out,), (zp_in if same else zp_out,))]
        ops, inputs = [Op(kind, (0,), (1,))], [x]
    elif kind in ("SOFTMAX", "LOGISTIC", "TANH"):  # fixed output quantization, as the converter writes it
        out = (1 / 128, 0) if kind == "TANH" else (1 / 256, -128)
        tensors = [T("input", shape, "int8", None, (draw(st.floats(0.001, 0.5)),), (zp_in,)),
                   T("out", shape, "int8", None, (out[0],), (out[1],))]
        options = ("SoftmaxOptions", {"Beta": draw(st.sampled_from([1.0, 0.5, 2.0, 0.3]))}) if kind == "SOFTMAX" \
            else ("", {})
        ops, inputs = [Op(kind, (0,), (1,), *options)], [x]
    elif kind == "QUANTIZE_FLOAT":
        values = (rng.standard_normal(shape) * draw(st.floats(0.1, 20.0))).astype(np.float32)
        tensors = [T("input", shape, "float32", None, (), ()), T("out", shape, "int8", None, (s_out,), (zp_out,))]
        ops, inputs = [Op("QUANTIZE", (0,), (1,))], [values]
    elif kind == "DEQUANTIZE":
        tensors = [source, T("out", shape, "float32", None, (), ())]
        ops, inputs = [Op(kind, (0,), (1,))], [x]
    elif kind == "PAD":
        paddings = np.array([[0, 0]] + [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in range(3)], np.int32)
        out_shape = tuple(int(d + a + b) for d, (a, b) in zip(shape, paddings))
        tensors = [source, T("paddings", (4, 2), "int32", paddings, (), ()),
                   T("out", out_shape, "int8", None, (s_in,), (zp_in,))]
        ops, inputs = [Op(kind, (0, 1), (2,))], [x]
    elif kind == "MEAN":  # global average pooling as the converter writes it, or other axes
        axes = draw(st.sampled_from([(1, 2), (2, 1), (1,), (2,), (3,), (1, 2, 3), (-3, -2)]))
        keep = draw(st.booleans())
        reduced = {a % 4 for a in axes}
        out_shape = tuple(1 if i in reduced else d for i, d in enumerate(shape) if keep or i not in reduced)
        same = draw(st.booleans())  # the same quantization in and out takes another path
        tensors = [source, T("axes", (len(axes),), "int32", np.array(axes, np.int32), (), ()),
                   T("out", out_shape, "int8", None, (s_in if same else s_out,), (zp_in if same else zp_out,))]
        ops, inputs = [Op(kind, (0, 1), (2,), "ReducerOptions", {"KeepDims": keep})], [x]
    else:  # CONCATENATION
        axis = draw(st.integers(1, 3))
        parts = [shape] + [tuple(draw(st.integers(1, 4)) if i == axis else d for i, d in enumerate(shape))
                           for _ in range(draw(st.integers(1, 2)))]
        out_shape = tuple(sum(p[axis] for p in parts) if i == axis else d for i, d in enumerate(shape))
        tensors = [T(f"in{i}", p, "int8", None, (s_in,), (zp_in,)) for i, p in enumerate(parts)]
        tensors.append(T("out", out_shape, "int8", None, (s_in,), (zp_in,)))
        inputs = [x] + [rng.integers(-128, 128, p).astype(np.int8) for p in parts[1:]]
        ops = [Op(kind, tuple(range(len(parts))), (len(parts),), "ConcatenationOptions",
                  {"Axis": axis if draw(st.booleans()) else axis - 4})]
    graph_inputs = [i for i, t in enumerate(tensors) if t.data is None and t.name != "out"]
    return model_bytes(tensors, ops, graph_inputs, [len(tensors) - 1]), inputs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elementwise())
def test_other_operators_match_the_interpreter(tmp_path_factory, case):
    data, inputs = case
    path = tmp_path_factory.mktemp("m") / "op.tflite"
    path.write_bytes(data)
    model, it = load_model(path), interpreter(data)
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    theirs = it.get_output(0)
    ours = R.run(model, inputs)[model.outputs[0]]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert (ours == theirs).all(), f"{model.operators[0].name} {model.operators[0].options}"


@pytest.mark.parametrize("kind", ["FULLY_CONNECTED", "CONV_2D"])
def test_multiplier_from_scales_whose_float32_product_rounds_to_a_tie(tmp_path, kind):
    """Input scale x weight scale / output scale is 0.25 when the product is rounded to float32
    and just below it in double: on these scales (found by the random test) the interpreter
    agrees with the double computation for every input, fully connected and convolution alike."""
    s_in, w_s, s_out = (np.float32(float.fromhex(h)) for h in ("0x1.05eaecp-2", "0x1.4p-6", "0x1.4765a8p-6"))
    assert R.quantize_multiplier(float(np.float32(s_in * w_s)) / float(s_out)) == (1 << 30, -1)  # 0.25
    assert R.quantize_multiplier(float(s_in) * float(w_s) / float(s_out)) == (2147483548, -2)  # just below
    weights = np.ones((1, 1) if kind == "FULLY_CONNECTED" else (1, 1, 1, 1), np.int8)
    shape = (256, 1) if kind == "FULLY_CONNECTED" else (1, 16, 16, 1)
    options = ("FullyConnectedOptions", {}) if kind == "FULLY_CONNECTED" else \
        ("Conv2DOptions", {"Padding": 1, "StrideH": 1, "StrideW": 1})
    data = model_bytes([T("in", shape, "int8", None, (float(s_in),), (2,)),
                        T("w", weights.shape, "int8", weights, (float(w_s),), (0,)),
                        T("b", (1,), "int32", np.zeros(1, np.int32), (float(s_in * w_s),), (0,)),
                        T("out", shape, "int8", None, (float(s_out),), (0,))],
                       [Op(kind, (0, 1, 2), (3,), *options)], [0], [3])
    (tmp_path / "m.tflite").write_bytes(data)
    model, it = load_model(tmp_path / "m.tflite"), interpreter(data)
    x = np.arange(-128, 128, dtype=np.int8).reshape(shape)
    it.set_input(x, 0)
    it.invoke()
    assert (R.run(model, [x])[3] == it.get_output(0)).all()
