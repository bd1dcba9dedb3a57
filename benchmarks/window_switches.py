"""What the windows of sampled data timing cost on the host: the time of each switch between
timed and untimed (the flash data pages' reads routed, FlashDataPages.map_plain; mcu-d's cached RAM
routed to its MMIO alias or back, a TLB flush, CachedRam.update; a memory hook change with the
translated code flushed, Machine._apply_hook_changes, if any), and the process's peak memory, against the same program with `--data-timing exact`.

    python benchmarks/window_switches.py [--workload mcu-s:kws_dscnn-opt ...]

Each run is a fresh process (the numba cache warmed by a first run): the table gives the run's
host seconds, its windows, the switches and the milliseconds they took (the first, the last,
the largest, all of them), and the peak resident memory of the process after its one run
(ru_maxrss, Python and the simulator included). Mode `start-only` is `sampled` with no window
after the exact start (the schedule's constants set out of reach in that process): not a mode
to use, as its estimates are those of the start alone, but what the run would cost if windows
cost nothing but their own timed accesses; its cycles are printed to show how far they move.
Why it matters: every switch flushes Unicorn's whole TLB, which QEMU resizes at a flush from
how full it has been; until the sixteenth pass a switch also unmapped and mapped the flash data
pages, and mcu-d's flushed the translated code until the fourteenth (docs/performance.md,
"Twelfth pass", "Fourteenth pass", "Sixteenth pass").
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["mcu-s:kws_dscnn-opt", "mcu-m:printf-uart", "mcu-m:person_detection-opt", "mcu-d:person_detection-opt"]
CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from mcusim.api import Simulator
from mcusim.machine import machine as M
from mcusim.machine.flash_data_pages import FlashDataPages
from mcusim.machine.cached_ram import CachedRam
from mcusim.machine import native as N
switches = []

def timed(owner, name, counts):
    original = getattr(owner, name)
    def wrapper(self, *args):
        switching = counts(self, *args)  # (asked before the call, which changes what it reads)
        start = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            if switching:
                switches.append(1e3 * (time.perf_counter() - start))
    setattr(owner, name, wrapper)

timed(FlashDataPages, "map_plain", lambda self, plain: plain != self.plain)
timed(M.Machine, "_apply_hook_changes", lambda self: self._hooks_stale)
timed(CachedRam, "update", lambda self: any(int(port.ram_timed) != self.table[N.AT_RAM_ENTRIES + N.RAM_ALIAS * i
                                                                           + N.RA_TIMED]
                                            for i, (port, *_) in enumerate(self.ranges)))
mode = sys.argv[4]
if mode == "start-only":  # sampled, with no window after the exact start (for comparison only)
    from mcusim.machine import data_sampling
    data_sampling.PERIOD_CYCLES = data_sampling.REQUEST_GAP_CYCLES = 1 << 60
    data_sampling.REGION_WINDOWS = 0
    mode = "sampled"
result = Simulator(sys.argv[2], sys.argv[3], data_timing=mode).run()
print(json.dumps(dict(seconds=result.host_seconds, cycles=result.cycles, switches=switches,
                      windows=(result.sampled_data or {}).get("windows", 0),
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def run(board: str, program: str, mode: str) -> dict:
    elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "src"), str(elf), board, mode],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{board} {program} ({mode}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", action="append", default=None, metavar="BOARD:PROGRAM",
                        help=f"default: {', '.join(DEFAULT)}")
    args = parser.parse_args()
    print("| board | program | mode | run s | cycles | windows | switches | first ms | last ms | largest ms "
          "| all ms | peak memory MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for workload in args.workload or DEFAULT:
        board, program = workload.split(":")
        run(board, program, "exact")  # (numba's cache, warmed)
        for mode in ("sampled", "start-only", "exact"):
            r = run(board, program, mode)
            s = r["switches"]
            spans = (f"{s[0]:.2f} | {s[-1]:.2f} | {max(s):.2f} | {sum(s):.1f}" if s else "- | - | - | 0")
            print(f"| {board} | {program} | {mode} | {r['seconds']:.3f} | {r['cycles']:,} | {r['windows']} "
                  f"| {len(s)} | {spans} | {r['rss_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
