"""What a model costs before it runs: multiply-accumulates per layer and the activation arena,
planned at build time from tensor lifetimes (each activation lives from the node that writes it
to the last node that reads it; the model's inputs from the start, its outputs to the end)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tflite_model import Operator, TfliteModel

ARENA_ALIGNMENT = 16  # bytes: the alignment TFLite Micro gives arena buffers (kBufferAlignment)


def macs(model: TfliteModel, op: Operator) -> int:
    """Multiply-accumulates of one node: convolutions and fully connected layers (the count the
    MLPerf Tiny and the paper's Table III tables use); other operators count 0."""
    output = model.tensor(op.outputs[0]) if op.outputs else None
    weights = model.tensor(op.inputs[1]) if len(op.inputs) > 1 else None
    if output is None or weights is None or len(weights.shape) < 2:
        return 0
    if op.name == "CONV_2D":        # weights [out channels, kh, kw, in channels]
        return output.elements * int(np.prod(weights.shape[1:], dtype=np.int64))
    if op.name == "DEPTHWISE_CONV_2D":  # weights [1, kh, kw, out channels]
        return output.elements * weights.shape[1] * weights.shape[2]
    if op.name == "FULLY_CONNECTED":    # weights [out features, in features]
        return output.elements * weights.shape[1]
    return 0


@dataclass(frozen=True)
class ArenaPlan:
    offsets: dict[int, int]          # tensor index -> byte offset in the arena
    lifetimes: dict[int, tuple[int, int]]  # tensor index -> (first node, last node) it is live in
    size: int                        # arena bytes

    def live_bytes(self, model: TfliteModel, node: int) -> int:
        """Bytes of the activations live while `node` runs."""
        return sum(model.tensors[t].bytes for t, (first, last) in self.lifetimes.items() if first <= node <= last)


def _aligned(value: int) -> int:
    return (value + ARENA_ALIGNMENT - 1) // ARENA_ALIGNMENT * ARENA_ALIGNMENT


def plan_arena(model: TfliteModel, keep_all: bool = False) -> ArenaPlan:
    """Place every activation (non-constant tensor) in one arena: largest first, each at the
    lowest aligned offset not used by a tensor whose lifetime overlaps its own (a greedy
    first-fit, the scheme TFLite Micro's default planner uses). `keep_all`: no two tensors share
    a byte, so every layer's output is still there after the run (`mcusim model run --dump`)."""
    last_node = max(len(model.operators) - 1, 0)
    lifetimes: dict[int, list[int]] = {}
    for index in model.inputs:
        lifetimes[index] = [0, 0]
    for op in model.operators:
        for index in op.inputs:
            tensor = model.tensor(index)
            if tensor is not None and not tensor.constant:
                lifetimes.setdefault(index, [op.index, op.index])[1] = op.index
        for index in op.outputs:
            tensor = model.tensor(index)
            if tensor is not None and not tensor.constant:
                span = lifetimes.setdefault(index, [op.index, op.index])
                span[0] = min(span[0], op.index)
                span[1] = max(span[1], op.index)
    for index in model.outputs:
        lifetimes.setdefault(index, [last_node, last_node])[1] = last_node
    order = sorted(lifetimes, key=lambda t: (-model.tensors[t].bytes, lifetimes[t][0], t))
    offsets: dict[int, int] = {}
    for tensor in order:
        first, last = lifetimes[tensor]
        size = _aligned(model.tensors[tensor].bytes)
        taken = sorted((offsets[other], offsets[other] + _aligned(model.tensors[other].bytes)) for other in offsets
                       if keep_all or lifetimes[other][0] <= last and first <= lifetimes[other][1])
        offset = 0
        for start, end in taken:
            if offset + size <= start:
                break
            offset = max(offset, end)
        offsets[tensor] = offset
    size = max((offsets[t] + _aligned(model.tensors[t].bytes) for t in offsets), default=0)
    return ArenaPlan(offsets, {t: (span[0], span[1]) for t, span in lifetimes.items()}, size)
