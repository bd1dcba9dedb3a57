"""Two mcusim source trees side by side on the same firmware: host seconds of each run,
alternating so both see the same machine load, and whether they simulated the same cycles.

    git worktree add /tmp/base <commit>
    python benchmarks/compare_trees.py --base /tmp/base [--new .] [--repeat 3] [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --cycles [--workloads B:ELF,...]

Each run is a fresh process (`Simulator(elf, board).run()`, the numba cache warmed by a first,
untimed run of each tree); the table gives the fastest of `--repeat` runs per tree and the
ratio new / base. The default workloads are the kit's speed programs (firmware/build, `make`).
With --cycles each tree runs each workload once and the table compares what they simulated
(cycles, data wait cycles), to measure what a change of the timing model changes.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["mps2-an386:coremark-like", "mcu-m:coremark-like", "mcu-d:dhrystone-like", "mcu-s:micro_speech-opt",
           "mcu-d:person_detection-opt"]
RUN = ("import sys, time; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.api import Simulator; "
       "s = Simulator(sys.argv[2], sys.argv[3]); t = time.perf_counter(); r = s.run(); "
       "print(time.perf_counter() - t, r.cycles, r.stalls['data_wait'], r.exit_code)")


def run(tree: Path, elf: Path, board: str) -> tuple[float, int, int]:
    """(host seconds, cycles, data wait cycles) of one run in a fresh process."""
    done = subprocess.run([sys.executable, "-c", RUN, str(tree), str(elf), board], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{tree}: {board} {elf.name} failed:\n{done.stderr[-2000:]}")
    seconds, cycles, data_wait, _ = done.stdout.split()
    return float(seconds), int(cycles), int(data_wait)


def compare_cycles(trees: dict[str, Path], workloads: list[str]) -> None:
    print("| board | program | base cycles | new cycles | new - base | (new - base) / base | base data wait "
          "| new data wait |")
    print("|---|---|---|---|---|---|---|---|")
    for workload in workloads:
        board, program = workload.split(":")
        elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
        (_, base, base_wait), (_, new, new_wait) = (run(tree, elf, board) for tree in trees.values())
        print(f"| {board} | {program} | {base:,} | {new:,} | {new - base:+,} | {(new - base) / base:+.4%} | "
              f"{base_wait:,} | {new_wait:,} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the source tree to compare against")
    parser.add_argument("--new", type=Path, default=ROOT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(DEFAULT), help="BOARD:PROGRAM,... from firmware/build")
    parser.add_argument("--cycles", action="store_true", help="compare the cycles simulated, not host time")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "new": args.new.resolve()}
    if args.cycles:
        compare_cycles(trees, args.workloads.split(","))
        return
    print("| board | program | base s | new s | new / base | same cycles |")
    print("|---|---|---|---|---|---|")
    for workload in args.workloads.split(","):
        board, program = workload.split(":")
        elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
        for tree in trees.values():
            run(tree, elf, board)  # warm the numba cache
        best = {name: float("inf") for name in trees}
        cycles = {}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                seconds, cycles[name], _ = run(tree, elf, board)
                best[name] = min(best[name], seconds)
        print(f"| {board} | {program} | {best['base']:.3f} | {best['new']:.3f} | {best['new'] / best['base']:.3f} | "
              f"{'yes' if cycles['base'] == cycles['new'] else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
