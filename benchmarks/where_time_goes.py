"""Where mcusim's host time goes on one run: start-up, decoding, native emulation, Python
callbacks by kind, result collection (issue 15's first step: measure before changing anything).

    PYTHONPATH=src python benchmarks/where_time_goes.py firmware/build/mcu-d/bench.elf --board mcu-d
    ... [--flash-latency auto|N] [--cprofile 15]

It runs the ELF once, in this process, with a cheap exclusive-time stopwatch wrapped around the
functions that mark each kind of work (a stack of categories: time spent in a nested category
is charged there, not to its caller, so the rows add up to the total). The wrappers are put on
the classes before the Simulator is built, so the hooks Unicorn calls are the timed ones.
Categories:

  start-up: imports      importing mcusim (numba, unicorn, numpy, the package)
  start-up: construction Simulator(...): ELF load, board, Machine, native hooks (numba cache load)
  decode: capstone       capstone's disassembly calls while decoding code first seen (its library
                         is loaded by the first: timing/capstone_library.py; nothing here imports
                         capstone's Python package, which a run does not import either)
  decode: timing model   the rest of timing/decoder.py and the core timing model (Python)
  native emulation       inside uc.emu_start, minus the Python callbacks it made (Unicorn and
                         the numba block/memory hooks; also the ctypes hop into each callback)
  MMIO peripherals       peripheral register reads and writes (Bus.read / Bus.write)
  semihosting            Semihosting.call (console output, exit, files)
  exceptions/interrupts  interrupt-hook callbacks, _handle_interrupt and the ExceptionUnit
  events/progress        timed devices' events, hook changes, stop checks between slices
  SEV code hook          the Python code hook on SEV instructions
  run loop (other)       the rest of Machine.run between emu_start calls
  result collection      Simulator.run after the machine stops (profiles, energy, RunResult)
  bundle                 RunResult.write_bundle into a temporary folder

The wrappers cost about a microsecond a call, so runs with very many MMIO accesses read a
little high there. `--cprofile N` runs it again under cProfile and prints the top N functions
by own time (cProfile slows Python code several-fold: use it for the names, not the split).
The machines here are shared: compare rows of one run, not seconds across runs.
"""
from __future__ import annotations

import argparse
import functools
import tempfile
import threading
import time
from collections import defaultdict

CATEGORIES = ("start-up: imports", "start-up: construction", "decode: capstone", "decode: timing model",
              "native emulation", "MMIO peripherals", "semihosting", "exceptions/interrupts", "events/progress",
              "SEV code hook", "run loop (other)", "result collection", "bundle")


