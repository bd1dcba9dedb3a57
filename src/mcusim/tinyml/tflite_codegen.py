"""A TFLite model as C: constants as const arrays, one tfl_params per layer with the integer
parameters TFLite derives from the scales (computed here once, by the functions the numpy
reference uses), and tfl_model_run(arena): the layers as direct calls in order, every tensor
at its planned arena offset, each layer between TFL_LAYER_BEGIN/END(name) (the board build
makes them mcusim region markers; firmware/tinyml/tfl_ops.h has the kernels)."""
from __future__ import annotations

import numpy as np

from . import tflite_reference as R
from .model_plan import ArenaPlan, plan_arena
from .placement import VARIANTS
from .tflite_model import Operator, TfliteModel, check_supported

CALLS = {"CONV_2D": "tfl_conv", "DEPTHWISE_CONV_2D": "tfl_depthwise", "FULLY_CONNECTED": "tfl_fully_connected",
         "AVERAGE_POOL_2D": "tfl_average_pool", "MAX_POOL_2D": "tfl_max_pool", "ADD": "tfl_add", "MUL": "tfl_mul",
         "RELU": "tfl_relu", "RELU6": "tfl_relu6", "DEQUANTIZE": "tfl_dequantize", "PAD": "tfl_pad",
         "MEAN": "tfl_mean", "SOFTMAX": "tfl_softmax", "LOGISTIC": "tfl_logistic", "TANH": "tfl_tanh"}

# The SIMD kernels (firmware/tinyml/tfl_ops_opt.c); every other layer has the one kernel.
OPT_CALLS = {"CONV_2D": "tfl_conv_opt", "DEPTHWISE_CONV_2D": "tfl_depthwise_opt",
             "FULLY_CONNECTED": "tfl_fully_connected_opt"}


def kernel_used(model: TfliteModel, op: Operator, variant: str) -> str:
    """The kernel set a layer runs on when `variant` is asked for: "opt" only where a SIMD kernel
    exists."""
    return "opt" if variant == "opt" and op.name in OPT_CALLS else "ref"


def _shape4(shape) -> tuple[int, int, int, int]:
    shape = tuple(int(d) for d in shape)
    if len(shape) > 4:
        raise ValueError(f"tensor of rank {len(shape)}: at most 4 dimensions are supported")
    return (1,) * (4 - len(shape)) + shape


def _shape_c(shape) -> str:
    return "{" + ", ".join(str(d) for d in _shape4(shape)) + "}"


WEIGHTS_IN = ("flash", "ram")
RAM_SECTION = ".data.tfl_weights"  # copied from flash to RAM at reset with the rest of .data (common/sections.ld)


def _array(ctype: str, name: str, values, public: bool = False, section: str | None = None) -> str:
    flat = [int(v) for v in np.asarray(values).reshape(-1)] or [0]
    rows = [", ".join(str(v) for v in flat[i: i + 24]) for i in range(0, len(flat), 24)]
    placed = f' __attribute__((section("{section}"), aligned(4)))' if section else ""
    return (f"{'' if public else 'static '}const {ctype} {name}[{len(flat)}]{placed} = {{\n    "
            + ",\n    ".join(rows) + "\n};\n")


class _Layer:
    """The C of one node: its constant arrays and its tfl_params initialiser."""

    def __init__(self, model: TfliteModel, op: Operator, weights_section: str | None = None, kernel: str = "ref"):
        self.model, self.op, self.kernel = model, op, kernel
        self.weights_section = weights_section  # where weights and biases go (None: flash, with the code)
        self.arrays: list[str] = []
        self.fields: dict[str, str] = {}

    def array(self, ctype: str, suffix: str, values, weights: bool = False) -> str:
        name = f"layer{self.op.index}_{suffix}"
        self.arrays.append(_array(ctype, name, values, section=self.weights_section if weights else None))
        return name

    def tensor(self, position: int):
        return self.model.tensors[self.op.inputs[position]]

    def params(self) -> str:
        return "{" + ", ".join(f".{k} = {v}" for k, v in self.fields.items()) + "}"


