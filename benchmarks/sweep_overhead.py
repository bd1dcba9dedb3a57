"""What `mcusim sweep` costs over running the same runs one after another, and how it scales from
one worker to two, measured side by side in one process.

    python benchmarks/sweep_overhead.py [--runs-per-worker 8] [--board mcu-m] [--program coremark-like]

The runs are the program on the board at distinct pinned clocks (distinct runs, the same work).
"one after another": each run's own `mcusim run` command (Run.command), in turn, no Dask.
"sweep, 1 worker": sweep.execute on a local cluster of one worker, cluster start-up and the
results included; "sweep, 2 workers": twice the runs on two workers. Prints wall seconds, the
overhead per run and the scaling (runs per second with 2 workers over 1).
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from mcusim import sweep as S

ROOT = Path(__file__).resolve().parents[1]


def spec(board: str, elf: Path, runs: int) -> S.Spec:
    clocks = [8_000_000 + 1_000_000 * i for i in range(runs)]
    return S.build([board], clocks, [], [str(elf)], [], {})


def one_after_another(runs: list[S.Run], folder: Path) -> float:
    started = time.perf_counter()
    for i, run in enumerate(runs):
        subprocess.run(run.command(folder / f"run{i}"), check=True, capture_output=True)
    return time.perf_counter() - started


def swept(the_spec: S.Spec, folder: Path, workers: int) -> float:
    started = time.perf_counter()
    rows = S.execute(the_spec, folder, workers=workers)
    S.write_results(rows, folder)
    assert all(row["exit_code"] == 0 for row in rows), rows
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-worker", type=int, default=8)
    parser.add_argument("--board", default="mcu-m")
    parser.add_argument("--program", default="coremark-like")
    args = parser.parse_args()
    elf = ROOT / "firmware" / "build" / args.board / f"{args.program}.elf"
    n = args.runs_per_worker
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        single, double = spec(args.board, elf, n), spec(args.board, elf, 2 * n)
        subprocess.run(single.runs[0].command(folder / "warm"), check=True, capture_output=True)  # numba cache
        sequential = one_after_another(single.runs, folder / "sequential")
        one = swept(single, folder / "one", 1)
        two = swept(double, folder / "two", 2)
    print(f"| {args.board} {args.program}, {n} runs per worker | seconds | per run |")
    print("|---|---|---|")
    print(f"| one after another ({n} runs) | {sequential:.2f} | {sequential / n:.3f} |")
    print(f"| sweep, 1 worker ({n} runs) | {one:.2f} | {one / n:.3f} |")
    print(f"| sweep, 2 workers ({2 * n} runs) | {two:.2f} | {two / (2 * n):.3f} |")
    print(f"\noverhead of the sweep per run: {100 * (one / sequential - 1):+.1f}% (goal under 10%)")
    print(f"scaling 1 -> 2 workers: {(2 * n / two) / (n / one):.2f}x the runs per second")


if __name__ == "__main__":
    main()
