"""What mcu-d's SRAM model (SRAM1/SRAM2 through the L1 data cache) costs in host time, side by
side in one process.

    python benchmarks/sram_cost.py [--repeat 5] [--program bench ...]

Alternates three boards on the same ELF: mcu-d without RAM behind its data cache (no memory
hook on RAM), mcu-d as shipped (a native hook on every SRAM1/SRAM2 access: on the kit's
firmware the stack, its data being in DTCM), and a worst case with DTCM put behind the cache
too (every RAM data access through the hook, as for firmware whose data all lives in SRAM1);
and that worst case again with a hook that does nothing, which separates Unicorn's dispatch of
a memory hook from the model's own work. Prints the medians and the ratios to the first.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numba

import mcusim
from mcusim.config import load_board
from mcusim.machine import native as N

ROOT = Path(__file__).resolve().parents[1]


def with_ram_ranges(board, ranges: tuple[str, ...]):
    ports = tuple(dataclasses.replace(port, ram_ranges=ranges) if port.ram_ranges else port
                  for port in board.flash_ports)
    return dataclasses.replace(board, flash_ports=ports)


@numba.cfunc(N.MEMORY_HOOK_SIGNATURE)
def empty_hook(uc, access, address, size, value, user_data):
    """Unicorn calls it like the RAM model's hook; it does nothing."""


def timed(elf: Path, board, hook) -> float:
    N.ram_access_hook = hook  # register_ram_access_hook registers whatever this names
    started = time.perf_counter()
    mcusim.run(elf, board)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    shipped = load_board("mcu-d")
    everything = with_ram_ranges(shipped, ("dtcm",) + shipped.flash_ports[0].ram_ranges)
    model = N.ram_access_hook
    variants = {"no SRAM model": (with_ram_ranges(shipped, ()), model), "shipped": (shipped, model),
                "all RAM cached": (everything, model), "all RAM, empty hook": (everything, empty_hook)}
    print("| program | " + " | ".join(f"{name} s" for name in variants) + " | shipped / none | all / none | "
          "empty hook / none |")
    print("|---|" + "---|" * (len(variants) + 3))
    for program in args.program or ["bench", "bench-dsp", "kws_dscnn-opt", "person_detection-opt"]:
        elf = ROOT / "firmware" / "build" / "mcu-d" / f"{program}.elf"
        times = {name: [] for name in variants}
        for board, hook in variants.values():
            timed(elf, board, hook)  # compiled and warm
        for _ in range(args.repeat):
            for name, (board, hook) in variants.items():
                times[name].append(timed(elf, board, hook))
        none, shipped_s, worst, empty = (statistics.median(times[name]) for name in variants)
        print(f"| {program} | {none:.3f} | {shipped_s:.3f} | {worst:.3f} | {empty:.3f} | {shipped_s / none:.2f}x | "
              f"{worst / none:.2f}x | {empty / none:.2f}x |")
    N.ram_access_hook = model


if __name__ == "__main__":
    main()
