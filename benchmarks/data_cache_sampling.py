"""What the sampled data cache (`--data-cache sampled`, the default) gains and what it costs in
accuracy: each workload on a board with RAM behind a data cache (mcu-d) run with
`--data-cache exact` and with `sampled`, side by side.

    python benchmarks/data_cache_sampling.py [--repeat 3] [--board mcu-d] [--program coremark-like ...]

Each run is a fresh process (`Simulator(elf, board, data_cache=...).run()`, host time of the run
as RunResult.host_seconds counts it; the numba cache warmed first), the two modes alternating so
both see the same machine load; the table gives the fastest of `--repeat` per mode, the ratio
sampled / exact, and what the sampled run simulated against the exact one: cycles, data wait,
the share of cycles run without the cached-RAM hook and the wait estimated there, and whether
the firmware's output and exit code were the same. The default workloads are the kit's speed
programs and models (firmware/build, `make`), and cached-ram (a steady sweep over SRAM1).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ["bench", "bench-dsp", "bench-table", "bench-float", "coremark-like", "dhrystone-like", "large-startup",
            "printf-uart", "micro_speech-opt", "kws_dscnn-opt", "person_detection-opt", "cached-ram"]
RUN = ("import sys, json, zlib; sys.path.insert(0, sys.argv[1]); from mcusim.api import Simulator; "
       "r = Simulator(sys.argv[2], sys.argv[3], data_cache=sys.argv[4]).run(); "
       "out = zlib.crc32((r.stdout + repr(sorted(r.uart.items()))).encode()); "
       "print(json.dumps([r.host_seconds, r.cycles, r.stalls['data_wait'], out, r.exit_code, r.dcache]))")


def run(elf: Path, board: str, mode: str) -> list:
    """[host seconds, cycles, data wait, output digest, exit code, dcache] of one fresh run."""
    done = subprocess.run([sys.executable, "-c", RUN, str(ROOT / "src"), str(elf), board, mode],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{board} {elf.name} ({mode}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--board", default="mcu-d")
    parser.add_argument("--program", action="append", default=None, help="a workload (default: all)")
    args = parser.parse_args()
    print("| program | exact s | sampled s | sampled / exact | exact cycles | sampled - exact | error "
          "| exact data wait | sampled data wait | untimed share | estimated wait | same output |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for program in args.program or PROGRAMS:
        elf = ROOT / "firmware" / "build" / args.board / f"{program}.elf"
        runs = {mode: run(elf, args.board, mode) for mode in ("exact", "sampled")}  # (warms the numba cache)
        best = {mode: runs[mode][0] for mode in runs}
        for _ in range(args.repeat):
            for mode in runs:
                best[mode] = min(best[mode], run(elf, args.board, mode)[0])
        (_, exact, exact_wait, exact_out, exact_code, _), (_, sampled, sampled_wait, out, code, dcache) = runs.values()
        untimed = dcache.get("untimed_cycles", 0)
        print(f"| {program} | {best['exact']:.3f} | {best['sampled']:.3f} | {best['sampled'] / best['exact']:.2f} | "
              f"{exact:,} | {sampled - exact:+,} | {(sampled - exact) / exact:+.4%} | {exact_wait:,} | "
              f"{sampled_wait:,} | {untimed / sampled:.0%} | {dcache.get('estimated_wait_cycles', 0):,} | "
              f"{'yes' if (out, code) == (exact_out, exact_code) else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
