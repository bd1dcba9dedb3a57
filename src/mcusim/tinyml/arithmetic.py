"""The int8 arithmetic build.py quantizes the kit's models with, in numpy: each layer's outputs
on the model's test input, from which the next layer's output scale is calibrated.

Quantization (the TensorFlow Lite int8 scheme): activations int8 with a scale and a zero
point per tensor; weights int8, symmetric, one scale per output channel; bias int32 at
scale input_scale * weight_scale. A layer accumulates bias + sum((x - zero_point) * w) in
int32 and requantizes: out = clamp(zp_out + requantize(acc, multiplier, shift)), where
requantize(acc, m, s) = round(acc * m / 2**(31 - s)), rounding half up, in 64 bits. This is
close to TFLite's arithmetic (two roundings: tflite_reference.py) but not the same; it only
chooses scales. The firmware runs the exported model with TFLite's (kit_firmware.py).
"""
from __future__ import annotations

import math

import numpy as np

INT8_MIN, INT8_MAX = -128, 127


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(multiplier, shift) with real = multiplier / 2**31 * 2**shift, multiplier in [2**30, 2**31)."""
    if real <= 0:
        return 0, 0
    mantissa, exponent = math.frexp(real)  # real = mantissa * 2**exponent, mantissa in [0.5, 1)
    multiplier = round(mantissa * (1 << 31))
    if multiplier == 1 << 31:
        multiplier //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    return multiplier, exponent


def requantize(acc, multiplier, shift):
    """round(acc * multiplier / 2**(31 - shift)), half up, saturated to int32 (shift in [-31, 30])."""
    acc = np.asarray(acc, np.int64)
    multiplier = np.asarray(multiplier, np.int64)
    total = 31 - np.asarray(shift, np.int64)
    product = acc * multiplier
    return np.clip((product + (np.int64(1) << (total - 1))) >> total, -(1 << 31), (1 << 31) - 1)


def clamp8(values, low=INT8_MIN, high=INT8_MAX):
    return np.clip(values, low, high).astype(np.int8)


def output_size(size: int, kernel: int, stride: int, same: bool) -> tuple[int, int]:
    """(output size, padding before) for SAME (TensorFlow's: output ceil(size / stride), the odd
    padding cell after) or VALID padding."""
    if not same:
        return (size - kernel) // stride + 1, 0
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + kernel - size)
    return out, total // 2


def _padded(x, zp_in, kernel, stride, out_shape, padding):
    """x - zp_in with zeros around it: `padding` (top, left) before, what the output needs after."""
    h, w, _ = x.shape
    (kh, kw), (sh, sw), (oh, ow), (ph, pw) = kernel, stride, out_shape, padding
    bottom = max(0, (oh - 1) * sh + kh - h - ph)
    right = max(0, (ow - 1) * sw + kw - w - pw)
    return np.pad(x.astype(np.int64) - zp_in, ((ph, bottom), (pw, right), (0, 0)))


def conv2d(x, w, bias, multiplier, shift, zp_in, zp_out, stride=(1, 1), padding=(0, 0), out_shape=None,
           act=(INT8_MIN, INT8_MAX)):
    """x: HxWxC int8; w: OxKhxKwxC int8; bias: O int32; per-channel multiplier/shift: O.
    `padding` is (top, left); padded cells hold the input zero point (they contribute nothing)."""
    h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    sh, sw = stride
    if out_shape is None:
        out_shape = ((h + 2 * padding[0] - kh) // sh + 1, (wd + 2 * padding[1] - kw) // sw + 1)
    oh, ow = out_shape
    xs = _padded(x, zp_in, (kh, kw), stride, out_shape, padding)
    patches = np.empty((oh, ow, kh * kw * c), np.int64)
    for i in range(oh):
        for j in range(ow):
            patches[i, j] = xs[i * sh: i * sh + kh, j * sw: j * sw + kw, :].reshape(-1)
    acc = patches @ w.reshape(o, -1).astype(np.int64).T + bias.astype(np.int64)
    return clamp8(zp_out + requantize(acc, multiplier, shift), *act)


def depthwise_conv2d(x, w, bias, multiplier, shift, zp_in, zp_out, stride=(1, 1), padding=(0, 0),
                     out_shape=None, act=(INT8_MIN, INT8_MAX)):
    """x: HxWxC; w: KhxKwxC (depth multiplier 1); bias, multiplier, shift: C."""
    h, wd, c = x.shape
    kh, kw, _ = w.shape
    sh, sw = stride
    if out_shape is None:
        out_shape = ((h + 2 * padding[0] - kh) // sh + 1, (wd + 2 * padding[1] - kw) // sw + 1)
    oh, ow = out_shape
    xs = _padded(x, zp_in, (kh, kw), stride, out_shape, padding)
    acc = np.zeros((oh, ow, c), np.int64) + bias.astype(np.int64)
    for a in range(kh):
        for b in range(kw):
            acc += xs[a: a + sh * (oh - 1) + 1: sh, b: b + sw * (ow - 1) + 1: sw, :] * w[a, b].astype(np.int64)
    return clamp8(zp_out + requantize(acc, multiplier, shift), *act)


def fully_connected(x, w, bias, multiplier, shift, zp_in, zp_out, act=(INT8_MIN, INT8_MAX)):
    """x: N int8; w: OxN int8; per-channel requantization."""
    acc = w.astype(np.int64) @ (x.reshape(-1).astype(np.int64) - zp_in) + bias.astype(np.int64)
    return clamp8(zp_out + requantize(acc, multiplier, shift), *act)


def _round_divide(total, count):
    """C's (total + sign * count / 2) / count, truncating toward zero."""
    total = np.asarray(total, np.int64)
    return np.sign(total) * ((np.abs(total) + count // 2) // count)


def average_pool(x, size, stride, act=(INT8_MIN, INT8_MAX)):
    """Same scale and zero point in and out; no padding."""
    h, w, c = x.shape
    kh, kw = size
    sh, sw = stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    total = np.zeros((oh, ow, c), np.int64)
    for a in range(kh):
        for b in range(kw):
            total += x[a: a + sh * (oh - 1) + 1: sh, b: b + sw * (ow - 1) + 1: sw, :].astype(np.int64)
    return clamp8(_round_divide(total, kh * kw), *act)


def max_pool(x, size, stride, act=(INT8_MIN, INT8_MAX)):
    h, w, c = x.shape
    kh, kw = size
    sh, sw = stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    best = np.full((oh, ow, c), INT8_MIN, np.int64)
    for a in range(kh):
        for b in range(kw):
            best = np.maximum(best, x[a: a + sh * (oh - 1) + 1: sh, b: b + sw * (ow - 1) + 1: sw, :])
    return clamp8(best, *act)


ADD_LEFT_SHIFT = 20  # inputs are scaled up before their own requantization, to keep precision


def add(a, b, params, act=(INT8_MIN, INT8_MAX)):
    """Element-wise a + b in the output's scale. params: zp_a, zp_b, zp_out and the
    (multiplier, shift) pairs m_a, m_b (input to a common scale) and m_out (common to output)."""
    xa = requantize((a.astype(np.int64) - params["zp_a"]) << ADD_LEFT_SHIFT, *params["m_a"])
    xb = requantize((b.astype(np.int64) - params["zp_b"]) << ADD_LEFT_SHIFT, *params["m_b"])
    return clamp8(params["zp_out"] + requantize(xa + xb, *params["m_out"]), *act)


def add_parameters(scale_a, zp_a, scale_b, zp_b, scale_out, zp_out) -> dict:
    """Multipliers for `add`: both inputs to twice the larger input scale, then to the output."""
    common = 2 * max(scale_a, scale_b)
    return {"zp_a": zp_a, "zp_b": zp_b, "zp_out": zp_out,
            "m_a": quantize_multiplier(scale_a / common), "m_b": quantize_multiplier(scale_b / common),
            "m_out": quantize_multiplier(common / ((1 << ADD_LEFT_SHIFT) * scale_out))}


SOFTMAX_ONE = 1 << 16  # exp(0) in the lookup table


def softmax_table(scale_in: float) -> np.ndarray:
    """exp(-d * scale_in) * 2**16 for d = 0..255: the table of `softmax`."""
    return np.round(np.exp(-np.arange(256) * scale_in) * SOFTMAX_ONE).astype(np.int64)


def softmax(x, table):
    """int8 in (its scale baked into `table`) -> int8 out at scale 1/256, zero point -128."""
    x = x.reshape(-1).astype(np.int64)
    e = table[x.max() - x]
    total = e.sum()
    return clamp8(((e << 8) + total // 2) // total - 128)

