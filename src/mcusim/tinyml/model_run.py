"""`mcusim model run`: build a TFLite model for a board, run it on the simulator, read its outputs
from the arena, and validate them against the TFLite Micro interpreter on the same input. The
run's result gets a `model` section (run.json); the per-layer rows are the regions."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import tflite_reference, tflm_reference
from .model_build import BuiltModel, build, check_expected, check_inputs, default_inputs
from .model_plan import macs
from .placement import Placement
from .model_summary import summarize
from .tflite_codegen import kernel_used
from .tflite_model import TfliteModel


@dataclass
class ModelRun:
    result: object            # api.RunResult, its `model` section filled in
    built: BuiltModel
    outputs: list[np.ndarray]  # what the firmware computed
    expected: list[np.ndarray] | None  # what the interpreter computed, before the build, and the
    #                                    firmware carried when the sizes fit (None: it could not run)


def _max_abs_diff(ours: list[np.ndarray], theirs: list[np.ndarray]) -> float | None:
    """The largest difference between the two sets of outputs; None when their sizes differ."""
    if len(ours) != len(theirs) or any(a.size != b.size for a, b in zip(ours, theirs)):
        return None
    return max((float(np.max(np.abs(a.astype(np.float64).reshape(-1) - b.astype(np.float64).reshape(-1))))
                if a.size else 0.0) for a, b in zip(ours, theirs))


def _equal(ours: list[np.ndarray], theirs: list[np.ndarray]) -> bool:
    return len(ours) == len(theirs) and all(a.size == b.size and (a.reshape(-1) == b.reshape(-1)).all()
                                            for a, b in zip(ours, theirs))


def interpreter_reference(model: TfliteModel, inputs: list[np.ndarray]):
    """(the TFLite Micro interpreter's outputs for `inputs`, those the firmware can carry and
    compare with, why it carries none): the outputs are None when the interpreter could not run,
    the carried ones also when they do not have the model's output sizes."""
    try:
        expected = tflm_reference.outputs(model.path, inputs, len(model.outputs))
    except tflm_reference.InterpreterError as error:
        return None, None, str(error)
    try:
        check_expected(model, expected)
    except ValueError as error:
        return expected, None, f"the interpreter's outputs do not fit the model: {error}"
    return expected, expected, None


def _simulate(model: TfliteModel, built: BuiltModel, board: str, indices, **simulator_options):
    """(run result, {tensor index: its value in the arena after the run})."""
    from ..api import Simulator

    simulator = Simulator(built.elf, board, **simulator_options)
    result = simulator.run()
    arena = simulator.image.symbol("tfl_arena")
    values = {}
    for index in indices:
        tensor = model.tensors[index]
        raw = simulator.machine.read_memory(arena + built.plan.offsets[index], tensor.bytes)
        values[index] = np.frombuffer(raw, np.dtype(tensor.dtype)).reshape(tensor.shape)
    return result, values


def first_differing_layer(model: TfliteModel, tensors: dict[int, np.ndarray], inputs) -> str | None:
    """The first layer whose output (in `tensors`, from a run that kept them all) differs from
    the numpy reference's, e.g. "2_FULLY_CONNECTED (3 of 4 values differ, max 12)"; None if all agree."""
    try:
        expected = tflite_reference.run(model, inputs)
    except tflite_reference.NotImplementedInReference:
        return None
    for op in model.operators:
        index = op.outputs[0]
        ours, theirs = tensors.get(index), expected.get(index)
        if ours is None or theirs is None:
            continue
        differ = ours.reshape(-1) != theirs.reshape(-1)
        if differ.any():
            gap = float(np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64))))
            return f"{op.index}_{op.name} ({int(differ.sum())} of {differ.size} values differ, max {gap:g})"
    return None


