"""The kit's models (tinyml/models.py, the paper's five applications and their variants) as
TFLite flatbuffers: the layers, weights, biases, per-channel weight scales and activation
quantization of tinyml/build.py, written as the TFLite converter would (`python -m
mcusim.tinyml.kit_export MODEL OUT.tflite`). The kit's firmware is built from this export
(kit_firmware.py), so `mcusim model run` on the file gives the kit example's cycles.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .build import BuiltModel, build
from .models import MODELS
from .tflite_writer import Op, T, model_bytes

SAME, VALID = 0, 1
RELU, NONE = 1, 0


def _shape(shape, units: bool = False) -> tuple[int, ...]:
    """A kit tensor's (H, W, C) as TFLite's NHWC; a fully connected output as (1, units)."""
    return (1, int(shape[-1])) if units else (1,) + tuple(int(d) for d in shape)


def export(built: BuiltModel) -> bytes:
    """The flatbuffer of a built kit model."""
    tensors: list[T] = []
    index: dict[str, int] = {}
    fc_outputs = {q.output for q in built.layers if q.op == "fc"}

    def activation(name: str, like: int | None = None) -> int:
        """The tensor of `name`, made on first use (`like`: with that tensor's shape)."""
        if name not in index:
            t = built.tensors[name]
            shape = tensors[like].shape if like is not None else _shape(t.shape, name in fc_outputs)
            tensors.append(T(name, shape, "int8", None, (float(t.scale),), (int(t.zero_point),)))
            index[name] = len(tensors) - 1
        return index[name]

    def constant(name, data, dtype, scales=(), zero_points=(), dimension=0) -> int:
        tensors.append(T(name, tuple(data.shape), dtype, data, tuple(scales), tuple(zero_points), dimension))
        return len(tensors) - 1

    ops: list[Op] = []
    for q in built.layers:
        layer, out = q.layer, q.output
        source = built.tensors[q.inputs[0]]
        x = activation(q.inputs[0])
        fused = {"FusedActivationFunction": RELU if layer.relu else NONE}
        if q.op in ("conv", "depthwise", "fc"):
            scales = q.weight_scale * np.ones(q.weights.shape[-1 if q.op == "depthwise" else 0])
            if q.op == "depthwise":
                weights = q.weights.reshape((1,) + q.weights.shape)
                w = constant(f"{out}/weights", weights, "int8", scales, (0,) * len(scales), 3)
            else:
                w = constant(f"{out}/weights", q.weights, "int8", scales, (0,) * len(scales), 0)
            b = constant(f"{out}/bias", q.bias.astype(np.int32), "int32", source.scale * scales, (0,) * len(scales))
            y = activation(out)
            if q.op == "fc":
                ops.append(Op("FULLY_CONNECTED", (x, w, b), (y,), "FullyConnectedOptions", fused))
                continue
            geometry = {"Padding": SAME if layer.same else VALID, "StrideH": layer.stride[0],
                        "StrideW": layer.stride[1], **fused}
            if q.op == "conv":
                ops.append(Op("CONV_2D", (x, w, b), (y,), "Conv2DOptions", geometry))
            else:
                ops.append(Op("DEPTHWISE_CONV_2D", (x, w, b), (y,), "DepthwiseConv2DOptions",
                              {**geometry, "DepthMultiplier": 1}))
        elif q.op in ("average_pool", "max_pool"):
            ops.append(Op("AVERAGE_POOL_2D" if q.op == "average_pool" else "MAX_POOL_2D", (x,), (activation(out),),
                          "Pool2DOptions", {"Padding": VALID, "StrideH": layer.stride[0], "StrideW": layer.stride[1],
                                            "FilterHeight": layer.kernel[0], "FilterWidth": layer.kernel[1]}))
        elif q.op == "add":
            ops.append(Op("ADD", (x, activation(q.inputs[1])), (activation(out),), "AddOptions", fused))
        elif q.op == "softmax":
            ops.append(Op("SOFTMAX", (x,), (activation(out, like=x),), "SoftmaxOptions", {"Beta": 1.0}))
        else:
            raise ValueError(f"{built.model.name}: layer {layer.name} ({q.op}) has no TFLite counterpart here")
    return model_bytes(tensors, _with_reshapes(built, ops, tensors, index), [index["input"]],
                       [index[built.output]], description=f"mcusim kit model {built.model.name}")


def _with_reshapes(built: BuiltModel, ops: list[Op], tensors: list[T], index: dict[str, int]) -> list[Op]:
    """The kit's reshapes (tensors that alias another's bytes) as RESHAPE nodes before their first reader."""
    placed = []
    for op in ops:
        for position in op.inputs:
            name = tensors[position].name
            tensor = built.tensors.get(name)
            if tensor is not None and tensor.alias_of is not None and not any(o.outputs == (position,) for o in placed):
                shape = np.array(tensors[position].shape, np.int32)
                tensors.append(T(f"{name}/shape", shape.shape, "int32", shape, (), ()))
                placed.append(Op("RESHAPE", (index[tensor.alias_of], len(tensors) - 1), (position,), "ReshapeOptions",
                                 {"NewShape": tuple(int(d) for d in shape)}))
        placed.append(op)
    return placed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    args.out.write_bytes(export(build(MODELS[args.model])))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
