"""The kit's model firmware against the same model exported as .tflite and run by `mcusim model
run`: inference cycles on each board, side by side.

    python benchmarks/kit_vs_tflite.py [--boards mcu-s,mcu-m,mcu-b,mcu-d] [--models micro_speech,...]
                                       [--variant opt|ref]

For each of the paper's five applications (tinyml/models.py): the kit's prebuilt example
(`<model>-<variant>`) runs on the simulator; the model is exported with tinyml/kit_export.py and
run through `mcusim model run` with the kit's test input (validated against the TFLite Micro
interpreter). The kit's firmware is built from that export by the same code
(tinyml/kit_firmware.py), so the two should take the same cycles: the script prints both and
their ratio.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mcusim import examples
from mcusim.api import Simulator
from mcusim.tinyml import model_run
from mcusim.tinyml.kit_firmware import exported
from mcusim.tinyml.models import PAPER_MODELS
from mcusim.tinyml.placement import Placement

PAPER_BOARDS = ["mcu-s", "mcu-m", "mcu-b", "mcu-d"]


def inference_cycles(result) -> float:
    return next(r["cycles_mean"] for r in result.regions if r["name"] == "inference")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default=",".join(PAPER_BOARDS))
    parser.add_argument("--models", default=",".join(m.name for m in PAPER_MODELS))
    parser.add_argument("--variant", choices=["opt", "ref"], default="opt")
    args = parser.parse_args()
    print(f"| model | board | kit firmware ({args.variant}) | generated from .tflite ({args.variant}) | ratio | "
          "same cycles | validated |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="mcusim-kit-") as temporary:
        work = Path(temporary)
        for name in args.models.split(","):
            model, inputs = exported(name, work)  # work/<name>.tflite and the kit's test input
            for board in args.boards.split(","):
                kit = inference_cycles(Simulator(examples.path(f"{name}-{args.variant}", board), board).run())
                done = model_run.run(model, board, work / f"{name}-{board}", inputs=inputs,
                                     placement=Placement(kernels=args.variant))
                generated = inference_cycles(done.result)
                validated = done.result.model["validated"]
                print(f"| {name} | {board} | {kit:,.0f} | {generated:,.0f} | {generated / kit:.4f} | "
                      f"{'yes' if generated == kit else 'NO'} | {'yes' if validated else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