def run(model: TfliteModel, board: str, out: Path, inputs: list[np.ndarray] | None = None,
        placement: Placement = Placement(), placement_file: str | None = None, dump: bool = False,
        **simulator_options) -> ModelRun:
    """Run the TFLite Micro interpreter on the inputs, build into OUT/build with its outputs
    embedded (the firmware compares its own with them), run, validate. `dump`: an arena that
    keeps every tensor, written to OUT/tensors.npz. On a mismatch the model is run again that way
    to name the first layer that differs from the numpy reference. Raises BuildError
    (model_build) or ElfError."""
    given = inputs is not None
    inputs = check_inputs(model, inputs if given else default_inputs(model))
    # first, so the firmware carries the interpreter's outputs and checks its own against them
    expected, embedded, problem = interpreter_reference(model, inputs)
    problem = problem if expected is None else None  # (outputs of other sizes are a mismatch, below)
    built = build(model, board, out / "build", inputs, placement, keep_all=dump, expected=embedded)
    activations = sorted(built.plan.offsets)
    result, values = _simulate(model, built, board, activations if dump else model.outputs, **simulator_options)
    outputs = [values[index] for index in model.outputs]
    if dump:
        np.savez(out / "tensors.npz", **{f"{i}:{model.tensors[i].name}": values[i] for i in activations})
    # exit 1 with outputs that differ from the embedded reference is the firmware's own verdict
    self_check_failed = (embedded is not None and result.exit_code == 1 and "MISMATCH" in result.stdout
                         and not _equal(outputs, embedded))
    if result.exit_code != 0 and not self_check_failed:
        problem, expected = f"the firmware did not finish (exit {result.exit_code}: {result.exit_detail})", None
    validated = expected is not None and _equal(outputs, expected)
    first_difference = None
    if expected is not None and not validated:
        kept = built if dump else build(model, board, out / "build-kept", built.inputs, placement, keep_all=True)
        _, tensors = (result, values) if dump else _simulate(model, kept, board, sorted(kept.plan.offsets),
                                                               **simulator_options)
        first_difference = first_differing_layer(model, tensors, built.inputs) or \
            "none: every layer equals mcusim's numpy reference, which differs from the interpreter here"
    weights = sum(t.bytes for t in model.tensors if t.constant)
    variants = placement.variants(model)
    layers = [{key: layer[key] for key in ("name", "op", "inputs", "output", "macs", "weights_bytes")}
              | {"weights_in": placement.weights if layer["weights_bytes"] else None,
                 "arena_live_bytes": built.plan.live_bytes(model, layer["index"]),
                 "kernel": kernel_used(model, model.operators[layer["index"]], variants[layer["index"]])}
              for layer in summarize(model)["layers"]]
    result.model = {
        "path": str(model.path), "sha256": model.sha256, "operators": sorted({op.name for op in model.operators}),
        "layers": len(model.operators), "macs": sum(macs(model, op) for op in model.operators),
        "arena_bytes": built.plan.size, "arena_peak_live_bytes": max((row["arena_live_bytes"] for row in layers),
                                                                     default=0),
        "weights_bytes": weights, "weights_in": placement.weights,
        "kernels": placement.kernels, "placement": placement.as_dict(), "placement_file": placement_file,
        "per_layer": layers,
        "validated": validated,
        "max_abs_diff": _max_abs_diff(outputs, expected) if expected is not None else None,
        "reference": tflm_reference.version(), "validation_problem": problem,
        "first_differing_layer": first_difference, "tensors_dumped": "tensors.npz" if dump else None,
        "input": "given" if given else "seeded uniform random (seed 0)",
    }
    return ModelRun(result, built, outputs, expected)


def _dims(shape) -> str:
    return "x".join(str(d) for d in shape) if shape else "-"


def layer_table(section: dict, regions: list[dict]) -> list[str]:
    """The per-layer report of a model run: op and shapes, MACs, cycles, ms, MACs per cycle,
    energy, weights and where they live, arena bytes live, kernel set."""
    measured = {r["name"]: r for r in regions}
    header = (f"  {'layer':<24} {'output':<14} {'MACs':>11} {'cycles':>12} {'ms':>9} {'MAC/cyc':>7} {'uJ':>9} "
              f"{'weights B':>10} {'in':<5} {'arena B':>8} kernel")
    lines = [header]
    for layer in section["per_layer"]:
        r = measured.get(layer["name"], {})
        cycles, seconds, energy = r.get("cycles_mean"), r.get("seconds_mean"), r.get("energy_j")
        ratio = f"{layer['macs'] / cycles:.3f}" if cycles and layer["macs"] else "-"
        lines.append(f"  {layer['name']:<24} {_dims(layer['output']):<14} {layer['macs']:>11,} "
                     f"{'-' if cycles is None else f'{cycles:,.0f}':>12} "
                     f"{'-' if seconds is None else f'{seconds * 1e3:.3f}':>9} {ratio:>7} "
                     f"{'-' if energy is None else f'{energy * 1e6:.1f}':>9} {layer['weights_bytes']:>10,} "
                     f"{layer['weights_in'] or '-':<5} {layer['arena_live_bytes']:>8,} {layer['kernel']}")
    return lines