def _geometry(layer: _Layer, kernel_h: int, kernel_w: int) -> None:
    options = layer.op.options
    source = layer.tensor(0)
    sh, sw = options.get("stride_h", 1), options.get("stride_w", 1)
    dh, dw = options.get("dilation_h", 1), options.get("dilation_w", 1)
    _, top = R.padding(_shape4(source.shape)[1], kernel_h, sh, dh, options.get("padding", "VALID"))
    _, left = R.padding(_shape4(source.shape)[2], kernel_w, sw, dw, options.get("padding", "VALID"))
    layer.fields.update(stride_h=sh, stride_w=sw, dilation_h=dh, dilation_w=dw, pad_top=top, pad_left=left)


def _activation(layer: _Layer) -> None:
    scale, zero_point = R.tensor_params(layer.model, layer.op.outputs[0])
    low, high = R.activation_range(layer.op.options.get("activation"), scale, zero_point)
    layer.fields.update(act_min=low, act_max=high)


def _weighted(layer: _Layer, channels: int) -> None:
    q, exponent = R.channel_multipliers(layer.model, layer.op, channels)
    weights = layer.tensor(1)
    layer.fields["weights"] = layer.array("int8_t", "weights", weights.data, weights=True)
    layer.fields["filter"] = _shape_c(weights.shape if layer.op.name != "FULLY_CONNECTED"
                                      else (weights.shape[0], weights.shape[1], 1, 1))
    has_bias = len(layer.op.inputs) > 2 and layer.op.inputs[2] >= 0
    if layer.kernel == "opt" and layer.op.name in ("CONV_2D", "FULLY_CONNECTED"):
        # sum((x - zp) w) = sum(x w) - zp sum(w): the SIMD kernels multiply raw bytes
        bias = layer.tensor(2).data.astype(np.int64) if has_bias else np.zeros(channels, np.int64)
        sums = weights.data.reshape(channels, -1).astype(np.int64).sum(axis=1)
        zero_point = int(layer.model.tensors[layer.op.inputs[0]].zero_points[0])
        layer.fields["folded_bias"] = layer.array("int32_t", "folded_bias", R.wrap32(bias - zero_point * sums),
                                                  weights=True)
    elif has_bias:
        layer.fields["bias"] = layer.array("int32_t", "bias", layer.tensor(2).data, weights=True)
    layer.fields["multiplier"] = layer.array("int32_t", "multiplier", q)
    layer.fields["shift"] = layer.array("int32_t", "shift", exponent)


def _fixed_point_input(layer: _Layer) -> None:
    """Softmax or logistic/tanh: multiplier, shift and the smallest difference or radius, from
    the reference's own functions."""
    scale, _ = R.tensor_params(layer.model, layer.op.inputs[0])
    if layer.op.name == "SOFTMAX":
        q, shift, limit = R.softmax_input_params(scale, layer.op.options.get("beta", 1.0))
    else:
        q, shift, limit = R.q4_input_params(scale)
    layer.fields.update(input_multiplier=q, left_shift=shift, diff_min=limit)


