"""Turn a kit model description into quantized layers (kit_export.py writes them as .tflite).

Weights are drawn from a seeded generator (He-normal, then per-channel symmetric int8); each
layer's output scale is calibrated on the model's fixed test input (its largest magnitude
maps to the int8 range; ReLU outputs use the whole range from zero), from the layer outputs
arithmetic.py computes. The firmware runs the exported model with TFLite's arithmetic, whose
outputs can differ from these by a rounding step (kit_firmware.py embeds the reference's).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import arithmetic as A
from .models import Layer, Model

INPUT_SCALE = 1 / 64


@dataclass
class Tensor:
    name: str
    shape: tuple[int, int, int]     # H, W, C
    scale: float
    zero_point: int
    data: np.ndarray                # int8, from arithmetic.py on the test input (calibration)
    alias_of: str | None = None     # a reshape shares its input's bytes

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass
class QuantLayer:
    layer: Layer
    op: str
    inputs: list[str]
    output: str
    weights: np.ndarray | None = None
    weight_scale: np.ndarray | None = None  # per output channel (kit_export.py writes them)
    bias: np.ndarray | None = None
    multiplier: np.ndarray | None = None
    shift: np.ndarray | None = None
    table: np.ndarray | None = None
    padding: tuple[int, int] = (0, 0)
    act: tuple[int, int] = (A.INT8_MIN, A.INT8_MAX)
    macs: int = 0
    bytes: int = 0


@dataclass
class BuiltModel:
    model: Model
    tensors: dict[str, Tensor]
    layers: list[QuantLayer]
    output: str

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)


def _weights(rng, shape, fan_in):
    real = rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape)
    axes = tuple(range(1, len(shape)))
    per_channel = np.abs(real).max(axis=axes) if axes else np.abs(real)
    scale = np.maximum(per_channel, 1e-8) / 127.0
    q = np.clip(np.round(real / scale.reshape((-1,) + (1,) * len(axes))), -127, 127).astype(np.int8)
    return q, scale


def _output_quantization(real_acc: np.ndarray, relu: bool, asymmetric: bool = False
                         ) -> tuple[float, int, tuple[int, int]]:
    """Scale, zero point and clamp range that cover this layer's outputs on the test input."""
    if asymmetric and not relu:  # the whole int8 range over min..max
        low, high = min(float(real_acc.min()), 0.0), max(float(real_acc.max()), 1e-6)
        scale = (high - low) / 255.0
        return scale, int(np.clip(round(-128 - low / scale), -128, 127)), (-128, 127)
    if relu:
        top = max(float(real_acc.max()), 1e-6)
        return top / 255.0, -128, (-128, 127)
    top = max(float(np.abs(real_acc).max()), 1e-6)
    return top / 127.0, 0, (-127, 127)


def _requantization(input_scale, weight_scale, output_scale):
    pairs = [A.quantize_multiplier(float(input_scale * s / output_scale)) for s in np.atleast_1d(weight_scale)]
    return np.array([m for m, _ in pairs], np.int64), np.array([s for _, s in pairs], np.int64)


