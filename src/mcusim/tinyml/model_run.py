"""`mcusim model run`: build a TFLite model for a board, run it on the simulator, read its outputs
from the arena, and validate them against the TFLite Micro interpreter on the same input. The
run's result gets a `model` section (run.json); the per-layer rows are the regions."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import tflm_reference
from .model_build import BuiltModel, build
from .model_plan import macs
from .placement import Placement
from .tflite_model import TfliteModel


@dataclass
class ModelRun:
    result: object            # api.RunResult, its `model` section filled in
    built: BuiltModel
    outputs: list[np.ndarray]  # what the firmware computed
    expected: list[np.ndarray] | None  # what the interpreter computed (None: it could not run)


def _max_abs_diff(ours: list[np.ndarray], theirs: list[np.ndarray]) -> float:
    return max((float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0)
               for a, b in zip(ours, theirs))


def run(model: TfliteModel, board: str, out: Path, inputs: list[np.ndarray] | None = None,
        placement: Placement = Placement(), placement_file: str | None = None, **simulator_options) -> ModelRun:
    """Build into OUT/build, run, validate. Raises BuildError (model_build) or ElfError."""
    from ..api import Simulator

    built = build(model, board, out / "build", inputs, placement)
    simulator = Simulator(built.elf, board, **simulator_options)
    result = simulator.run()
    arena = simulator.image.symbol("tfl_arena")
    outputs = []
    for index in model.outputs:
        tensor = model.tensors[index]
        raw = simulator.machine.read_memory(arena + built.plan.offsets[index], tensor.bytes)
        outputs.append(np.frombuffer(raw, np.dtype(tensor.dtype)).reshape(tensor.shape))
    expected, problem = None, None
    if result.exit_code == 0:
        try:
            expected = tflm_reference.outputs(model.path, built.inputs, len(model.outputs))
        except tflm_reference.InterpreterError as error:
            problem = str(error)
    else:
        problem = f"the firmware did not finish (exit {result.exit_code}: {result.exit_detail})"
    validated = expected is not None and all(a.shape == b.shape and (a == b).all() for a, b in zip(outputs, expected))
    weights = sum(t.bytes for t in model.tensors if t.constant)
    result.model = {
        "path": str(model.path), "sha256": model.sha256, "operators": sorted({op.name for op in model.operators}),
        "layers": len(model.operators), "macs": sum(macs(model, op) for op in model.operators),
        "arena_bytes": built.plan.size, "weights_bytes": weights, "weights_in": placement.weights,
        "kernels": placement.kernels, "placement": placement.as_dict(), "placement_file": placement_file,
        "validated": validated,
        "max_abs_diff": _max_abs_diff(outputs, expected) if expected is not None else None,
        "reference": tflm_reference.version(), "validation_problem": problem,
        "input": "given" if inputs is not None else "seeded uniform random (seed 0)",
    }
    return ModelRun(result, built, outputs, expected)
