"""Two mcusim source trees side by side on the same firmware: host seconds of each run,
alternating so both see the same machine load, and whether they simulated the same cycles.

    git worktree add /tmp/base <commit>
    python benchmarks/compare_trees.py --base /tmp/base [--new .] [--repeat 3] [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --cycles [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --decode [--prepared] [--repeat 5] [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --start [--repeat 9] [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --build [--repeat 20] [--workloads B:ELF,...]
    python benchmarks/compare_trees.py --base /tmp/base --in-process [--repeat 3] [--workloads B:ELF,...]

Each run is a fresh process (`Simulator(elf, board).run()`, the numba cache warmed by a first,
untimed run of each tree); the table gives the fastest of `--repeat` runs per tree and the
ratio new / base. The default workloads are the kit's speed programs (firmware/build, `make`).
With --cycles each tree runs each workload once and the table compares what they simulated
(cycles, data wait cycles), to measure what a change of the timing model changes. With --decode
each run decodes its code the first time (the decode store off, `MCUSIM_DECODE_CACHE=off`), and
the table gives host microseconds per instruction decoded (time in Decoder.decode_block and
Decoder.start_prefix, a dual-issue core's schedule of a block's start at a mid-block stop, which
where_time_goes.py and speed.py count as decoding too, over the instructions decoded), the median
and range of `--repeat` fresh processes per tree: decoding new code is first-run work, so it is
measured in first runs ("same cycles": every run of both).
With --prepared each run starts from a copy of a decode store its tree's `mcusim prepare` filled
(the bundled examples' register patterns and, where a tree makes one, the table of 16-bit
encodings), as a first run of new firmware after scripts/setup.sh does. With --start each run is
a fresh `mcusim run ELF --board B --max-cycles 1` process (imports, the simulator, its first
block: benchmarks/speed.py's warm start, the caches filled by a first untimed run of each tree),
and the table gives its wall time, the median and range of `--repeat`. With --build one process
per tree builds a Simulator and runs it `--repeat` times one after another (as a sweep, or a
profiler using mcusim as its backend, does), and the table gives the seconds each build took
(`Simulator(elf, board)`), the median and the largest, the first left out (it loads the code);
the two processes run one after the other, not alternating, so run it twice. With --in-process
a process of each tree runs one workload INPROCESS_RUNS times after two untimed runs, as
speed.py's 2x and vendor tables do, and gives the median RunResult.host_seconds (the run) and the
median of what Simulator.run took after it (its wall time less the run: the result's collection,
run.json's memory scan among it, and the decode store's save); `--repeat` such processes per tree
and workload, alternating, and the table gives the median of their medians.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["mps2-an386:coremark-like", "mcu-m:coremark-like", "mcu-d:dhrystone-like", "mcu-s:micro_speech-opt",
           "mcu-d:person_detection-opt"]
RUN = ("import sys, time; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.api import Simulator; "
       "s = Simulator(sys.argv[2], sys.argv[3]); t = time.perf_counter(); r = s.run(); "
       "print(time.perf_counter() - t, r.cycles, r.stalls['data_wait'], r.exit_code)")
DECODE = ("import sys, time; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.api import Simulator; "
          "from mcusim.timing.decoder import Decoder; spent = [0.0]\n"
          "def timed(method):\n def run(*args):\n  t = time.perf_counter()\n  try: return method(*args)\n"
          "  finally: spent[0] += time.perf_counter() - t\n return run\n"
          "for name in ('decode_block', 'start_prefix'):\n"
          " if hasattr(Decoder, name): setattr(Decoder, name, timed(getattr(Decoder, name)))\n"
          "s = Simulator(sys.argv[2], sys.argv[3]); r = s.run(); "
          "print(spent[0] / s.machine.decoder.instructions_decoded * 1e6, r.cycles)")


def workload_elfs(workloads: list[str]):
    """(board, program, its ELF in firmware/build) of each BOARD:PROGRAM workload."""
    for workload in workloads:
        board, program = workload.split(":")
        yield board, program, ROOT / "firmware" / "build" / board / f"{program}.elf"


def child(script: str, tree: Path, elf: Path, board: str, *args: str, env: dict | None = None) -> str:
    """What `script` printed, run in a fresh process on `tree`'s sources with (elf, board, *args);
    this process ends with its error if it failed."""
    done = subprocess.run([sys.executable, "-c", script, str(tree), str(elf), board, *args], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{tree}: {board} {elf.name} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def run(tree: Path, elf: Path, board: str) -> tuple[float, int, int]:
    """(host seconds, cycles, data wait cycles) of one run in a fresh process."""
    seconds, cycles, data_wait, _ = child(RUN, tree, elf, board).split()
    return float(seconds), int(cycles), int(data_wait)


PREPARE = ("import sys; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.prepare import describe_patterns; "
           "describe_patterns(lambda line: None)")


def decode_us(tree: Path, elf: Path, board: str, prepared: Path | None = None) -> tuple[float, int]:
    """(host us per instruction decoded, cycles) of a first run in a fresh process: no decode store,
    or a copy of `prepared` (a store `mcusim prepare` filled) of its own."""
    with tempfile.TemporaryDirectory(prefix="decode-") as store:
        if prepared is not None:
            shutil.copytree(prepared, store, dirs_exist_ok=True)
        us, cycles = child(DECODE, tree, elf, board,
                           env={**os.environ, "MCUSIM_DECODE_CACHE": store if prepared else "off"}).split()
    return float(us), int(cycles)


def prepared_store(tree: Path, folder: str) -> Path:
    """A decode store in `folder` with what `tree`'s `mcusim prepare` describes of the bundled
    examples (register patterns, the table of 16-bit encodings)."""
    subprocess.run([sys.executable, "-c", PREPARE, str(tree)], check=True, capture_output=True,
                   env={**os.environ, "MCUSIM_DECODE_CACHE": folder})
    return Path(folder)


def alternate(trees: dict[str, Path], repeat: int, measure) -> tuple[dict[str, list], set]:
    """`repeat` rounds of `measure(name, tree)` -> (a value, the cycles its runs simulated), each
    tree in turn so that both see the same machine load: each tree's values, and every cycle
    count seen (one when the trees and their runs all simulated the same)."""
    found = {name: [] for name in trees}
    cycles = set()
    for _ in range(repeat):
        for name, tree in trees.items():
            value, simulated = measure(name, tree)
            found[name].append(value)
            cycles.update(simulated)
    return found, cycles


def compare_decode(trees: dict[str, Path], workloads: list[str], repeat: int, prepared: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="prepared-") as folder:
        stores = {name: prepared_store(tree, f"{folder}/{name}") if prepared else None for name, tree in trees.items()}
        _compare_decode(trees, workloads, repeat, stores)


def _compare_decode(trees: dict[str, Path], workloads: list[str], repeat: int, stores: dict) -> None:
    print("| board | program | base us/instruction, median (range) | new | new / base | same cycles |")
    print("|---|---|---|---|---|---|")
    for board, program, elf in workload_elfs(workloads):
        for name, tree in trees.items():
            decode_us(tree, elf, board, stores[name])  # warm the numba cache
        def measure(name, tree):
            us, simulated = decode_us(tree, elf, board, stores[name])
            return us, (simulated,)

        found, cycles = alternate(trees, repeat, measure)
        base, new = (statistics.median(found[name]) for name in trees)
        base_range, new_range = (f"({min(found[name]):.1f}-{max(found[name]):.1f})" for name in trees)
        print(f"| {board} | {program} | {base:.1f} {base_range} | {new:.1f} {new_range} | {new / base:.2f} | "
              f"{'yes' if len(cycles) == 1 else 'NO'} |", flush=True)


START = ("import sys; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.launch import main; "
         "sys.argv = ['mcusim'] + sys.argv[2:]; main()")
CYCLE_LIMIT_EXIT = 124  # `mcusim run` ended by --max-cycles


def start_seconds(tree: Path, elf: Path, board: str) -> float:
    """Wall time of a fresh `mcusim run ELF --board B --max-cycles 1` process of `tree`. Python may
    write its .pyc files (as an installed package has them: PYTHONDONTWRITEBYTECODE, which some
    machines set, would make every start compile the sources changed since they were written)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", START, str(tree), "run", str(elf), "--board", board,
                           "--max-cycles", "1"], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != CYCLE_LIMIT_EXIT:
        sys.exit(f"{tree}: {board} {elf.name} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def compare_start(trees: dict[str, Path], workloads: list[str], repeat: int) -> None:
    print("| board | program | base s, median (range) | new | new / base |")
    print("|---|---|---|---|---|")
    for board, program, elf in workload_elfs(workloads):
        for tree in trees.values():
            start_seconds(tree, elf, board)  # fill the caches (numba's, the object store, .pyc files)
        found = {name: [] for name in trees}
        for _ in range(repeat):
            for name, tree in trees.items():
                found[name].append(start_seconds(tree, elf, board))
        base, new = (statistics.median(found[name]) for name in trees)
        base_range, new_range = (f"({min(found[name]):.3f}-{max(found[name]):.3f})" for name in trees)
        print(f"| {board} | {program} | {base:.3f} {base_range} | {new:.3f} {new_range} | {new / base:.2f} |",
              flush=True)


INPROCESS_RUNS = 7
IN_PROCESS = ("import sys, time, json, statistics; sys.path.insert(0, sys.argv[1] + '/src'); "
              "from mcusim.api import Simulator\n"
              "runs, collects, cycles = [], [], set()\n"
              "for k in range(2 + int(sys.argv[4])):\n"
              " s = Simulator(sys.argv[2], sys.argv[3]); t = time.perf_counter(); r = s.run()\n"
              " wall = time.perf_counter() - t; cycles.add(r.cycles)\n"
              " if k >= 2: runs.append(r.host_seconds); collects.append(wall - r.host_seconds)\n"
              "print(json.dumps([statistics.median(runs), statistics.median(collects), sorted(cycles)]))")


def compare_in_process(trees: dict[str, Path], workloads: list[str], repeat: int) -> None:
    print("| board | program | base run s | new run s | new / base | base collect s | new collect s | same cycles |")
    print("|---|---|---|---|---|---|---|---|")
    for board, program, elf in workload_elfs(workloads):
        def measure(name, tree):
            run_s, collect_s, simulated = json.loads(
                child(IN_PROCESS, tree, elf, board, str(INPROCESS_RUNS)).strip().splitlines()[-1])
            return (run_s, collect_s), simulated

        found, cycles = alternate(trees, repeat, measure)
        (base, base_collect), (new, new_collect) = (
            (statistics.median(r for r, _ in found[name]), statistics.median(c for _, c in found[name]))
            for name in trees)
        print(f"| {board} | {program} | {base:.4f} | {new:.4f} | {new / base:.3f} | {base_collect:.4f} | "
              f"{new_collect:.4f} | {'yes' if len(cycles) == 1 else 'NO'} |", flush=True)


BUILD = ("import sys, time; sys.path.insert(0, sys.argv[1] + '/src'); from mcusim.api import Simulator\n"
         "for _ in range(int(sys.argv[4])):\n t = time.perf_counter(); s = Simulator(sys.argv[2], sys.argv[3])\n"
         " print(time.perf_counter() - t); s.run()")


def compare_build(trees: dict[str, Path], workloads: list[str], repeat: int) -> None:
    print("| board | program | base s, median (largest) | new | new / base, medians |")
    print("|---|---|---|---|---|")
    for board, program, elf in workload_elfs(workloads):
        found = {}
        for name, tree in trees.items():
            found[name] = [float(line) for line in child(BUILD, tree, elf, board, str(repeat + 1)).split()[1:]]
        base, new = (statistics.median(found[name]) for name in trees)
        base_most, new_most = (f"({max(found[name]):.4f})" for name in trees)
        print(f"| {board} | {program} | {base:.4f} {base_most} | {new:.4f} {new_most} | {new / base:.2f} |", flush=True)


def compare_cycles(trees: dict[str, Path], workloads: list[str]) -> None:
    print("| board | program | base cycles | new cycles | new - base | (new - base) / base | base data wait "
          "| new data wait |")
    print("|---|---|---|---|---|---|---|---|")
    for board, program, elf in workload_elfs(workloads):
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
    parser.add_argument("--decode", action="store_true",
                        help="compare host us per instruction decoded in first runs (the decode store off)")
    parser.add_argument("--prepared", action="store_true",
                        help="with --decode: first runs with a decode store each tree's `mcusim prepare` filled "
                             "(copied afresh for every run), not none")
    parser.add_argument("--start", action="store_true",
                        help="compare the wall time of fresh `mcusim run --max-cycles 1` processes (warm start)")
    parser.add_argument("--build", action="store_true",
                        help="compare the seconds of building a Simulator again and again in one process")
    parser.add_argument("--in-process", action="store_true",
                        help=f"compare runs after two untimed ones in one process ({INPROCESS_RUNS} a process, "
                             "as speed.py's tables): the run's host seconds and its result's collection")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "new": args.new.resolve()}
    if args.in_process:
        compare_in_process(trees, args.workloads.split(","), args.repeat)
        return
    if args.build:
        compare_build(trees, args.workloads.split(","), args.repeat)
        return
    if args.start:
        compare_start(trees, args.workloads.split(","), args.repeat)
        return
    if args.decode:
        compare_decode(trees, args.workloads.split(","), args.repeat, args.prepared)
        return
    if args.cycles:
        compare_cycles(trees, args.workloads.split(","))
        return
    print("| board | program | base s | new s | new / base | same cycles |")
    print("|---|---|---|---|---|---|")
    for board, program, elf in workload_elfs(args.workloads.split(",")):
        for tree in trees.values():
            run(tree, elf, board)  # warm the numba cache
        def measure(name, tree):
            seconds, simulated, _ = run(tree, elf, board)
            return seconds, (simulated,)

        found, cycles = alternate(trees, args.repeat, measure)
        best = {name: min(found[name]) for name in trees}
        print(f"| {board} | {program} | {best['base']:.3f} | {best['new']:.3f} | {best['new'] / best['base']:.3f} | "
              f"{'yes' if len(cycles) == 1 else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