def build(model: Model) -> BuiltModel:
    rng = np.random.default_rng(model.seed)
    test_input = rng.integers(-128, 128, size=model.input_shape).astype(np.int8)
    input_zero_point = 37 if model.asymmetric else 0
    tensors = {"input": Tensor("input", model.input_shape, INPUT_SCALE, input_zero_point, test_input)}
    layers: list[QuantLayer] = []
    for layer in model.layers:
        source = tensors[layer.inputs[0]]
        x = source.data
        h, w, c = source.shape
        q = QuantLayer(layer, layer.op, list(layer.inputs), layer.output)
        if layer.op in ("conv", "depthwise"):
            kh, kw = layer.kernel
            sh, sw = layer.stride
            oh, top = A.output_size(h, kh, sh, layer.same)
            ow, left = A.output_size(w, kw, sw, layer.same)
            q.padding = (top, left)
            out_c = layer.out_channels if layer.op == "conv" else c
            if layer.op == "conv":
                q.weights, w_scale = _weights(rng, (out_c, kh, kw, c), kh * kw * c)
                q.macs = oh * ow * out_c * kh * kw * c
            else:
                real, w_scale = _weights(rng, (c, kh, kw), kh * kw)
                q.weights = np.ascontiguousarray(np.transpose(real, (1, 2, 0)))
                q.macs = oh * ow * c * kh * kw
            q.weight_scale = w_scale
            q.bias = np.round(rng.normal(0, 0.1, out_c) / (source.scale * w_scale)).astype(np.int64)
            kernel = A.conv2d if layer.op == "conv" else A.depthwise_conv2d
            # the accumulators before requantization, to calibrate the output scale
            raw = _conv_accumulators(kernel, x, q, source, (oh, ow))
            scale, zp, act = _output_quantization(raw * source.scale * w_scale, layer.relu, model.asymmetric)
            q.multiplier, q.shift = _requantization(source.scale, w_scale, scale)
            q.act = (zp, 127) if layer.relu else act
            data = kernel(x, q.weights, q.bias, q.multiplier, q.shift, source.zero_point, zp, layer.stride,
                          q.padding, (oh, ow), q.act)
            shape = (oh, ow, out_c)
        elif layer.op == "fc":
            n = h * w * c
            q.weights, w_scale = _weights(rng, (layer.out_channels, n), n)
            q.weight_scale = w_scale
            q.bias = np.round(rng.normal(0, 0.1, layer.out_channels) / (source.scale * w_scale)).astype(np.int64)
            raw = q.weights.astype(np.int64) @ (x.reshape(-1).astype(np.int64) - source.zero_point) + q.bias
            scale, zp, act = _output_quantization(raw * source.scale * w_scale, layer.relu, model.asymmetric)
            q.multiplier, q.shift = _requantization(source.scale, w_scale, scale)
            q.act = (zp, 127) if layer.relu else act
            data = A.fully_connected(x, q.weights, q.bias, q.multiplier, q.shift, source.zero_point, zp, q.act)
            shape = (1, 1, layer.out_channels)
            q.macs = n * layer.out_channels
        elif layer.op in ("average_pool", "max_pool"):
            kernel = A.average_pool if layer.op == "average_pool" else A.max_pool
            data = kernel(x, layer.kernel, layer.stride)
            shape, scale, zp = data.shape, source.scale, source.zero_point
        elif layer.op == "add":
            other = tensors[layer.inputs[1]]
            real = (x.astype(np.float64) - source.zero_point) * source.scale + \
                   (other.data.astype(np.float64) - other.zero_point) * other.scale
            scale, zp, act = _output_quantization(real, layer.relu, model.asymmetric)
            q.act = (zp, 127) if layer.relu else act
            params = A.add_parameters(source.scale, source.zero_point, other.scale, other.zero_point, scale, zp)
            q.multiplier = np.array([params["m_a"][0], params["m_b"][0], params["m_out"][0]], np.int64)
            q.shift = np.array([params["m_a"][1], params["m_b"][1], params["m_out"][1]], np.int64)
            data = A.add(x, other.data, params, q.act)
            shape = data.shape
        elif layer.op == "softmax":
            q.table = A.softmax_table(source.scale)
            data = A.softmax(x, q.table).reshape(source.shape)
            shape, scale, zp = source.shape, 1 / 256, -128
        elif layer.op == "reshape":
            tensors[layer.output] = Tensor(layer.output, tuple(layer.shape), source.scale, source.zero_point,
                                           x.reshape(layer.shape), alias_of=source.name)
            continue
        else:
            raise ValueError(f"{model.name}: unknown op {layer.op}")
        tensors[layer.output] = Tensor(layer.output, tuple(int(d) for d in shape), scale, zp,
                                       np.asarray(data, np.int8).reshape(shape))
        q.bytes = (x.size + tensors[layer.output].size + (q.weights.size if q.weights is not None else 0)
                   + 4 * (q.bias.size if q.bias is not None else 0))
        layers.append(q)
    return BuiltModel(model, tensors, layers, model.layers[-1].output)


def _conv_accumulators(kernel, x, q, source, out_shape):
    """Accumulators from the same patch arithmetic as arithmetic.py, without requantization."""
    oh, ow = out_shape
    kh, kw = q.layer.kernel
    sh, sw = q.layer.stride
    xs = A._padded(x, source.zero_point, (kh, kw), (sh, sw), out_shape, q.padding)
    if kernel is A.conv2d:
        patches = np.stack([xs[i * sh: i * sh + kh, j * sw: j * sw + kw, :].reshape(-1)
                            for i in range(oh) for j in range(ow)])
        return patches @ q.weights.reshape(q.weights.shape[0], -1).astype(np.int64).T + q.bias
    acc = np.zeros((oh, ow, xs.shape[2]), np.int64) + q.bias
    for a in range(kh):
        for b in range(kw):
            acc += xs[a: a + sh * (oh - 1) + 1: sh, b: b + sw * (ow - 1) + 1: sw, :] * q.weights[a, b].astype(np.int64)
    return acc

