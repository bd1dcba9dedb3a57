"""What a native block hook costs plain Unicorn before it does any work: the floor under
mcusim's per-block cycle model on the MPS2 boards (issue 15's goal there: within 2x of plain
Unicorn).

    PYTHONPATH=src python benchmarks/block_hook_floor.py [--repeat 5] [--board mps2-an386] [--program bench-table ...]

Each program (firmware/build, `make`) runs from reset to its exit four ways, alternating, in
this process: plain Unicorn (speed.py's runner); with a numba cfunc block hook on every address
that returns at once; with one that counts blocks in an int64 buffer (one load and one store, as
the smallest useful hook); and mcusim's full model (`RunResult.host_seconds`, a run after a
warm-up run of the same ELF). Medians of --repeat; the table gives each as a ratio to plain
Unicorn, the blocks the program runs (from the counting hook) and, from one more untimed run,
the share of them that ran right after their own run (a tight loop's block: the block hook's
repeat path, docs/machine.md), and from mcusim's last run the share it held (only counted, by
the block hook's front: machine/native/held_repeats.py, held_front.py).
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
from pathlib import Path

import numpy as np
from numba import carray, cfunc, types
from unicorn import UC_HOOK_BLOCK, UcError
from unicorn.unicorn_py3.unicorn import uclib

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed  # noqa: E402

from mcusim.api import Simulator  # noqa: E402
from mcusim.machine import native as N  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIGNATURE = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)


@cfunc(SIGNATURE)
def empty_hook(uc, address, size, user_data):
    return


@cfunc(SIGNATURE)
def counting_hook(uc, address, size, user_data):
    counter = carray(user_data, (1,), np.int64)
    counter[0] += 1


@cfunc(SIGNATURE)
def repeats_hook(uc, address, size, user_data):
    counts = carray(user_data, (3,), np.int64)  # blocks, those right after their own run, the last
    counts[0] += 1
    if counts[2] == np.int64(address):
        counts[1] += 1
    counts[2] = np.int64(address)


def with_hook(function, buffer: np.ndarray):
    """A `prepare` for speed.plain_unicorn: register `function` on every block, `buffer` its data."""
    def prepare(uc):
        handle = ctypes.c_size_t()
        status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_BLOCK, ctypes.c_void_p(function.address),
                                   ctypes.c_void_p(buffer.ctypes.data), ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status != 0:
            raise UcError(status)
    return prepare


def measure(elf: Path, board: str, repeat: int) -> dict[str, float | int]:
    counter = np.zeros(1, np.int64)
    ways = {"plain": None, "empty hook": with_hook(empty_hook, counter),
            "counting hook": with_hook(counting_hook, counter)}
    Simulator(str(elf), board).run()  # (warm-up: the decode store and numba's cache)
    times: dict[str, list[float]] = {name: [] for name in [*ways, "mcusim"]}
    blocks = 0
    for _ in range(repeat):
        for name, prepare in ways.items():
            counter[0] = 0
            done = speed.plain_unicorn(elf, board, prepare=prepare)
            if done is None:
                sys.exit(f"{elf}: plain Unicorn cannot run it")
            times[name].append(done[0])
            blocks = max(blocks, int(counter[0]))
        sim = Simulator(str(elf), board)
        times["mcusim"].append(sim.run().host_seconds)
        held = int(sim.machine.state[N.HELD_TOTAL])
    repeats = np.array([0, 0, -1], np.int64)
    speed.plain_unicorn(elf, board, prepare=with_hook(repeats_hook, repeats))
    return {"blocks": blocks, "repeats": repeats[1] / max(repeats[0], 1), "held": held / max(blocks, 1),
            **{name: statistics.median(values) for name, values in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", action="append", choices=["mps2-an386", "mps2-an500"])
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    boards = args.board or ["mps2-an386", "mps2-an500"]
    programs = args.program or ["bench", "bench-table", "coremark-like", "dhrystone-like"]
    print("| board | program | blocks | run right after themselves | held | plain Unicorn s | empty hook / plain "
          "| counting hook / plain | mcusim / plain | mcusim ns per block over plain |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for board in boards:
        for program in programs:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            if not elf.exists():
                sys.exit(f"{elf} is missing: build the firmware first (make -C firmware)")
            m = measure(elf, board, args.repeat)
            plain = m["plain"]
            print(f"| {board} | {program} | {m['blocks']:,} | {100 * m['repeats']:.2f} % | {100 * m['held']:.2f} % "
                  f"| {plain:.3f} "
                  f"| {m['empty hook'] / plain:.2f}x "
                  f"| {m['counting hook'] / plain:.2f}x | {m['mcusim'] / plain:.2f}x "
                  f"| {1e9 * (m['mcusim'] - plain) / m['blocks']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
