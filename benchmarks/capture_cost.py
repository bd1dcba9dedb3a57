"""What the captures cost in host time, measured side by side with plain runs in one process.

    python benchmarks/capture_cost.py [--repeat 5] [--board mcu-m] [--program bench ...]

For each program: the median host seconds of a plain run and of a run with the exact
function profile (profile=True), alternating, and the ratio. Simulated cycles are the same
either way (checked).
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mcusim

ROOT = Path(__file__).resolve().parents[1]


def timed(elf: Path, board: str, profile: bool) -> tuple[float, int]:
    started = time.perf_counter()
    result = mcusim.run(elf, board, profile=profile)
    return time.perf_counter() - started, result.cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", default="mcu-m")
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    programs = args.program or ["bench", "bench-dsp", "bench-table", "kws_dscnn-opt"]
    print(f"| board | program | plain s | --profile s | ratio |")
    print("|---|---|---|---|---|")
    for program in programs:
        elf = ROOT / "firmware" / "build" / args.board / f"{program}.elf"
        plain, profiled = [], []
        for _ in range(args.repeat):
            seconds, cycles = timed(elf, args.board, False)
            plain.append(seconds)
            seconds, profiled_cycles = timed(elf, args.board, True)
            profiled.append(seconds)
            if profiled_cycles != cycles:
                raise SystemExit(f"{program}: profiling changed the cycle count")
        a, b = statistics.median(plain), statistics.median(profiled)
        print(f"| {args.board} | {program} | {a:.3f} | {b:.3f} | {b / a:.2f}x |")


if __name__ == "__main__":
    main()
