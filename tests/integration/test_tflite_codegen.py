"""Generated C (tinyml/tflite_codegen.py onto firmware/tinyml/tfl_ops.c and the SIMD kernels of
tfl_ops_opt.c, their instructions in plain C off the Arm target), compiled for the host: bit for
bit what the TFLite Micro interpreter computes on the converter-made models, and what the numpy
reference computes on random single-node models of every operator, in both kernel variants."""
import functools
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import require_tool
from mcusim.tinyml import tflite_reference as R
from mcusim.tinyml.tflite_codegen import generate
from mcusim.tinyml.tflite_model import load_model
from mcusim.tinyml.tflite_writer import Op, T, model_bytes

from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import test_tflite_reference as cases  # noqa: E402  (its model strategies)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


FLAGS = ["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-unused-const-variable",
         f"-I{ROOT / 'firmware' / 'tinyml'}"]


@functools.lru_cache(maxsize=None)
def kernel_objects(gcc: str) -> tuple[str, ...]:
    """The kernels and the host driver compiled once for the session (each example then
    compiles only its generated model.c: most of a compile's time was the kernels)."""
    out = Path(tempfile.mkdtemp(prefix="tfl-kernels-"))
    objects = []
    for source in (ROOT / "firmware" / "tinyml" / "tfl_ops.c", ROOT / "firmware" / "tinyml" / "tfl_ops_opt.c",
                   DATA / "c" / "tfl_host_main.c"):
        obj = out / f"{source.stem}.o"
        done = subprocess.run([gcc, *FLAGS, "-c", str(source), "-o", str(obj)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-4000:]
        objects.append(str(obj))
    return tuple(objects)


def run_generated(model, inputs, work: Path, variant: str = "ref") -> bytes:
    """Compile the model's C with the kernels and a host driver; the outputs' bytes."""
    gcc = require_tool("gcc")
    (work / "model.c").write_text(generate(model, variants={op.index: variant for op in model.operators}))
    exe = work / "model"
    done = subprocess.run([gcc, *FLAGS, str(work / "model.c"), *kernel_objects(gcc), "-o", str(exe)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    files = []
    for i, x in enumerate(inputs):
        path = work / f"input{i}.bin"
        path.write_bytes(np.ascontiguousarray(x).tobytes())
        files.append(str(path))
    ran = subprocess.run([str(exe), *files], capture_output=True)
    assert ran.returncode == 0, ran.returncode
    return ran.stdout


@pytest.mark.parametrize("variant", ["ref", "opt"])
def test_converter_made_models_match_the_interpreter(tmp_path, variant):
    rng = np.random.default_rng(3)
    for name in ("hello_world_int8", "micro_speech_quantized"):
        path = DATA / "tflite" / f"{name}.tflite"
        model = load_model(path)
        interpreter = runtime.Interpreter.from_bytes(path.read_bytes(), arena_size=1 << 20)
        for _ in range(4):
            x = rng.integers(-128, 128, model.tensors[model.inputs[0]].shape).astype(np.int8)
            interpreter.set_input(x, 0)
            interpreter.invoke()
            ours = np.frombuffer(run_generated(model, [x], tmp_path, variant), np.int8)
            assert (ours == interpreter.get_output(0).reshape(-1)).all(), name


def _check(case, tmp_path_factory, variant="ref"):
    data, inputs = case
    inputs = [inputs] if isinstance(inputs, np.ndarray) else inputs
    work = tmp_path_factory.mktemp("gen")
    (work / "m.tflite").write_bytes(data)
    model = load_model(work / "m.tflite")
    want = R.run(model, inputs)[model.outputs[0]]
    got = np.frombuffer(run_generated(model, inputs, work, variant), want.dtype).reshape(want.shape)
    assert (got == want).all(), f"{model.operators[0].name} {model.operators[0].options}"


@pytest.mark.parametrize("variant", ["ref", "opt"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases.layers())
def test_generated_layers_match_the_reference(tmp_path_factory, variant, case):
    """Convolutions, depthwise convolutions (any depth multiplier) and fully connected layers of
    random shapes, strides, dilations, padding, zero points and scales, in both kernel sets."""
    _check(case, tmp_path_factory, variant)


def _convolution(rng, h, w, c, out_c, kh, kw, stride, dilation, padding, batch=1, dilation_w=None):
    """A one-layer CONV_2D model (wide output scale, no activation: every tap shows) and its input."""
    dilation_w = dilation if dilation_w is None else dilation_w
    scales = tuple(rng.uniform(0.002, 0.02, out_c))
    tensors = [T("input", (batch, h, w, c), "int8", None, (0.05,), (int(rng.integers(-100, 100)),)),
               T("weights", (out_c, kh, kw, c), "int8", rng.integers(-127, 128, (out_c, kh, kw, c)).astype(np.int8),
                 scales, (0,) * out_c, 0),
               T("bias", (out_c,), "int32", rng.integers(-500, 500, out_c).astype(np.int32),
                 tuple(0.05 * s for s in scales), (0,) * out_c)]
    oh, _ = R.padding(h, kh, stride, dilation, padding)
    ow, _ = R.padding(w, kw, stride, dilation_w, padding)
    tensors.append(T("output", (batch, oh, ow, out_c), "int8", None, (0.05 * max(scales) * 8 * np.sqrt(kh * kw * c),),
                     (3,)))
    options = {"Padding": cases.PADDING[padding], "StrideH": stride, "StrideW": stride, "DilationHFactor": dilation,
               "DilationWFactor": dilation_w, "FusedActivationFunction": 0}
    data = model_bytes(tensors, [Op("CONV_2D", (0, 1, 2), (3,), "Conv2DOptions", options)], [0], [3])
    return data, rng.integers(-128, 128, (batch, h, w, c)).astype(np.int8)


# (h, w, c, out_c, kh, kw, stride, dilation, padding[, batch, dilation across]): kernels wider
# than, as wide as and narrower than the input, taps cut on the left, the right or both, an odd
# last pixel and an odd last channel
CONVOLUTIONS = [(5, 6, 1, 3, 3, 3, 1, 1, "SAME"), (5, 6, 1, 2, 10, 8, 1, 1, "SAME"), (4, 7, 3, 3, 2, 4, 2, 1, "SAME"),
                (3, 3, 4, 5, 3, 5, 1, 1, "SAME"), (6, 5, 2, 4, 1, 3, 1, 1, "VALID"), (2, 9, 1, 1, 4, 7, 3, 1, "SAME"),
                (5, 5, 3, 2, 3, 3, 2, 2, "SAME"), (7, 4, 4, 3, 1, 1, 1, 1, "VALID"), (7, 4, 5, 3, 1, 1, 2, 1, "SAME"),
                (1, 8, 2, 2, 1, 5, 1, 1, "SAME"), (6, 6, 1, 4, 5, 5, 1, 1, "SAME"), (3, 4, 6, 1, 3, 4, 1, 2, "SAME"),
                # a pixel pair across two batch items (3x3 outputs each), dilations that differ
                (3, 3, 2, 3, 3, 3, 1, 1, "SAME", 2), (3, 5, 3, 2, 1, 1, 1, 1, "VALID", 3),
                (6, 7, 2, 2, 2, 3, 1, 2, "SAME", 1, 1), (6, 7, 2, 3, 3, 2, 1, 1, "SAME", 2, 2)]


@pytest.mark.parametrize("shape", CONVOLUTIONS)
def test_the_simd_convolution_at_every_kind_of_edge(tmp_path_factory, shape):
    """Deterministic shapes for what random ones reach seldom: a kernel row's taps copied as one
    run with some cut off on the left, the right or both, and two pixels at a time with an odd one
    and an odd channel left over."""
    _check(_convolution(np.random.default_rng(sum(shape[:8])), *shape), tmp_path_factory, "opt")
    _check(_convolution(np.random.default_rng(sum(shape[:8])), *shape), tmp_path_factory, "ref")


@pytest.mark.parametrize("kind", cases.OTHER_KINDS)
def test_generated_operators_match_the_reference(tmp_path_factory, kind):
    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(cases.elementwise(kinds=(kind,)))
    def check(case):
        _check(case, tmp_path_factory)

    check()


def test_fixed_point_activations_match_for_every_input_value(tmp_path):
    """Softmax, logistic and tanh over all 256 int8 values, at several input scales: the
    fixed-point paths whose rounding ties are common."""
    from mcusim.tinyml.tflite_writer import Op, T, model_bytes

    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    for kind, out in (("SOFTMAX", (1 / 256, -128)), ("LOGISTIC", (1 / 256, -128)), ("TANH", (1 / 128, 0))):
        for scale, zero_point in ((0.003, 5), (0.02, -20), (0.1, 0), (0.25, 100)):
            options = ("SoftmaxOptions", {"Beta": 1.0}) if kind == "SOFTMAX" else ("", {})
            data = model_bytes([T("in", (1, 256), "int8", None, (scale,), (zero_point,)),
                                T("out", (1, 256), "int8", None, (out[0],), (out[1],))],
                               [Op(kind, (0,), (1,), *options)], [0], [1])
            (tmp_path / "m.tflite").write_bytes(data)
            model = load_model(tmp_path / "m.tflite")
            want = R.run(model, [x])[model.outputs[0]].reshape(-1)
            got = np.frombuffer(run_generated(model, [x], tmp_path), np.int8)
            assert (got == want).all(), (kind, scale, zero_point)
