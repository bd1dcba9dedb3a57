"""The kit's model firmware, `firmware/build/<board>/<model>-<variant>.elf` (the examples
`<model>-ref` and `<model>-opt`): each kit model (tinyml/models.py) exported as a TFLite
flatbuffer (kit_export.py) and built by `mcusim model build`'s own code (model_build.py:
TFLite's integer arithmetic, firmware/tinyml/tfl_ops*.c) with the kit's fixed test input and
the reference's outputs embedded, which the firmware checks: the numpy reference's, so that
`make` needs no interpreter; `model build` and `model run` embed the TFLite Micro interpreter's,
the same bytes wherever the two agree (the tests hold them to it). So an example and `mcusim
model run` of the exported file with the same input are one program: the same cycles.

    python -m mcusim.tinyml.kit_firmware MODEL --board BOARD [--build DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import tflite_reference
from .build import build as build_kit_model
from .kit_export import export
from .model_build import BuildError, build
from .models import MODELS
from .placement import VARIANTS, Placement
from .tflite_model import TfliteModel, load_model


def exported(name: str, folder: Path) -> tuple[TfliteModel, list[np.ndarray]]:
    """The kit model `name` written to folder/<name>.tflite and read back, with its test input."""
    built = build_kit_model(MODELS[name])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.tflite"
    data = export(built)
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)
    model = load_model(path)
    test_input = built.tensors["input"].data.reshape(model.tensors[model.inputs[0]].shape)
    return model, [test_input]


def layer_regions(name: str) -> dict[str, str]:
    """Each layer of kit model `name` by the region its firmware marks it with, "<index>_<OP>" of
    the exported node that writes its output (person_detection: "pw1" -> "2_CONV_2D")."""
    with tempfile.TemporaryDirectory(prefix="mcusim-kit-") as folder:
        model, _ = exported(name, Path(folder))
    writers = {model.tensors[op.outputs[0]].name: f"{op.index}_{op.name}" for op in model.operators}
    return {layer.name: writers[layer.output] for layer in MODELS[name].layers}


def reference_outputs(model: TfliteModel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs from the numpy reference (held bit for bit against the TFLite Micro
    interpreter by the tests)."""
    values = tflite_reference.run(model, inputs)
    return [values[index] for index in model.outputs]


def build_examples(name: str, board: str, build_dir: Path, variants=VARIANTS) -> list[Path]:
    """Both kernel variants of kit model `name` for `board`, as build_dir/<board>/<name>-<variant>.elf."""
    work = build_dir / board / "obj" / f"{name}-kit"
    model, inputs = exported(name, work)
    expected = reference_outputs(model, inputs)
    elves = []
    for variant in variants:
        done = build(model, board, work / variant, inputs, Placement(kernels=variant), expected=expected)
        target = build_dir / board / f"{name}-{variant}.elf"
        shutil.copyfile(done.elf, target)
        elves.append(target)
    return elves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--board", required=True)
    parser.add_argument("--build", type=Path, default=Path("build"), help="the firmware build folder")
    args = parser.parse_args(argv)
    try:
        build_examples(args.model, args.board, args.build)
    except BuildError as error:
        print(f"kit_firmware: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
