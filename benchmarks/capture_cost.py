"""What the captures cost in host time, measured side by side with plain runs in one process.

    python benchmarks/capture_cost.py [--repeat 5] [--board mcu-m] [--program bench ...]

For each program: the median host seconds of a plain run and of a run with each capture
(the exact profile with its call tree and line counters, PC sampling every 1000 cycles, the
branch trace, the SWO stream, VCD signals, the memory traffic, everything at once), alternating, and their
ratios to the plain run. Each run includes what the capture computes at its end (a bundle
is not written). Simulated cycles are the same every way (checked).
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mcusim

ROOT = Path(__file__).resolve().parents[1]


CAPTURES = {"plain": {}, "--profile": {"profile": True}, "--pc-sample-cycles 1000": {"pc_sample_cycles": 1000},
            "--branch-trace": {"branch_trace": True}, "--swo": {"swo": True}, "--vcd": {"vcd": True},
            "--memory-traffic": {"memory_traffic": True},
            "--all": {"profile": True, "flamegraph": True, "pc_sample_cycles": 1000, "timeline": True, "swo": True,
                      "vcd": True, "branch_trace": True}}


def timed(elf: Path, board: str, options: dict) -> tuple[float, int]:
    started = time.perf_counter()
    result = mcusim.run(elf, board, **options)
    return time.perf_counter() - started, result.cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", default="mcu-m")
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    programs = args.program or ["bench", "bench-dsp", "bench-table", "kws_dscnn-opt"]
    print("| board | program | plain s | " + " | ".join(f"{name} s (ratio)" for name in list(CAPTURES)[1:]) + " |")
    print("|---" * (2 + len(CAPTURES)) + "|")
    for program in programs:
        elf = ROOT / "firmware" / "build" / args.board / f"{program}.elf"
        seconds = {name: [] for name in CAPTURES}
        for _ in range(args.repeat):
            cycles = set()
            for name, options in CAPTURES.items():
                took, ran = timed(elf, args.board, options)
                seconds[name].append(took)
                cycles.add(ran)
            if len(cycles) != 1:
                raise SystemExit(f"{program}: a capture changed the cycle count")
        medians = {name: statistics.median(values) for name, values in seconds.items()}
        plain = medians["plain"]
        print(f"| {args.board} | {program} | {plain:.3f} | "
              + " | ".join(f"{medians[name]:.3f} ({medians[name] / plain:.2f}x)" for name in list(CAPTURES)[1:]) + " |")


if __name__ == "__main__":
    main()
