"""Simulated speed of the paper's four boards against MCU-S, on the kit's workloads.

    python benchmarks/board_ratios.py [--program bench ...]

For each program: simulated time on each board (cycles at the clock the firmware set) and
the throughput ratio against mcu-s, as in Table VI of Zhang et al., "Power-Performance
Characterization of TinyML Systems" (IEEE ICCD 2022), whose measured averages are printed
alongside; and the per-clock ratio (mcu-s cycles over
the board's cycles), which isolates what the core and memory models contribute. The numbers
are simulated cycles, so they do not depend on the host.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import mcusim

ROOT = Path(__file__).resolve().parents[1]
BOARDS = ["mcu-s", "mcu-m", "mcu-b", "mcu-d"]
# Zhang et al. (ICCD 2022) Table VI: average throughput and clock against MCU-S.
PAPER_THROUGHPUT = {"mcu-m": 1.36, "mcu-b": 1.78, "mcu-d": 6.60}
PAPER_CLOCK = {"mcu-m": 1.25, "mcu-b": 1.50, "mcu-d": 3.38}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", action="append")
    args = parser.parse_args()
    programs = args.program or ["bench", "bench-dsp", "bench-table", "bench-float"]
    print("| program | board | cycles | simulated ms | throughput vs mcu-s | per clock vs mcu-s |")
    print("|---|---|---|---|---|---|")
    ratios = {board: [] for board in BOARDS}  # (throughput, per clock) per program
    for program in programs:
        base = None
        for board in BOARDS:
            result = mcusim.run(ROOT / "firmware" / "build" / board / f"{program}.elf", board)
            if result.exit_code != 0:
                raise SystemExit(f"{program} on {board} failed: {result.exit_detail}")
            if base is None:
                base = result
            throughput = base.simulated_seconds / result.simulated_seconds
            per_clock = base.cycles / result.cycles
            ratios[board].append((throughput, per_clock))
            print(f"| {program} | {board} | {result.cycles:,} | {1000 * result.simulated_seconds:.2f} | "
                  f"{throughput:.2f} | {per_clock:.2f} |")
    if len(programs) > 1:
        print(f"| mean of the {len(programs)} programs | " + " | ".join(
            f"{board} {sum(t for t, _ in ratios[board]) / len(programs):.2f} throughput, "
            f"{sum(c for _, c in ratios[board]) / len(programs):.2f} per clock" for board in BOARDS[1:]) + " |")
    print()
    print("Paper Table VI (average over five TinyML applications): throughput vs MCU-S "
          + ", ".join(f"{b} {v:.2f}" for b, v in PAPER_THROUGHPUT.items())
          + "; clock " + ", ".join(f"{b} {v:.2f}" for b, v in PAPER_CLOCK.items())
          + "; so per clock " + ", ".join(f"{b} {PAPER_THROUGHPUT[b] / PAPER_CLOCK[b]:.2f}"
                                         for b in PAPER_THROUGHPUT) + ".")


if __name__ == "__main__":
    main()
