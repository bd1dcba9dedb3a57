"""TensorFlow Lite's int8 integer arithmetic in numpy, bit for bit: the oracle generated firmware
is checked against layer by layer (the TFLite Micro interpreter checks this module end to end).

The fixed-point rules are those of TFLite's quantization specification and its reference
integer kernels: a real multiplier M is stored as a 32-bit fraction q in [2^30, 2^31) and a
power-of-two exponent (QuantizeMultiplier); acc * M is computed as a saturating rounding
doubling high multiply of acc (shifted left by a positive exponent) and q, then a rounding
right shift by a negative exponent (MultiplyByQuantizedMultiplier)."""
from __future__ import annotations

import math

import numpy as np

from .tflite_model import Operator, TfliteModel

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


class NotImplementedInReference(NotImplementedError):
    """An operator or option the reference does not compute yet."""


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(q, exponent) with real ~= q / 2^31 * 2^exponent, q in [2^30, 2^31); (0, 0) for 0 or a
    value below 2^-32, exponent capped at 30."""
    if real == 0.0:
        return 0, 0
    mantissa, exponent = math.frexp(real)
    q = int(math.copysign(math.floor(abs(mantissa) * (1 << 31) + 0.5), mantissa))  # round half away from 0
    if q == 1 << 31:
        q //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    if exponent > 30:
        return (1 << 31) - 1, 30
    return q, exponent


def saturating_rounding_doubling_high_mul(a, b):
    """The high 32 bits of 2*a*b, rounded to nearest (ties away from zero); INT32_MAX for
    INT32_MIN * INT32_MIN."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    product = a * b
    nudge = np.where(product >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    total = product + nudge
    high = np.where(total >= 0, total // (1 << 31), -((-total) // (1 << 31)))  # C division: toward zero
    return np.where((a == INT32_MIN) & (b == INT32_MIN), np.int64(INT32_MAX), high)


def rounding_divide_by_pot(x, exponent):
    """x / 2^exponent rounded to nearest, ties away from zero."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, q, exponent):
    exponent = np.asarray(exponent, np.int64)
    left = np.maximum(exponent, 0)
    right = np.maximum(-exponent, 0)
    shifted = np.asarray(x, np.int64) * (np.int64(1) << left)
    shifted = ((shifted - INT32_MIN) % (1 << 32)) + INT32_MIN  # int32 wrap, as the C multiply
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, q), right)


def quantize_value(value: float, scale: float, zero_point: int) -> int:
    """zero_point + round(value / scale), in float as TFLite computes it (ties away from zero)."""
    ratio = float(np.float32(value) / np.float32(scale))
    return zero_point + int(math.copysign(math.floor(abs(ratio) + 0.5), ratio))


def activation_range(activation: str | None, scale: float, zero_point: int) -> tuple[int, int]:
    """The int8 output range a fused activation leaves."""
    if activation in (None, "NONE"):
        return INT8_MIN, INT8_MAX
    if activation == "RELU":
        return max(INT8_MIN, quantize_value(0.0, scale, zero_point)), INT8_MAX
    if activation == "RELU6":
        return (max(INT8_MIN, quantize_value(0.0, scale, zero_point)),
                min(INT8_MAX, quantize_value(6.0, scale, zero_point)))
    if activation == "RELU_N1_TO_1":
        return (max(INT8_MIN, quantize_value(-1.0, scale, zero_point)),
                min(INT8_MAX, quantize_value(1.0, scale, zero_point)))
    raise NotImplementedInReference(f"fused activation {activation}")


def padding(size: int, kernel: int, stride: int, dilation: int, kind: str) -> tuple[int, int]:
    """(output size, padding before) of one spatial dimension (TFLite's SAME puts the odd cell after)."""
    effective = (kernel - 1) * dilation + 1
    if kind == "SAME":
        out = (size + stride - 1) // stride
        return out, max(0, (out - 1) * stride + effective - size) // 2
    return (size + stride - effective) // stride, 0


def channel_multipliers(model: TfliteModel, op: Operator, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel (q, exponent) of input scale x weight scale / output scale, computed in
    double from the float32 scales (one weight scale: the same for every channel). Scales where
    rounding the product in float32 instead gives other outputs: test_tflite_reference.py."""
    source, weights, output = (model.tensors[op.inputs[0]], model.tensors[op.inputs[1]],
                               model.tensors[op.outputs[0]])
    pairs = []
    for c in range(channels):
        weight_scale = float(weights.scales[c if len(weights.scales) > 1 else 0])
        pairs.append(quantize_multiplier(float(source.scales[0]) * weight_scale / float(output.scales[0])))
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def _finish(acc, q, exponent, output, activation):
    low, high = activation_range(activation, float(output.scales[0]), int(output.zero_points[0]))
    result = multiply_by_quantized_multiplier(acc, q, exponent) + int(output.zero_points[0])
    return np.clip(result, low, high).astype(np.int8)


def _bias(model, op, channels):
    bias = model.tensor(op.inputs[2]) if len(op.inputs) > 2 else None
    return np.zeros(channels, np.int64) if bias is None else bias.data.astype(np.int64).reshape(channels)


def fully_connected(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    weights = model.tensors[op.inputs[1]]
    out_features, depth = weights.shape
    rows = x.reshape(-1, depth).astype(np.int64) - int(model.tensors[op.inputs[0]].zero_points[0])
    acc = rows @ weights.data.astype(np.int64).T + _bias(model, op, out_features)
    q, exponent = channel_multipliers(model, op, out_features)
    output = model.tensors[op.outputs[0]]
    return _finish(acc, q, exponent, output, op.options.get("activation")).reshape(output.shape)


def _windows(model, op, x, kernel_h, kernel_w):
    """(input with zero-point padding applied as 'skip', output h, w, padding top, left)."""
    _, height, width, _ = x.shape
    sh, sw = op.options.get("stride_h", 1), op.options.get("stride_w", 1)
    dh, dw = op.options.get("dilation_h", 1), op.options.get("dilation_w", 1)
    oh, top = padding(height, kernel_h, sh, dh, op.options.get("padding", "VALID"))
    ow, left = padding(width, kernel_w, sw, dw, op.options.get("padding", "VALID"))
    return (sh, sw, dh, dw), (oh, ow), (top, left)


def _taps(x, zero_point, ky, kx, strides, out, pads):
    """The input pixels tap (ky, kx) reads for every output pixel, minus the zero point; taps
    outside the input read 0 (they add nothing, as the kernels skip them)."""
    (sh, sw, dh, dw), (oh, ow), (top, left) = strides, out, pads
    batches, height, width, channels = x.shape
    ys = np.arange(oh) * sh - top + ky * dh
    xs = np.arange(ow) * sw - left + kx * dw
    inside = ((ys >= 0) & (ys < height))[:, None] & ((xs >= 0) & (xs < width))[None, :]
    values = x[:, np.clip(ys, 0, height - 1)][:, :, np.clip(xs, 0, width - 1)].astype(np.int64) - zero_point
    return values * inside[None, :, :, None]


def conv_2d(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    weights = model.tensors[op.inputs[1]]
    out_c, kh, kw, in_c = weights.shape
    if x.shape[3] != in_c:
        raise NotImplementedInReference("grouped convolution")
    strides, out, pads = _windows(model, op, x, kh, kw)
    zero_point = int(model.tensors[op.inputs[0]].zero_points[0])
    acc = np.zeros((x.shape[0], out[0], out[1], out_c), np.int64)
    w = weights.data.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            acc += _taps(x, zero_point, ky, kx, strides, out, pads) @ w[:, ky, kx, :].T
    acc += _bias(model, op, out_c)
    q, exponent = channel_multipliers(model, op, out_c)
    return _finish(acc, q, exponent, model.tensors[op.outputs[0]], op.options.get("activation"))


def depthwise_conv_2d(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    weights = model.tensors[op.inputs[1]]
    _, kh, kw, out_c = weights.shape
    multiplier = out_c // x.shape[3]  # from the shapes, as the interpreter takes it
    strides, out, pads = _windows(model, op, x, kh, kw)
    zero_point = int(model.tensors[op.inputs[0]].zero_points[0])
    acc = np.zeros((x.shape[0], out[0], out[1], out_c), np.int64)
    w = weights.data.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            taps = _taps(x, zero_point, ky, kx, strides, out, pads)  # ..., in channels
            acc += np.repeat(taps, multiplier, axis=3) * w[0, ky, kx, :]  # output channel ic * m + j
    acc += _bias(model, op, out_c)
    q, exponent = channel_multipliers(model, op, out_c)
    return _finish(acc, q, exponent, model.tensors[op.outputs[0]], op.options.get("activation"))


def reshape(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    return x.reshape(model.tensors[op.outputs[0]].shape)


def tensor_params(model, index) -> tuple[float, int]:
    """(scale, zero point) of a per-tensor quantized tensor."""
    tensor = model.tensors[index]
    return float(tensor.scales[0]), int(tensor.zero_points[0])


def _saturate8(values):
    return np.clip(values, INT8_MIN, INT8_MAX).astype(np.int8)


def _pool(model: TfliteModel, op: Operator, x: np.ndarray, average: bool) -> np.ndarray:
    """Pooling over the window's cells inside the input (padding cells are not counted); the
    average rounds half away from zero (C's truncating division after adding half the count)."""
    kh, kw = op.options["filter_h"], op.options["filter_w"]
    strides, (oh, ow), (top, left) = _windows(model, op, x, kh, kw)
    sh, sw = strides[0], strides[1]
    batches, height, width, channels = x.shape
    total = np.zeros((batches, oh, ow, channels), np.int64)
    best = np.full((batches, oh, ow, channels), INT8_MIN, np.int64)
    count = np.zeros((oh, ow), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            ys = np.arange(oh) * sh - top + ky
            xs = np.arange(ow) * sw - left + kx
            inside = ((ys >= 0) & (ys < height))[:, None] & ((xs >= 0) & (xs < width))[None, :]
            values = x[:, np.clip(ys, 0, height - 1)][:, :, np.clip(xs, 0, width - 1)].astype(np.int64)
            total += values * inside[None, :, :, None]
            best = np.where(inside[None, :, :, None], np.maximum(best, values), best)
            count += inside
    scale, zero_point = tensor_params(model, op.outputs[0])
    low, high = activation_range(op.options.get("activation"), scale, zero_point)
    if not average:
        return np.clip(best, low, high).astype(np.int8)
    count = np.maximum(count, 1)[None, :, :, None]
    half = count // 2
    rounded = np.where(total > 0, (total + half) // count, -((-total + half) // count))
    return np.clip(rounded, low, high).astype(np.int8)


def average_pool_2d(model, op, x):
    return _pool(model, op, x, average=True)


def max_pool_2d(model, op, x):
    return _pool(model, op, x, average=False)


def add(model: TfliteModel, op: Operator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Both inputs brought to twice the larger input scale with 20 bits of headroom, added,
    then scaled to the output (TFLite's int8 ADD)."""
    (s1, z1), (s2, z2), (so, zo) = (tensor_params(model, i) for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    left_shift = 20
    twice_max = 2 * float(max(np.float32(s1), np.float32(s2)))
    q1, e1 = quantize_multiplier(s1 / twice_max)
    q2, e2 = quantize_multiplier(s2 / twice_max)
    qo, eo = quantize_multiplier(twice_max / ((1 << left_shift) * so))
    a = multiply_by_quantized_multiplier((x.astype(np.int64) - z1) * (1 << left_shift), q1, e1)
    b = multiply_by_quantized_multiplier((y.astype(np.int64) - z2) * (1 << left_shift), q2, e2)
    low, high = activation_range(op.options.get("activation"), so, zo)
    return np.clip(multiply_by_quantized_multiplier(a + b, qo, eo) + zo, low, high).astype(np.int8)


def mul(model: TfliteModel, op: Operator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    (s1, z1), (s2, z2), (so, zo) = (tensor_params(model, i) for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    q, e = quantize_multiplier(s1 * s2 / so)
    product = (x.astype(np.int64) - z1) * (y.astype(np.int64) - z2)
    low, high = activation_range(op.options.get("activation"), so, zo)
    return np.clip(multiply_by_quantized_multiplier(product, q, e) + zo, low, high).astype(np.int8)


def relu(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """Rescaled from the input's scale to the output's, then clamped at the output's zero."""
    (si, zi), (so, zo) = tensor_params(model, op.inputs[0]), tensor_params(model, op.outputs[0])
    q, e = quantize_multiplier(si / so)
    low = max(INT8_MIN, zo)
    return np.clip(multiply_by_quantized_multiplier(x.astype(np.int64) - zi, q, e) + zo, low, INT8_MAX).astype(np.int8)


def relu6(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """Clamped between the input's quantized 0 and 6 (no rescaling: the output shares its scale)."""
    si, zi = tensor_params(model, op.inputs[0])
    six = int(np.clip(quantize_value(6.0, si, zi), INT8_MIN, INT8_MAX))
    return np.clip(x.astype(np.int64), zi, six).astype(np.int8)


def quantize(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    so, zo = tensor_params(model, op.outputs[0])
    if model.tensors[op.inputs[0]].dtype == "float32":
        ratio = (x.astype(np.float32) / np.float32(so)).astype(np.float64)
        return _saturate8(np.sign(ratio) * np.floor(np.abs(ratio) + 0.5) + zo)
    si, zi = tensor_params(model, op.inputs[0])
    q, e = quantize_multiplier(si / so)
    return _saturate8(multiply_by_quantized_multiplier(x.astype(np.int64) - zi, q, e) + zo)


def dequantize(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    si, zi = tensor_params(model, op.inputs[0])
    return (float(np.float32(si)) * (x.astype(np.int64) - zi)).astype(np.float32)


def pad(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """Padded with the output's zero point (real 0)."""
    paddings = model.tensors[op.inputs[1]].data.reshape(-1, 2)
    return np.pad(x, [(int(a), int(b)) for a, b in paddings], constant_values=tensor_params(model, op.outputs[0])[1])


def concatenation(model: TfliteModel, op: Operator, *inputs: np.ndarray) -> np.ndarray:
    """The int8 inputs side by side (they share the output's scale and zero point)."""
    return np.concatenate(inputs, axis=op.options.get("axis", 0))


def mean_axes(model: TfliteModel, op: Operator) -> tuple[int, ...]:
    """MEAN's reduced axes, each in 0..rank-1 and once."""
    rank = len(model.tensors[op.inputs[0]].shape)
    return tuple(sorted({int(a) % rank for a in np.asarray(model.tensors[op.inputs[1]].data).reshape(-1)}))


def mean_multiplier(model: TfliteModel, op: Operator, count: int) -> tuple[int, int]:
    """MEAN's multiplier: s_in / s_out as TFLite quantizes it, with 1/count folded in: the
    fraction shifted left by floor(log2(count)) (at most 32, and keeping the exponent >= -31),
    divided by count (truncating), the exponent lowered by the same shift."""
    (si, _), (so, _) = tensor_params(model, op.inputs[0]), tensor_params(model, op.outputs[0])
    q, exponent = quantize_multiplier(si / so)
    shift = min(count.bit_length() - 1, 32, 31 + exponent)
    return int((q << shift) // count), exponent - shift


def mean(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """TFLite Micro's int8 MEAN: the int32 sum over the axes less count x z_in, times the
    multiplier above, plus z_out, saturated."""
    axes = mean_axes(model, op)
    total = x.astype(np.int64).sum(axis=axes)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    zi, zo = tensor_params(model, op.inputs[0])[1], tensor_params(model, op.outputs[0])[1]
    q, exponent = mean_multiplier(model, op, count)
    out = multiply_by_quantized_multiplier(total - zi * count, q, exponent) + zo
    return _saturate8(out).reshape(model.tensors[op.outputs[0]].shape)


def wrap32(x):
    """x wrapped into int32, as C's int32 arithmetic wraps (an int64 array)."""
    return ((np.asarray(x, np.int64) - INT32_MIN) % (1 << 32)) + INT32_MIN


def _shift_left_saturating(x, exponent: int):
    return np.clip(np.asarray(x, np.int64) << exponent, INT32_MIN, INT32_MAX)


# gemmlowp's fixed-point constants (its fixedpoint.h, which TFLite's softmax uses): exp(-1/8),
# 1/3, and exp(-2^k) for the barrel shifter, all as Q0.31; 48/17 and -32/17 as Q2.29.
EXP_MINUS_ONE_EIGHTH = 1895147668
ONE_THIRD = 715827883
EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
              (4, 242))
FORTY_EIGHT_OVER_SEVENTEEN, MINUS_THIRTY_TWO_OVER_SEVENTEEN = 1515870810, -1010580540


def _exp_on_negative_values(a, integer_bits: int = 5):
    """exp(a) for a <= 0 in Q(integer_bits).(31 - integer_bits), as Q0.31 (gemmlowp)."""
    fractional = 31 - integer_bits
    quarter = 1 << (fractional - 2)
    mask = quarter - 1
    a = np.asarray(a, np.int64)
    reduced = wrap32((a & mask) - quarter)                      # a mod 1/4, minus 1/4: in [-1/4, 0)
    x = wrap32(_shift_left_saturating(reduced, integer_bits) + (1 << 28))  # as Q0.31, plus 1/8
    srdhm = saturating_rounding_doubling_high_mul
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(wrap32(srdhm(wrap32(x4_over_4 + x3), ONE_THIRD) + x2), 1)
    result = wrap32(EXP_MINUS_ONE_EIGHTH + srdhm(EXP_MINUS_ONE_EIGHTH, wrap32(x + poly)))
    remainder = wrap32(reduced - a)
    for exponent, multiplier in EXP_BARREL:
        if integer_bits > exponent:
            bit = np.int64(1) << (fractional + exponent)
            result = np.where(remainder & bit, srdhm(result, multiplier), result)
    return np.where(a == 0, np.int64(INT32_MAX), result)


def _one_over_one_plus_x(a):
    """1 / (1 + a) for a in [0, 1) as Q0.31 (gemmlowp)."""
    return _shift_left_saturating(_newton_reciprocal_of_half_sum(a), 1)  # x / 2 as Q1.30 (the same bits), as Q0.31


def _newton_reciprocal_of_half_sum(a):
    """x ~= 2 / (1 + a) for a in [0, 1] (Q0.31 in), as Q2.29: three Newton-Raphson steps from
    48/17 - 32/17 * d, with d = (1 + a) / 2 (gemmlowp)."""
    srdhm = saturating_rounding_doubling_high_mul
    total = np.asarray(a, np.int64) + INT32_MAX
    half_denominator = np.where(total >= 0, (total + 1) // 2, -((-total + 1) // 2))  # (sum + sign) / 2, C division
    x = wrap32(FORTY_EIGHT_OVER_SEVENTEEN + srdhm(half_denominator, MINUS_THIRTY_TWO_OVER_SEVENTEEN))
    one_q2 = 1 << 29
    for _ in range(3):
        product = srdhm(half_denominator, x)
        x = wrap32(x + _shift_left_saturating(srdhm(x, wrap32(one_q2 - product)), 2))
    return x


def q4_input_params(scale: float) -> tuple[int, int, int]:
    """(multiplier, left shift, radius) taking an int8 input at `scale` to Q4.27, and the input
    beyond which the result saturates (TFLite's int8 LOGISTIC and TANH: the multiplier straight
    from frexp, no renormalising)."""
    mantissa, left_shift = math.frexp(scale * float(1 << 27))
    q = int(math.copysign(math.floor(abs(mantissa) * (1 << 31) + 0.5), mantissa))
    return q, left_shift, math.floor(15 * (1 << 27) / 2.0 ** left_shift)


def softmax_input_params(scale: float, beta: float, integer_bits: int = 5) -> tuple[int, int, int]:
    """(multiplier, left shift, smallest difference counted) taking beta x the differences from
    a row's maximum to Q(integer_bits) (TFLite's int8 SOFTMAX)."""
    real = min(float(beta) * scale * (1 << (31 - integer_bits)), (1 << 31) - 1.0)
    q, left_shift = quantize_multiplier(real)
    radius = math.floor(((1 << integer_bits) - 1) * (1 << (31 - integer_bits)) / (1 << left_shift))
    return q, left_shift, -radius


def _q4_input(model: TfliteModel, op: Operator, x: np.ndarray):
    """(x - zero point), it rescaled to Q4.27, and the saturation radius (q4_input_params)."""
    scale, zero_point = tensor_params(model, op.inputs[0])
    q, left_shift, radius = q4_input_params(scale)
    centred = x.astype(np.int64) - zero_point
    return centred, multiply_by_quantized_multiplier(centred, q, left_shift), radius


def logistic(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in fixed point; output scale 1/256, zero point -128."""
    centred, q4, radius = _q4_input(model, op, x)
    positive = np.abs(q4)
    result = _one_over_one_plus_x(_exp_on_negative_values(-positive, 4))
    result = np.where(q4 > 0, result, wrap32(INT32_MAX - result))
    result = np.where(q4 == 0, np.int64(1 << 30), result)
    out = np.clip(rounding_divide_by_pot(result, 23) - 128, INT8_MIN, INT8_MAX)
    out = np.where(centred <= -radius, INT8_MIN, np.where(centred >= radius, INT8_MAX, out))
    return out.astype(np.int8)


def tanh(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """tanh in fixed point, from exp(-2|x|); output scale 1/128, zero point 0."""
    centred, q4, radius = _q4_input(model, op, x)
    negative_magnitude = -np.abs(q4)  # as Q5.26 the same bits are -2|x|
    t = _shift_left_saturating(wrap32(_newton_reciprocal_of_half_sum(_exp_on_negative_values(negative_magnitude, 5))
                                       - (1 << 29)), 2)
    result = np.where(q4 == 0, 0, np.where(q4 < 0, -t, t))
    out = np.clip(rounding_divide_by_pot(result, 24), INT8_MIN, INT8_MAX)
    out = np.where(centred <= -radius, INT8_MIN, np.where(centred >= radius, INT8_MAX, out))
    return out.astype(np.int8)


def softmax(model: TfliteModel, op: Operator, x: np.ndarray) -> np.ndarray:
    """TFLite's int8 softmax over the last axis: input differences from the row's maximum
    scaled by beta x input scale into Q5.26, exp in fixed point, summed in Q12.19, divided
    through a fixed-point reciprocal; output scale 1/256, zero point -128."""
    integer_bits = 5
    q, left_shift, diff_min = softmax_input_params(tensor_params(model, op.inputs[0])[0],
                                                   op.options.get("beta", 1.0), integer_bits)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    out = np.empty(rows.shape, np.int8)
    for r, row in enumerate(rows):
        diff = row - row.max()
        used = diff >= diff_min
        scaled = saturating_rounding_doubling_high_mul(diff * (1 << left_shift), q)
        exps = _exp_on_negative_values(scaled, integer_bits)
        total = int(wrap32(np.sum(np.where(used, rounding_divide_by_pot(exps, 12), 0))))
        headroom = 32 - (total & 0xFFFFFFFF).bit_length()
        bits_over_unit = 12 - headroom
        shifted = int(wrap32(((total & 0xFFFFFFFF) << headroom) - (1 << 31)))
        scale = _one_over_one_plus_x(shifted)
        values = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scale, exps), bits_over_unit + 31 - 8)
        out[r] = np.where(used, np.clip(values + INT8_MIN, INT8_MIN, INT8_MAX), INT8_MIN)
    return out.reshape(x.shape)


KERNELS = {"SOFTMAX": softmax, "LOGISTIC": logistic, "TANH": tanh, "FULLY_CONNECTED": fully_connected,
           "CONV_2D": conv_2d, "DEPTHWISE_CONV_2D": depthwise_conv_2d,
           "RESHAPE": reshape, "AVERAGE_POOL_2D": average_pool_2d, "MAX_POOL_2D": max_pool_2d, "ADD": add,
           "MUL": mul, "RELU": relu, "RELU6": relu6, "QUANTIZE": quantize, "DEQUANTIZE": dequantize, "PAD": pad,
           "CONCATENATION": concatenation, "MEAN": mean}
ACTIVATION_INPUTS = {"ADD": 2, "MUL": 2}  # other kernels take their first input, or all of them (concatenation)


def run(model: TfliteModel, inputs: list[np.ndarray], nodes: int | None = None) -> dict[int, np.ndarray]:
    """Every activation tensor the model computes from `inputs` (by tensor index), in node
    order; only the first `nodes` nodes when given."""
    values = {index: np.asarray(x).reshape(model.tensors[index].shape) for index, x in zip(model.inputs, inputs)}
    for op in model.operators[:nodes]:
        kernel = KERNELS.get(op.name)
        if kernel is None:
            raise NotImplementedInReference(f"node {op.index}: {op.name}")
        count = len(op.inputs) if op.name == "CONCATENATION" else ACTIVATION_INPUTS.get(op.name, 1)
        operands = [values[i] if i in values else model.tensors[i].data for i in op.inputs[:count]]
        values[op.outputs[0]] = kernel(model, op, *operands)
    return values
