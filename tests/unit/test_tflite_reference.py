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
from tflitegen import Op, T, model_bytes

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


def test_micro_speech_layers_match_up_to_the_classifier():
    """Reshape, the depth-multiplier-8 depthwise convolution (SAME, stride 2, per-channel, RELU)
    and the fully connected layer, on random spectrograms (softmax is not in the reference yet)."""
    path = DATA / "micro_speech_quantized.tflite"
    model, it = load_model(path), interpreter(path.read_bytes())
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = rng.integers(-128, 128, (1, 1960)).astype(np.int8)
        it.set_input(x, 0)
        it.invoke()
        ours = R.run(model, [x], nodes=3)
        for op in model.operators[:3]:
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
        kh, kw = draw(st.integers(1, min(4, h + 2))), draw(st.integers(1, min(4, w + 2)))
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
            multiplier = draw(st.integers(1, 3))
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
