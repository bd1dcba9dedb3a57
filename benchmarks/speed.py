"""Speed of mcusim against plain Unicorn and QEMU on the same ELFs, measured side by side.

    python benchmarks/speed.py [--repeat 5] [--board mps2-an386 ...] [--program bench ...]

Workloads (firmware/): bench (CRC-32 and int8 dot products), bench-dsp (an SMLAD loop),
bench-table (a constant table walk in flash), bench-float (an FP multiply/divide loop).

Plain Unicorn runs the image with no hooks but the one that catches the final semihosting
exit; QEMU is timed as a whole process (start-up included). The machines here are shared
and noisy, so only ratios from one run are reported (median of --repeat alternating runs).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from unicorn import UC_ARCH_ARM, UC_HOOK_INTR, UC_MODE_MCLASS, UC_MODE_THUMB, UC_PROT_ALL, Uc
from unicorn import arm_const as A

import mcusim
from mcusim.config import load_board
from mcusim.elf import ElfImage

ROOT = Path(__file__).resolve().parents[1]
SEMIHOSTING_EXITS = (0x18, 0x20)  # SYS_EXIT, SYS_EXIT_EXTENDED (Arm semihosting specification)
# The Cortex-M7 model against the Cortex-M4 model on the same kind of board (the goal: within 2x).
CORE_PAIRS = (("mps2-an500", "mps2-an386"), ("mcu-d", "mcu-m"))


def plain_unicorn_seconds(elf: Path, board_name: str) -> float | None:
    """Wall time of Unicorn alone running the image to its semihosting exit (None when the
    image makes another semihosting call first, e.g. to print: plain Unicorn stops there)."""
    board = load_board(board_name)
    image = ElfImage.load(elf)
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(getattr(A, board.core.unicorn_cpu_model))
    for region in board.memory:
        if region.alias_of is None:
            uc.mem_map(region.base, region.size_bytes, UC_PROT_ALL)
    uc.mem_map(0xE0000000, 0x100000, UC_PROT_ALL)  # SCS as plain memory: startup writes CPACR
    for segment in image.segments:
        if segment.data:
            uc.mem_write(segment.paddr, segment.data)
    vectors = min(s.paddr for s in image.segments if s.executable)
    sp = int.from_bytes(uc.mem_read(vectors, 4), "little")
    pc = int.from_bytes(uc.mem_read(vectors + 4, 4), "little")
    uc.reg_write(A.UC_ARM_REG_SP, sp)
    uc.hook_add(UC_HOOK_INTR, lambda u, intno, _: u.emu_stop())
    started = time.perf_counter()
    uc.emu_start(pc, 0xFFFFFFFF)
    seconds = time.perf_counter() - started
    return seconds if uc.reg_read(A.UC_ARM_REG_R0) in SEMIHOSTING_EXITS else None


def mcusim_seconds(elf: Path, board: str) -> tuple[float, int]:
    result = mcusim.run(elf, board)
    assert result.exit_code == 0, result.exit_detail
    return result.host_seconds, result.instructions


def qemu_seconds(elf: Path, board: str) -> float | None:
    qemu = shutil.which("qemu-system-arm")
    if qemu is None or not board.startswith("mps2"):
        return None
    started = time.perf_counter()
    subprocess.run([qemu, "-M", board, "-nographic", "-semihosting-config", "enable=on,target=native", "-kernel",
                    str(elf)], check=True, capture_output=True, timeout=120)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--board", action="append", default=None)
    parser.add_argument("--program", action="append", default=None)
    args = parser.parse_args()
    boards = args.board or ["mps2-an386", "mcu-m", "mcu-d"]
    programs = args.program or ["bench", "bench-dsp", "bench-table", "bench-float"]
    subprocess.run(["make", "-C", str(ROOT / "firmware"), "-s", f"PROGRAMS={' '.join(programs)}"], check=True)
    print("| board | program | instructions | mcusim s | plain Unicorn s | QEMU s | mcusim / Unicorn | "
          "mcusim / QEMU | mcusim MIPS |")
    print("|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for board, program in [(b, p) for b in boards for p in programs]:
        elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
        mcusim_seconds(elf, board)  # warm-up: numba cache, Unicorn translation
        ours, plain, qemu = [], [], []
        instructions = 0
        for _ in range(args.repeat):
            seconds, instructions = mcusim_seconds(elf, board)
            ours.append(seconds)
            if board.startswith("mps2") and (p := plain_unicorn_seconds(elf, board)) is not None:
                plain.append(p)
            q = qemu_seconds(elf, board)
            if q is not None:
                qemu.append(q)
        m = medians[board, program] = statistics.median(ours)
        u = statistics.median(plain) if plain else None
        q = statistics.median(qemu) if qemu else None
        fmt = lambda x: f"{x:.3f}" if x is not None else "n/a"  # noqa: E731
        ratio = lambda a, b: f"{a / b:.2f}x" if b else "n/a"  # noqa: E731
        print(f"| {board} | {program} | {instructions:,} | {fmt(m)} | {fmt(u)} | {fmt(q)} | {ratio(m, u)} | "
              f"{ratio(m, q)} | {instructions / m / 1e6:.0f} |")
    for m7, m4 in CORE_PAIRS:
        shown = [f"{program} {medians[m7, program] / medians[m4, program]:.2f}x" for program in programs
                 if (m7, program) in medians and (m4, program) in medians]
        if shown:
            print(f"\n{m7} / {m4} (Cortex-M7 model / Cortex-M4 model): " + ", ".join(shown))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
