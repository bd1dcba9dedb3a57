"""What sampled data timing (`--data-timing sampled`, the default) gains and what it costs in
accuracy: each workload run with `--data-timing exact` and with `sampled`, side by side, on the
boards where something is sampled (mcu-s, mcu-m, mcu-b: flash data pages and the fetch model,
on mcu-b through one cache for both; mcu-d: its AXIM flash data pages and fetches and the RAM
behind the L1 data cache).

    python benchmarks/data_sampling.py [--repeat 3] [--board mcu-m ...] [--program kws_dscnn-opt ...]

Each run is a fresh process (`Simulator(elf, board, data_timing=...).run()`, host time of the
run as RunResult.host_seconds counts it; the numba cache warmed first), the two modes alternating
so both see the same machine load; the table gives the fastest of `--repeat` per mode, the ratio
sampled / exact, and what the sampled run simulated against the exact one: cycles, data wait,
instruction-fetch wait (contention included), energy, the marked region (a TinyML layer) whose mean cycles moved most, the share of cycles
run between windows, the windows, and whether the firmware's output and exit code were the
same. The default workloads are the kit's speed programs and models (firmware/build, `make`),
and on mcu-d cached-ram (a steady sweep over SRAM1).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOARDS = ["mcu-s", "mcu-m", "mcu-b", "mcu-d"]
PROGRAMS = ["bench", "bench-dsp", "bench-table", "bench-float", "coremark-like", "dhrystone-like", "large-startup",
            "printf-uart", "micro_speech-opt", "kws_dscnn-opt", "person_detection-opt", "resnet8-opt",
            "anomaly_ae-opt", "cached-ram"]
RUN = ("import sys, json, zlib; sys.path.insert(0, sys.argv[1]); from mcusim.api import Simulator; "
       "r = Simulator(sys.argv[2], sys.argv[3], data_timing=sys.argv[4]).run(); "
       "out = zlib.crc32((r.stdout + repr(sorted(r.uart.items()))).encode()); "
       "print(json.dumps([r.host_seconds, r.cycles, r.stalls['data_wait'], out, r.exit_code, r.sampled_data, "
       "(r.energy or {}).get('energy_j', 0), {row['name']: row['cycles_mean'] for row in r.regions}, "
       "r.stalls['fetch_wait'] + r.stalls['contention']]))")


def run(elf: Path, board: str, mode: str) -> list:
    """[host seconds, cycles, data wait, output digest, exit code, sampled_data, energy, regions,
    fetch wait] of one fresh run."""
    done = subprocess.run([sys.executable, "-c", RUN, str(ROOT / "src"), str(elf), board, mode],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{board} {elf.name} ({mode}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def worst_region(exact: dict, sampled: dict) -> str:
    errors = {name: sampled[name] / cycles - 1 for name, cycles in exact.items() if cycles and name in sampled}
    if not errors:
        return "-"
    name = max(errors, key=lambda n: abs(errors[n]))
    return f"{name} {errors[name]:+.2%} (of {len(errors)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--board", action="append", default=None, help="a board (default: mcu-s, mcu-m, mcu-b, mcu-d)")
    parser.add_argument("--program", action="append", default=None, help="a workload (default: all)")
    args = parser.parse_args()
    print("| board | program | exact s | sampled s | sampled / exact | exact cycles | error | data wait error "
          "| fetch wait error | energy error | worst region | between windows | windows | same output |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for board in args.board or BOARDS:
        for program in args.program or PROGRAMS:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            if not elf.is_file() or program == "cached-ram" and board != "mcu-d" and not args.program:
                continue
            runs = {mode: run(elf, board, mode) for mode in ("exact", "sampled")}  # (warms the numba cache)
            best = {mode: runs[mode][0] for mode in runs}
            for _ in range(args.repeat):
                for mode in runs:
                    best[mode] = min(best[mode], run(elf, board, mode)[0])
            (_, exact, exact_wait, exact_out, exact_code, _, exact_energy, exact_regions, exact_fetch), \
                (_, sampled, sampled_wait, out, code, sampling, energy, regions, fetch) = runs.values()
            untimed = sampling.get("untimed_cycles", 0)
            print(f"| {board} | {program} | {best['exact']:.3f} | {best['sampled']:.3f} | "
                  f"{best['sampled'] / best['exact']:.2f} | {exact:,} | {(sampled - exact) / exact:+.3%} | "
                  f"{(sampled_wait - exact_wait) / max(exact_wait, 1):+.2%} | "
                  f"{(fetch - exact_fetch) / max(exact_fetch, 1):+.2%} | "
                  f"{(energy - exact_energy) / max(exact_energy, 1e-30):+.3%} | {worst_region(exact_regions, regions)} | "
                  f"{untimed / sampled:.0%} | {sampling.get('windows', 0)} | "
                  f"{'yes' if (out, code) == (exact_out, exact_code) else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
