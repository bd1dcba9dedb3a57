"""What the always-on energy accounting costs in host time, side by side in one process.

    python benchmarks/power_cost.py [--repeat 5] [--board mcu-m] [--program bench ...]

Alternates runs with the power model off (power=False: the hook skips its counting) and on
(the default: per-block class counts and energies, snapshots for the trace, the energy
summary at the end) and prints the medians and their ratio.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mcusim

ROOT = Path(__file__).resolve().parents[1]


def timed(elf: Path, board: str, power: bool) -> float:
    started = time.perf_counter()
    mcusim.run(elf, board, power=power)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", action="append")
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    print("| board | program | power off s | power on s | ratio |")
    print("|---|---|---|---|---|")
    for board in args.board or ["mcu-m", "mcu-d"]:
        for program in args.program or ["bench", "bench-dsp", "kws_dscnn-opt", "person_detection-opt"]:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            timed(elf, board, True)  # compiled and warm
            off, on = [], []
            for _ in range(args.repeat):
                off.append(timed(elf, board, False))
                on.append(timed(elf, board, True))
            a, b = statistics.median(off), statistics.median(on)
            print(f"| {board} | {program} | {a:.3f} | {b:.3f} | {b / a:.3f}x |")


if __name__ == "__main__":
    main()
