"""From a .tflite file to a validated bundle: how long `mcusim model run` takes on a MobileNet-class
model (issue 16's goal: under a minute, build included).

    python benchmarks/model_to_bundle.py [--board mcu-d] [--variant opt|ref] [--keep DIR]

Writes a MobileNet v1 (width 0.25) of the person-detection shape: a 96x96x1 int8 input, a 3x3
stride-2 convolution to 8 channels, 13 depthwise-separable blocks (3x3 depthwise, 1x1
pointwise; 16 to 256 channels, ReLU6), a 3x3 average pool, a fully connected layer to 2 classes
and a softmax. Weights are seeded random with per-channel scales (the benchmark measures time,
not accuracy). Then times `mcusim model run` on it as a user would (a fresh process: generate,
compile, simulate, validate against the TFLite Micro interpreter) and prints the seconds, the
inference's cycles and whether it validated.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mcusim.tinyml.tflite_writer import Op, T, model_bytes

RELU6 = 3
SAME, VALID = 0, 1
BLOCKS = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1), (128, 1), (128, 1), (128, 1),
          (256, 2), (256, 1)]  # (pointwise output channels, depthwise stride)


def mobilenet(seed: int = 1, size: int = 96, head: str = "average_pool") -> bytes:
    """The model's flatbuffer; `size` is the input's height and width (tests use a smaller one).
    `head` "mean" pools with MEAN over height and width, as the converter writes Keras's
    GlobalAveragePooling2D, instead of AVERAGE_POOL_2D and RESHAPE."""
    rng = np.random.default_rng(seed)
    tensors: list[T] = []
    ops: list[Op] = []

    def add(tensor: T) -> int:
        tensors.append(tensor)
        return len(tensors) - 1

    def activation(shape, scale):
        return add(T(f"act{len(tensors)}", shape, "int8", None, (scale,), (-128,)))

    x = activation((1, size, size, 1), 0.02)
    shape, scale = (1, size, size, 1), 0.02

    def layer(kind, out_channels, kernel, stride):
        nonlocal x, shape, scale
        _, h, w, c = shape
        oh, ow = -(-h // stride), -(-w // stride)
        depthwise = kind == "DEPTHWISE_CONV_2D"
        channels = c if depthwise else out_channels
        w_shape = (1, kernel, kernel, channels) if depthwise else (channels, kernel, kernel, c)
        w_scales = tuple(float(s) for s in rng.uniform(0.002, 0.02, channels))
        weights = add(T(f"w{len(tensors)}", w_shape, "int8", rng.integers(-127, 128, w_shape).astype(np.int8),
                        w_scales, (0,) * channels, 3 if depthwise else 0))
        bias = add(T(f"b{len(tensors)}", (channels,), "int32", rng.integers(-500, 500, channels).astype(np.int32),
                     tuple(scale * s for s in w_scales), (0,) * channels))
        taps = kernel * kernel * (1 if depthwise else c)
        out_scale = scale * max(w_scales) * 12 * np.sqrt(taps)
        out = activation((1, oh, ow, channels), out_scale)
        options = {"Padding": SAME, "StrideH": stride, "StrideW": stride, "FusedActivationFunction": RELU6}
        if depthwise:
            options["DepthMultiplier"] = 1
        ops.append(Op(kind, (x, weights, bias), (out,), "DepthwiseConv2DOptions" if depthwise else "Conv2DOptions",
                      options))
        x, shape, scale = out, (1, oh, ow, channels), out_scale

    layer("CONV_2D", 8, 3, 2)
    for channels, stride in BLOCKS:
        layer("DEPTHWISE_CONV_2D", 0, 3, stride)
        layer("CONV_2D", channels, 1, 1)
    if head == "mean":
        flat = activation((1, shape[3]), scale * 0.9)
        axes = add(T("axes", (2,), "int32", np.array([1, 2], np.int32), (), ()))
        ops.append(Op("MEAN", (x, axes), (flat,), "ReducerOptions", {"KeepDims": False}))
    else:
        pooled = activation((1, 1, 1, shape[3]), scale)
        ops.append(Op("AVERAGE_POOL_2D", (x,), (pooled,), "Pool2DOptions",
                      {"Padding": VALID, "StrideH": 1, "StrideW": 1, "FilterHeight": shape[1],
                       "FilterWidth": shape[2]}))
        flat = activation((1, shape[3]), scale)
        new_shape = add(T("shape", (2,), "int32", np.array([1, shape[3]], np.int32), (), ()))
        ops.append(Op("RESHAPE", (pooled, new_shape), (flat,), "ReshapeOptions", {"NewShape": (1, shape[3])}))
    w_scale = 0.01
    fc_w = add(T("fc_w", (2, shape[3]), "int8", rng.integers(-127, 128, (2, shape[3])).astype(np.int8), (w_scale,), (0,)))
    fc_b = add(T("fc_b", (2,), "int32", np.zeros(2, np.int32), (scale * w_scale,), (0,)))
    logits = activation((1, 2), scale * w_scale * 8 * np.sqrt(shape[3]))
    ops.append(Op("FULLY_CONNECTED", (flat, fc_w, fc_b), (logits,), "FullyConnectedOptions", {}))
    probabilities = add(T("probabilities", (1, 2), "int8", None, (1 / 256,), (-128,)))
    ops.append(Op("SOFTMAX", (logits,), (probabilities,), "SoftmaxOptions", {"Beta": 1.0}))
    return model_bytes(tensors, ops, [0], [probabilities], description="mobilenet_v1_0.25_96 (random weights)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="mcu-d")
    parser.add_argument("--variant", choices=["opt", "ref"], default="opt", help="the kernels (default: opt, SIMD)")
    parser.add_argument("--keep", type=Path, help="write the model and the bundle here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcusim-bench-") as temporary:
        work = args.keep or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        model = work / "mobilenet_v1_025_96.tflite"
        model.write_bytes(mobilenet())
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "mcusim.cli", "model", "run", str(model), "--board", args.board,
                               "--variant", args.variant, "--out", str(work / "bundle")], capture_output=True, text=True)
        seconds = time.perf_counter() - started
        print(done.stderr.strip())
        if done.returncode not in (0, 1):
            sys.exit(f"mcusim model run failed (exit {done.returncode})")
        run = json.loads((work / "bundle" / "run.json").read_text())
        inference = next(r for r in run["regions"] if r["name"] == "inference")
        print(f"\n{model.name} ({run['model']['layers']} layers, {run['model']['macs']:,} MACs, weights "
              f"{run['model']['weights_bytes']:,} bytes, arena {run['model']['arena_bytes']:,} bytes) on {args.board}, {args.variant} kernels: "
              f".tflite to bundle in {seconds:.1f} s (goal: under 60 s); inference {inference['cycles_mean']:,.0f} "
              f"cycles; validated: {run['model']['validated']}")


if __name__ == "__main__":
    main()