class Stopwatch:
    """Exclusive time per category over nested wrapped calls (main thread only)."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self._stack = []  # [category, child seconds]
        self._thread = threading.get_ident()

    def enter(self, category):
        self._stack.append([category, 0.0, time.perf_counter()])

    def leave(self):
        category, child, started = self._stack.pop()
        elapsed = time.perf_counter() - started
        self.seconds[category] += elapsed - child
        self.calls[category] += 1
        if self._stack:
            self._stack[-1][1] += elapsed

    def wrap(self, owner, name, category, count=None):
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            if threading.get_ident() != self._thread:
                return original(*args, **kwargs)
            if count:
                self.calls[count] += 1
            self.enter(category)
            try:
                return original(*args, **kwargs)
            finally:
                self.leave()
        setattr(owner, name, timed)

    def wrap_generator(self, owner, name, category):
        """Time each step of a generator method (capstone's disasm yields one instruction a step)."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            steps = original(*args, **kwargs)
            while True:
                self.enter(category)
                try:
                    item = next(steps)
                except StopIteration:
                    return
                finally:
                    self.leave()
                yield item
        setattr(owner, name, timed)

    def timed(self, category, function, *args, **kwargs):
        self.enter(category)
        try:
            return function(*args, **kwargs)
        finally:
            self.leave()


def instrument(watch: Stopwatch, capstone_apart: bool = True) -> None:
    """Put the stopwatch on the functions that mark each kind of work (`capstone_apart=False`:
    capstone's calls left in "decode: timing model", not timed one by one)."""
    import unicorn
    from mcusim import api
    from mcusim.machine import exceptions, machine, semihosting
    from mcusim.peripherals import bus
    from mcusim.timing import capstone_library, decoder

    if capstone_apart:
        watch.wrap_generator(capstone_library.Thumb, "disasm_lite", "decode: capstone")
        watch.wrap(capstone_library.Thumb, "disasm", "decode: capstone")
        watch.wrap(capstone_library.Thumb, "raw_disasm", "decode: capstone")
    watch.wrap(decoder.Decoder, "decode_block", "decode: timing model", count="blocks decoded")
    for name in ("decode_ranges", "decode", "forget_changed_code", "start_prefix",
                 "set_code_ranges"):
        watch.wrap(decoder.Decoder, name, "decode: timing model")
    watch.wrap(unicorn.Uc, "emu_start", "native emulation")
    watch.wrap(bus.Bus, "read", "MMIO peripherals")
    watch.wrap(bus.Bus, "write", "MMIO peripherals")
    watch.wrap(semihosting.Semihosting, "call", "semihosting")
    for name in ("_on_interrupt", "_on_invalid_access", "_on_divide", "_handle_interrupt", "_handle_error",
                 "on_exception_entry", "on_exception_return"):
        watch.wrap(machine.Machine, name, "exceptions/interrupts")
    for name in ("take_pending", "enter", "exception_return", "raise_fault", "set_pending", "best_pending"):
        watch.wrap(exceptions.ExceptionUnit, name, "exceptions/interrupts")
    for name in ("_service_events", "_next_event", "_apply_hook_changes", "_install_exact_pc_hooks",
                 "_stop_asked", "_settle"):
        watch.wrap(machine.Machine, name, "events/progress")
    watch.wrap(machine.Machine, "_on_sev", "SEV code hook")
    watch.wrap(machine.Machine, "run", "run loop (other)")
    watch.wrap(api.Simulator, "run", "result collection")
    watch.wrap(api.RunResult, "write_bundle", "bundle")


def measure(elf: str, board: str, capstone_apart: bool = True, **options) -> tuple[dict, dict, object]:
    """Run `elf` on `board` once; returns (seconds by category, counts, the RunResult).
    `capstone_apart=False`: decoding in one category, as speed.py measures its cost (capstone's
    calls, each step of its disassembly timed apart, add the stopwatch's own time to it: about a
    microsecond a step, 0.4 us per decoded instruction on coremark-like; docs/performance.md,
    "Forty-fifth pass")."""
    watch = Stopwatch()
    watch.enter("start-up: imports")
    import mcusim.api
    watch.leave()
    instrument(watch, capstone_apart)
    try:
        simulator = watch.timed("start-up: construction", mcusim.api.Simulator, elf, board, **options)
        result = simulator.run()
        with tempfile.TemporaryDirectory() as folder:
            result.write_bundle(folder)
    finally:
        _uninstrument()
    decoder = simulator.machine.decoder
    counts = {"blocks decoded": watch.calls["blocks decoded"],
              "instructions decoded": decoder.instructions_decoded,
              "instructions copied": decoder.instructions_copied,
              "emu_start calls": watch.calls["native emulation"],
              "MMIO accesses": watch.calls["MMIO peripherals"]}
    return dict(watch.seconds), counts, result


def _uninstrument() -> None:
    """Put the original functions back (functools.wraps keeps them as __wrapped__)."""
    import unicorn
    from mcusim import api
    from mcusim.machine import exceptions, machine, semihosting
    from mcusim.peripherals import bus
    from mcusim.timing import capstone_library, decoder
    for owner in (capstone_library.Thumb, unicorn.Uc, decoder.Decoder, bus.Bus, semihosting.Semihosting,
                  machine.Machine, exceptions.ExceptionUnit, api.Simulator, api.RunResult):
        for name, value in list(vars(owner).items()):
            while hasattr(value, "__wrapped__"):
                value = value.__wrapped__
                setattr(owner, name, value)


def table(seconds: dict, counts: dict, result) -> str:
    total = sum(seconds.values())
    lines = ["| part | s | share |", "|---|---|---|"]
    for category in CATEGORIES:
        s = seconds.get(category, 0.0)
        lines.append(f"| {category} | {s:.4f} | {100 * s / total:.1f}% |")
    lines.append(f"| total | {total:.3f} | 100% |")
    run = sum(seconds.get(c, 0.0) for c in CATEGORIES[2:11])
    decode = seconds.get("decode: capstone", 0.0) + seconds.get("decode: timing model", 0.0)
    decoded = counts["instructions decoded"]
    lines.append("")
    lines.append(f"instructions {result.instructions:,}, run {run:.3f} s ({result.instructions / run / 1e6:.1f} MIPS; "
                 f"native emulation alone {result.instructions / max(seconds.get('native emulation', 0), 1e-9) / 1e6:.0f}"
                 f" MIPS), exit {result.exit_reason} {result.exit_code}")
    lines.append(f"blocks decoded {counts['blocks decoded']:,}, instructions decoded {decoded:,} "
                 f"({counts['instructions copied']:,} of them copied from earlier decodes), "
                 f"{1e6 * decode / max(decoded, 1):.1f} us per decoded instruction "
                 f"(capstone {1e6 * seconds.get('decode: capstone', 0.0) / max(decoded, 1):.1f} us), "
                 f"emu_start calls {counts['emu_start calls']:,}, MMIO accesses {counts['MMIO accesses']:,}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("elf")
    parser.add_argument("--board", default="mcu-d")
    parser.add_argument("--flash-latency", default=None,
                        help="as mcusim run --flash-latency (auto, or wait states): the flash set-up to simulate")
    parser.add_argument("--plain-unicorn", action="store_true",
                        help="also time plain Unicorn on the image (benchmarks/speed.py) for the ratio")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="also run under cProfile and print the top N functions by own time")
    args = parser.parse_args()
    options = {"flash_latency": args.flash_latency} if args.flash_latency is not None else {}
    seconds, counts, result = measure(args.elf, args.board, **options)
    print(f"{args.elf} on {args.board}")
    print(table(seconds, counts, result))
    if args.plain_unicorn:
        import sys
        from pathlib import Path
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from speed import plain_unicorn_seconds
        plain = plain_unicorn_seconds(args.elf, args.board)
        run = sum(seconds.get(c, 0.0) for c in CATEGORIES[2:11])
        print(f"plain Unicorn {plain:.4f} s: mcusim run / plain Unicorn {run / plain:.2f}x" if plain else
              "plain Unicorn: n/a (the image makes a semihosting call before its exit)")
    if args.cprofile:
        import cProfile
        import pstats
        from mcusim.api import run
        profiler = cProfile.Profile()
        profiler.runcall(run, args.elf, args.board, **options)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.cprofile)


if __name__ == "__main__":
    main()
