"""Host time of this mcusim against another checkout of it, side by side.

    git worktree add /tmp/mcusim-old <commit>
    python benchmarks/version_cost.py --old /tmp/mcusim-old [--repeat 5] [--board mcu-m] [--program ...]

Runs the same ELF with the other checkout's code and with this one (captures off; this one
both with its always-on energy accounting and with power=False) in alternating
subprocesses, and prints the median emulation seconds each (RunResult.host_seconds, so
start-up and compilation are left out) and the ratios to the other checkout. This is how
"tracing off costs nothing measurable" is measured.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ("import json, sys, mcusim; kw = json.loads(sys.argv[3]); "
         "print(mcusim.run(sys.argv[1], sys.argv[2], **kw).host_seconds)")


def host_seconds(source: Path, elf: Path, board: str, options: dict) -> float:
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(elf), board, json.dumps(options)], env=env,
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (its src/ is imported)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", default="mcu-m")
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    ways = {"other": (args.old, {}), "this, power off": (ROOT, {"power": False}), "this": (ROOT, {})}
    print("| board | program | other s | this, power off s (ratio) | this s (ratio) |")
    print("|---|---|---|---|---|")
    for program in args.program or ["bench", "kws_dscnn-opt", "person_detection-opt"]:
        elf = ROOT / "firmware" / "build" / args.board / f"{program}.elf"
        for source, options in ways.values():
            host_seconds(source, elf, args.board, options)  # compile and warm the caches
        times = {name: [] for name in ways}
        for _ in range(args.repeat):
            for name, (source, options) in ways.items():
                times[name].append(host_seconds(source, elf, args.board, options))
        m = {name: statistics.median(values) for name, values in times.items()}
        print(f"| {args.board} | {program} | {m['other']:.3f} | {m['this, power off']:.3f} "
              f"({m['this, power off'] / m['other']:.3f}x) | {m['this']:.3f} ({m['this'] / m['other']:.3f}x) |")


if __name__ == "__main__":
    main()
