"""What mcu-d's SRAM model (SRAM1/SRAM2 through the L1 data cache) costs in host time, side by
side in one process.

    python benchmarks/sram_cost.py [--repeat 5] [--program bench ...]

Alternates three boards on the same ELF: mcu-d without RAM behind its data cache (plain RAM),
mcu-d as shipped (every SRAM1/SRAM2 load and store through the RAM's MMIO alias, whose native
callbacks time it: machine/cached_ram.py; on the kit's firmware the stack, its data being in
DTCM), and a worst case with DTCM put behind the cache too (every RAM data access through the
alias, as for firmware whose data all lives in SRAM1); and that worst case again with callbacks
that only read and write, which separates Unicorn's MMIO dispatch from the model's own work.
Prints the medians and the ratios to the first.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numba
import numpy as np

import mcusim
from mcusim.config import load_board
from mcusim.machine import native as N
from mcusim.machine.native import hooks
from mcusim.machine.native.numba_names import _pointer

ROOT = Path(__file__).resolve().parents[1]


def with_ram_ranges(board, ranges: tuple[str, ...]):
    ports = tuple(dataclasses.replace(port, ram_ranges=ranges) if port.ram_ranges else port
                  for port in board.flash_ports)
    return dataclasses.replace(board, flash_ports=ports)


@numba.cfunc(N.MMIO_READ_SIGNATURE)
def untimed_read(uc, offset, size, user_data):
    """Reads as the RAM alias's read callback does; times nothing."""
    run = numba.carray(user_data, (N.RAM_RUN,), np.int64)
    data = numba.carray(_pointer(run[N.RR_BYTES] + np.int64(offset)), (np.int64(size),), np.uint8)
    value = np.uint64(0)
    for i in range(np.int64(size)):
        value |= np.uint64(data[i]) << np.uint64(8 * i)
    return value


@numba.cfunc(N.MMIO_WRITE_SIGNATURE)
def untimed_write(uc, offset, size, value, user_data):
    """Writes as the RAM alias's write callback does; times nothing."""
    run = numba.carray(user_data, (N.RAM_RUN,), np.int64)
    data = numba.carray(_pointer(run[N.RR_BYTES] + np.int64(offset)), (np.int64(size),), np.uint8)
    for i in range(np.int64(size)):
        data[i] = np.uint8((value >> np.uint64(8 * i)) & np.uint64(0xFF))


def timed(elf: Path, board, callbacks) -> float:
    hooks.cached_ram_read, hooks.cached_ram_write = callbacks  # (cached_ram.CachedRam maps what these name)
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
    model = hooks.cached_ram_read, hooks.cached_ram_write
    untimed = untimed_read, untimed_write
    variants = {"no SRAM model": (with_ram_ranges(shipped, ()), model), "shipped": (shipped, model),
                "all RAM cached": (everything, model), "all RAM, untimed callbacks": (everything, untimed)}
    print("| program | " + " | ".join(f"{name} s" for name in variants) + " | shipped / none | all / none | "
          "untimed / none |")
    print("|---|" + "---|" * (len(variants) + 3))
    for program in args.program or ["bench", "bench-dsp", "kws_dscnn-opt", "person_detection-opt"]:
        elf = ROOT / "firmware" / "build" / "mcu-d" / f"{program}.elf"
        times = {name: [] for name in variants}
        for board, callbacks in variants.values():
            timed(elf, board, callbacks)  # compiled and warm
        for _ in range(args.repeat):
            for name, (board, callbacks) in variants.items():
                times[name].append(timed(elf, board, callbacks))
        none, shipped_s, worst, empty = (statistics.median(times[name]) for name in variants)
        print(f"| {program} | {none:.3f} | {shipped_s:.3f} | {worst:.3f} | {empty:.3f} | {shipped_s / none:.2f}x | "
              f"{worst / none:.2f}x | {empty / none:.2f}x |")
    hooks.cached_ram_read, hooks.cached_ram_write = model


if __name__ == "__main__":
    main()
