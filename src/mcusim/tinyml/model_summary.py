"""`mcusim model show`: a model's nodes, shapes, MACs, weights and arena plan, as a dict (JSON)
and as text."""
from __future__ import annotations

from .model_plan import macs, plan_arena
from .tflite_model import SUPPORTED_OPERATORS, TfliteModel


def _shape(model: TfliteModel, index: int) -> list[int] | None:
    tensor = model.tensor(index)
    return list(tensor.shape) if tensor is not None else None


def _quantization(tensor) -> str:
    if not len(tensor.scales):
        return ""
    if len(tensor.scales) == 1:
        return f"scale {float(tensor.scales[0]):.6g}, zero point {int(tensor.zero_points[0])}"
    return f"per-channel ({len(tensor.scales)} scales, axis {tensor.quantized_dimension})"


def summarize(model: TfliteModel) -> dict:
    """Everything `model show` prints (run.json's future `model` section uses the same names)."""
    plan = plan_arena(model)
    layers = []
    weights_total = 0
    for op in model.operators:
        constants = [model.tensors[i] for i in op.inputs if i >= 0 and model.tensors[i].constant]
        weight_bytes = sum(t.bytes for t in constants)
        weights_total += weight_bytes
        activations = [i for i in op.inputs if i >= 0 and not model.tensors[i].constant]
        layers.append({
            "index": op.index, "name": f"{op.index}_{op.name}", "op": op.name,
            "supported": op.name in SUPPORTED_OPERATORS,
            "inputs": [_shape(model, i) for i in activations],
            "output": _shape(model, op.outputs[0]) if op.outputs else None,
            "options": {k: v for k, v in op.options.items() if v not in (None, "NONE")},
            "macs": macs(model, op), "weights_bytes": weight_bytes,
            "arena_live_bytes": plan.live_bytes(model, op.index),
        })
    tensors = [{"index": t.index, "name": t.name, "shape": list(t.shape), "dtype": t.dtype,
                "constant": t.constant, "bytes": t.bytes, "quantization": _quantization(t),
                "arena_offset": plan.offsets.get(t.index)} for t in model.tensors]
    return {"path": model.path, "sha256": model.sha256, "description": model.description,
            "operators": sorted({op.name for op in model.operators}),
            "inputs": [tensors[i] for i in model.inputs], "outputs": [tensors[i] for i in model.outputs],
            "layers": layers, "tensors": tensors, "macs": sum(layer["macs"] for layer in layers),
            "weights_bytes": weights_total, "arena_bytes": plan.size}


def _dims(shape) -> str:
    return "x".join(str(d) for d in shape) if shape else "-"


def show_lines(summary: dict) -> list[str]:
    lines = [f"model {summary['path']} (sha256 {summary['sha256'][:16]}...)"]
    if summary["description"]:
        lines.append(f"  description: {summary['description']}")
    for role in ("inputs", "outputs"):
        for t in summary[role]:
            lines.append(f"  {role[:-1]} {t['name']!r}: {t['dtype']} {_dims(t['shape'])}"
                         + (f" ({t['quantization']})" if t["quantization"] else ""))
    header = (f"  {'layer':<26} {'input':<16} {'output':<16} {'MACs':>12} {'weights B':>10} {'arena live B':>12}"
              "  options")
    lines += ["", header]
    for layer in summary["layers"]:
        options = ", ".join(f"{k}={v}" for k, v in layer["options"].items())
        flag = "" if layer["supported"] else "  (not supported)"
        inputs = ",".join(_dims(s) for s in layer["inputs"]) or "-"
        lines.append(f"  {layer['name']:<26} {inputs:<16} {_dims(layer['output']):<16} {layer['macs']:>12,} "
                     f"{layer['weights_bytes']:>10,} {layer['arena_live_bytes']:>12,}  {options}{flag}")
    lines += ["", f"  total: {len(summary['layers'])} layers, {summary['macs']:,} MACs, weights "
              f"{summary['weights_bytes']:,} bytes, activation arena {summary['arena_bytes']:,} bytes "
              "(planned from tensor lifetimes)"]
    return lines