def _describe(layer: _Layer) -> None:
    op, model = layer.op, layer.model
    name = op.name
    source, result = model.tensors[op.inputs[0]], model.tensors[op.outputs[0]]
    layer.fields.update({"in": _shape_c(source.shape), "out": _shape_c(result.shape)})
    if len(source.scales):
        layer.fields["in_zp"] = int(source.zero_points[0])
    if len(result.scales):
        layer.fields["out_zp"] = int(result.zero_points[0])
    if name == "CONV_2D":
        _weighted(layer, result.shape[-1])
        _geometry(layer, layer.tensor(1).shape[1], layer.tensor(1).shape[2])
        _activation(layer)
    elif name == "DEPTHWISE_CONV_2D":
        _weighted(layer, result.shape[-1])
        _geometry(layer, layer.tensor(1).shape[1], layer.tensor(1).shape[2])
        layer.fields["depth_multiplier"] = result.shape[-1] // source.shape[-1]
        _activation(layer)
    elif name == "FULLY_CONNECTED":
        _weighted(layer, layer.tensor(1).shape[0])
        _activation(layer)
    elif name in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        kh, kw = op.options["filter_h"], op.options["filter_w"]
        layer.fields["filter"] = _shape_c((1, kh, kw, 1))
        _geometry(layer, kh, kw)
        _activation(layer)
    elif name in ("ADD", "MUL"):
        other = model.tensors[op.inputs[1]]
        layer.fields.update(in2=_shape_c(other.shape), in2_zp=int(other.zero_points[0]))
        (s1, _), (s2, _), (so, _) = (R.tensor_params(model, i) for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
        if name == "ADD":
            twice_max = 2 * float(max(np.float32(s1), np.float32(s2)))
            pairs = [R.quantize_multiplier(s1 / twice_max), R.quantize_multiplier(s2 / twice_max),
                     R.quantize_multiplier(twice_max / ((1 << 20) * so))]
            layer.fields["left_shift"] = 20
        else:
            pairs = [R.quantize_multiplier(s1 * s2 / so)]
        layer.fields["multiplier"] = layer.array("int32_t", "multiplier", [p[0] for p in pairs])
        layer.fields["shift"] = layer.array("int32_t", "shift", [p[1] for p in pairs])
        _activation(layer)
    elif name in ("RELU", "QUANTIZE") and source.dtype == "int8":
        (si, _), (so, zo) = R.tensor_params(model, op.inputs[0]), R.tensor_params(model, op.outputs[0])
        q, e = R.quantize_multiplier(si / so)
        layer.fields["multiplier"] = layer.array("int32_t", "multiplier", [q])
        layer.fields["shift"] = layer.array("int32_t", "shift", [e])
        layer.fields.update(act_min=max(-128, zo) if name == "RELU" else -128, act_max=127)
    elif name == "RELU6":
        si, zi = R.tensor_params(model, op.inputs[0])
        layer.fields.update(act_min=zi, act_max=int(np.clip(R.quantize_value(6.0, si, zi), -128, 127)))
    elif name == "QUANTIZE":  # from float32
        layer.fields["scale"] = f"{float(np.float32(result.scales[0])).hex()}f"
    elif name == "DEQUANTIZE":
        layer.fields["scale"] = f"{float(np.float32(source.scales[0])).hex()}f"
    elif name == "PAD":
        paddings = _pad4(layer.tensor(1).data.reshape(-1, 2))
        layer.fields["paddings"] = layer.array("int32_t", "paddings", paddings)
    elif name == "MEAN":
        axes = R.mean_axes(model, op)
        lead = 4 - len(source.shape)
        count = int(np.prod([source.shape[a] for a in axes], dtype=np.int64))
        q, e = R.mean_multiplier(model, op, count)
        layer.fields["reduce_axes"] = sum(1 << (a + lead) for a in axes)
        layer.fields["multiplier"] = layer.array("int32_t", "multiplier", [q])
        layer.fields["shift"] = layer.array("int32_t", "shift", [e])
    elif name == "CONCATENATION":
        axis = op.options.get("axis", 0)
        rank = len(result.shape)
        layer.fields["axis"] = (axis % rank) + (4 - rank)
    elif name in ("SOFTMAX", "LOGISTIC", "TANH"):
        _fixed_point_input(layer)


def _pad4(paddings) -> list[int]:
    rows = [[0, 0]] * (4 - len(paddings)) + [[int(a), int(b)] for a, b in paddings]
    return [v for row in rows for v in row]


def _operand(model: TfliteModel, plan: ArenaPlan, index: int, layer: _Layer, ctype: str = "int8_t") -> str:
    tensor = model.tensors[index]
    if tensor.constant:
        name = layer.array(tensor.dtype + "_t" if tensor.dtype != "float32" else "float", f"const{index}", tensor.data,
                           weights=True)
        return f"({ctype} *){name}"
    return f"({ctype} *)(arena + {plan.offsets[index]}u)"


def _call(model: TfliteModel, plan: ArenaPlan, layer: _Layer) -> list[str]:
    op = layer.op
    p = f"&layer{op.index}_params"
    out = f"(int8_t *)(arena + {plan.offsets[op.outputs[0]]}u)"
    first = lambda ctype="const int8_t": _operand(model, plan, op.inputs[0], layer, ctype)  # noqa: E731
    if op.name == "RESHAPE":
        return [f"tfl_copy({first()}, {out}, {model.tensors[op.outputs[0]].bytes}u);"]
    if op.name == "QUANTIZE":
        if model.tensors[op.inputs[0]].dtype == "float32":
            return [f"tfl_quantize_float({p}, {first('const float')}, {out});"]
        return [f"tfl_requantize({p}, {first()}, {out});"]
    if op.name == "DEQUANTIZE":
        return [f"tfl_dequantize({p}, {first()}, (float *)(arena + {plan.offsets[op.outputs[0]]}u));"]
    if layer.kernel == "opt":
        return [f"{OPT_CALLS[op.name]}({p}, {first()}, {out});"]
    if op.name in ("ADD", "MUL"):
        second = _operand(model, plan, op.inputs[1], layer, "const int8_t")
        return [f"{CALLS[op.name]}({p}, {first()}, {second}, {out});"]
    if op.name == "CONCATENATION":
        lines, offset = [], 0
        axis = int(layer.fields["axis"])
        for index in op.inputs:
            part = _shape4(model.tensors[index].shape)
            lines.append(f"tfl_concat_part({p}, {_operand(model, plan, index, layer, 'const int8_t')}, "
                         f"(tfl_shape){_shape_c(part)}, {offset}, {out});")
            offset += part[axis]
        return lines
    return [f"{CALLS[op.name]}({p}, {first()}, {out});"]


def generate(model: TfliteModel, plan: ArenaPlan | None = None, weights_in: str = "flash",
             variants: dict[int, str] | None = None) -> str:
    """The model as C (a translation unit that includes tfl_ops.h and defines TFL_LAYER_BEGIN/END
    as nothing unless the includer did). `weights_in` "ram" puts the weights and biases in a
    .data section, copied to RAM by the start-up code. `variants`: "opt" or "ref" by layer index
    (default "ref"); a layer without a SIMD kernel runs the plain one either way."""
    if weights_in not in WEIGHTS_IN:
        raise ValueError(f"weights_in must be one of {', '.join(WEIGHTS_IN)}, not {weights_in!r}")
    variants = variants or {}
    unknown = sorted(set(variants.values()) - set(VARIANTS))
    if unknown:
        raise ValueError(f"kernel variants must be {' or '.join(VARIANTS)}, not {', '.join(unknown)}")
    section = RAM_SECTION if weights_in == "ram" else None
    check_supported(model)
    plan = plan or plan_arena(model)
    head = [f"/* Generated by mcusim from {model.path} (sha256 {model.sha256}). Do not edit. */\n",
            '#include "tfl_ops.h"\n\n#ifndef TFL_LAYER_BEGIN\n#define TFL_LAYER_BEGIN(name)\n'
            "#define TFL_LAYER_END(name)\n#endif\n\n"]
    body, calls, scratch = [], [], 0
    for op in model.operators:
        layer = _Layer(model, op, section, kernel_used(model, op, variants.get(op.index, "ref")))
        _describe(layer)
        if layer.kernel == "opt" and op.name == "CONV_2D":
            layer.fields["scratch"] = "tfl_scratch"
            taps = int(np.prod(model.tensors[op.inputs[1]].shape[1:]))
            scratch = max(scratch, 2 * ((taps + 3) & ~3))  # two pixels' columns, the second word aligned
        lines = _call(model, plan, layer)
        body += layer.arrays
        body.append(f"static const tfl_params layer{op.index}_params = {layer.params()};\n")
        name = f"{op.index}_{op.name}"
        calls.append(f'    TFL_LAYER_BEGIN("{name}");\n' + "".join(f"    {line}\n" for line in lines)
                     + f'    TFL_LAYER_END("{name}");\n')
    if scratch:  # the SIMD convolutions' im2col buffer, two output pixels' taps
        body.insert(0, f"static int8_t tfl_scratch[{scratch}] __attribute__((aligned(4)));\n")
    inputs, outputs = model.inputs, model.outputs
    tail = [f"\nconst uint32_t tfl_model_arena_bytes = {max(plan.size, 4)}u;\n",
            f"const uint32_t tfl_model_input_count = {len(inputs)}u;\n",
            _array("uint32_t", "tfl_model_input_offsets", [plan.offsets[i] for i in inputs], public=True),
            _array("uint32_t", "tfl_model_input_bytes", [model.tensors[i].bytes for i in inputs], public=True),
            f"const uint32_t tfl_model_output_count = {len(outputs)}u;\n",
            _array("uint32_t", "tfl_model_output_offsets", [plan.offsets[i] for i in outputs], public=True),
            _array("uint32_t", "tfl_model_output_bytes", [model.tensors[i].bytes for i in outputs], public=True),
            "\nvoid tfl_model_run(uint8_t *arena)\n{\n" + "".join(calls) + "}\n"]
    return "".join(head + body + tail)
