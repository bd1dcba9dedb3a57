"""Speed of mcusim against plain Unicorn and QEMU on the same ELFs, and every goal of issue 15 as
a ratio measured side by side in one run (markdown tables for docs/performance.md).

    python benchmarks/speed.py [--quick] [--repeat 3] [--board mps2-an386 ...] [--program coremark-like ...]

Workloads (firmware/, built first with make): bench (CRC-32 and int8 dot products), bench-dsp (an
SMLAD loop), bench-table (a constant table walk in flash), bench-float (an FP multiply/divide
loop), coremark-like (lists, matrices, a state machine, CRC-16), dhrystone-like (calls, records,
strings from flash), large-startup (thousands of functions run once), printf-uart (printf through
the console UART), and TinyML models (<model>-opt). Every board's SystemInit sets its clocks,
flash wait states and accelerators as the vendor's does (mcu-d: ART, prefetch, L1 I/D caches).

What is timed (medians of --repeat runs, the three tools alternating; the machines here are
shared and noisy, so read the ratios of one run, not seconds across runs):

  mcusim s        RunResult.host_seconds: Machine.run, from the first decode to the stop
                  (decoding code first seen is part of it), in this process, after one untimed
                  warm-up run of the same ELF in it (and the two instrumented runs below)
  plain Unicorn s Unicorn alone from reset to the semihosting exit (MPS2 boards only: the vendor
                  boards' start-up waits on clock registers): its emu_start calls plus a minimal
                  Python semihosting handler (open/write/istty/close... for newlib's console) and,
                  for images that print on the console UART, a write hook on its data register, so
                  printing images run too (their output must equal mcusim's)
  QEMU s          qemu-system-arm as a whole process, start-up included (MPS2 boards only)
  vendor ratio    a vendor board's MIPS over its MPS2 counterpart's: the two run in turn in this
                  process after the rows above, max(--repeat, 5) runs of each, the order swapped
                  each pair, the ratio of their medians (runs minutes apart saw different loads)
  decode us/instr host time decoding code first seen (capstone plus the timing model) per decoded
                  instruction, from benchmarks/where_time_goes.py's instrumentation of a first run in a
                  new process (as a user's run is: nothing of the images measured before in memory),
                  the decode timed as one category (capstone_apart=False: timing each step of
                  capstone's apart added its stopwatch's own time to it), with an empty decode
                  store (MCUSIM_DECODE_CACHE is a new folder for each image); "image seen
                  before": a second such run, which copies the rows (and on the Cortex-M7 boards
                  the schedule state) from the store
                  (timing/decode_store.py). "Another board's build": each program run on the boards
                  in turn with one store, as a user's cache is: what the first run of each board's
                  image copies from the builds for the boards before it (new processes too).
                  "After mcusim prepare": the first run of each program that is not a bundled
                  example in a store describe_patterns filled (the bundled examples' code decoded,
                  the register patterns described), as after scripts/setup.sh: the
                  median of --repeat such runs, each a new process with a new copy of the store.
                  The timed runs come after both and an untimed one in this process, so they are
                  runs of an image seen before
  cold/warm start a fresh process running the `mcusim` command (`mcusim run ELF --board B
                  --max-cycles 1`, through its console-script entry): it imports mcusim, builds the
                  simulator and runs to its first block: wall time from spawning the process to its
                  exit (124, the cycle limit), Python's own start included. Cold, nothing prepared:
                  NUMBA_CACHE_DIR and MCUSIM_NATIVE_STORE (the object store) set to new empty folders
                  (numba compiles everything); cold after `mcusim prepare`: a new empty numba cache and
                  a store `mcusim prepare` filled (as on the first run after scripts/setup.sh, which
                  runs it; its own time is printed); warm: the caches of the cold run again.

Goals (issue 15): mcusim / plain Unicorn <= 2x on the MPS2 boards; each vendor board's MIPS at
least 0.5x its MPS2 counterpart's on the same program (Cortex-M4 boards against mps2-an386, mcu-d
against mps2-an500), none below 0.25x; decode <= 10 us per instruction; cold start <= 5 s, warm
<= 0.5 s; stretch: mcusim within 4x of QEMU's whole process on coremark-like.
--quick: one repeat, the issue's own workloads plus one model. --start-only: the start table alone.
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

from unicorn import (UC_ARCH_ARM, UC_HOOK_INTR, UC_HOOK_MEM_WRITE, UC_MODE_MCLASS, UC_MODE_THUMB, UC_PROT_ALL, Uc,
                     UcError)
from unicorn import arm_const as A

import mcusim
from mcusim.config import board_names, load_board
from mcusim.elf import ElfImage

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("bench", "bench-dsp", "bench-table", "bench-float", "coremark-like", "dhrystone-like", "large-startup",
            "printf-uart", "micro_speech-opt", "kws_dscnn-opt", "person_detection-opt")
QUICK_PROGRAMS = ("coremark-like", "dhrystone-like", "large-startup", "printf-uart", "micro_speech-opt")
# Each vendor board against the QEMU machine with the same core (the goal: at least 0.5x its speed).
COUNTERPART = {"mcu-s": "mps2-an386", "mcu-m": "mps2-an386", "mcu-b": "mps2-an386", "mcu-d": "mps2-an500"}
# The Cortex-M7 model against the Cortex-M4 model on the same kind of board.
CORE_PAIRS = (("mps2-an500", "mps2-an386"), ("mcu-d", "mcu-m"))
UNICORN_GOAL, VENDOR_GOAL, VENDOR_FLOOR, DECODE_US_GOAL = 2.0, 0.5, 0.25, 10.0
PAIR_RUNS = 5  # runs of each of a vendor board and its counterpart, at least (measure_vendor_pairs)
COLD_GOAL_S, WARM_GOAL_S, QEMU_STRETCH, STRETCH_PROGRAM = 5.0, 0.5, 4.0, "coremark-like"

# Arm "Semihosting for AArch32 and AArch64" v2.0, operation numbers
SYS_OPEN, SYS_CLOSE, SYS_WRITEC, SYS_WRITE0, SYS_WRITE = 0x01, 0x02, 0x03, 0x04, 0x05
SYS_ISTTY, SYS_FLEN, SYS_ERRNO, SYS_EXIT, SYS_EXIT_EXTENDED = 0x09, 0x0C, 0x13, 0x18, 0x20
ADP_STOPPED_APPLICATION_EXIT = 0x20026


def verdict(value: float | None, goal: float, at_most: bool = True) -> str:
    """'met' or 'not met' for a measured value against its goal (n/a when not measured)."""
    if value is None:
        return "n/a"
    return "met" if (value <= goal if at_most else value >= goal) else "not met"


def fmt(value: float | None, digits: int = 3, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{suffix}"


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def mips(instructions: int, seconds: float) -> str:
    """Millions of instructions per second, with digits enough for runs of a few instructions."""
    value = instructions / seconds / 1e6
    return f"{value:.1f}" if value >= 1 else f"{value:.3f}"


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


class PlainSemihosting:
    """Just enough semihosting for newlib's console (rdimon) on plain Unicorn: what a minimal
    Unicorn-based runner needs, so plain Unicorn can run the images that print. None for an
    operation it does not handle (the run then counts as not comparable)."""

    def __init__(self):
        self.output = bytearray()
        self.handles = 0
        self.exit_code = None

    def call(self, uc: Uc, op: int, param: int) -> int | None:
        word = lambda i: int.from_bytes(uc.mem_read(param + 4 * i, 4), "little")  # noqa: E731
        if op == SYS_OPEN:  # only the console (":tt"): stdin, stdout, stderr
            name = bytes(uc.mem_read(word(0), word(2)))
            if name != b":tt":
                return 0xFFFFFFFF
            self.handles += 1
            return self.handles
        if op == SYS_WRITE:
            self.output += uc.mem_read(word(1), word(2))
            return 0  # bytes not written
        if op == SYS_WRITEC:
            self.output += uc.mem_read(param, 1)
            return 0
        if op == SYS_WRITE0:
            while (byte := uc.mem_read(param, 1)) != b"\0":
                self.output += byte
                param += 1
            return 0
        if op == SYS_ISTTY:
            return 1
        if op in (SYS_CLOSE, SYS_ERRNO):
            return 0
        if op == SYS_FLEN:
            return 0
        return None


def plain_unicorn(elf: Path, board_name: str, uart: bool = False, prepare=None) -> tuple[float, str] | None:
    """(seconds, output) of Unicorn alone running the image from reset to its semihosting exit
    with status 0, or None when it cannot (a fault, an operation PlainSemihosting lacks). `uart`:
    keep what the console UART prints, through a write hook on its data register; only for
    images that print there, since any memory hook slows Unicorn's stores (30 % on
    dhrystone-like, measured). `prepare(uc)`: called before the timed run (to add hooks)."""
    board = load_board(board_name)
    image = ElfImage.load(elf)
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(getattr(A, board.core.unicorn_cpu_model))
    for region in board.memory:
        if region.alias_of is None:
            uc.mem_map(region.base, region.size_bytes, UC_PROT_ALL)
    uc.mem_map(0xE0000000, 0x100000, UC_PROT_ALL)  # SCS as plain memory: startup writes CPACR
    host = PlainSemihosting()
    console = next((p for p in board.peripherals if p.name == board.console_uart), None)
    if uart and console is not None:  # data register at offset 0 (CMSDK APB UART, Arm DDI 0479); the rest RAM
        uc.mem_map(console.base & ~0xFFF, 0x1000, UC_PROT_ALL)
        uc.hook_add(UC_HOOK_MEM_WRITE, lambda u, access, address, size, value, _: host.output.append(value & 0xFF),
                    begin=console.base, end=console.base)
    for segment in image.segments:
        if segment.data:
            uc.mem_write(segment.paddr, segment.data)
    vectors = min(s.paddr for s in image.segments if s.executable)
    uc.reg_write(A.UC_ARM_REG_SP, int.from_bytes(uc.mem_read(vectors, 4), "little"))
    pc = int.from_bytes(uc.mem_read(vectors + 4, 4), "little")
    stops = []
    uc.hook_add(UC_HOOK_INTR, lambda u, intno, _: (stops.append(intno), u.emu_stop()))
    if prepare is not None:
        prepare(uc)
    started = time.perf_counter()
    while True:
        try:
            uc.emu_start(pc | 1, 0xFFFFFFFF)
        except UcError:  # an access outside the mapped memory
            return None
        at = uc.reg_read(A.UC_ARM_REG_PC)
        if not stops or stops.pop() != 7 or bytes(uc.mem_read(at, 2)) != b"\xab\xbe":  # BKPT 0xAB
            return None
        op, param = uc.reg_read(A.UC_ARM_REG_R0), uc.reg_read(A.UC_ARM_REG_R1)
        if op == SYS_EXIT_EXTENDED:
            code = int.from_bytes(uc.mem_read(param + 4, 4), "little")
            break
        if op == SYS_EXIT:
            code = 0 if param == ADP_STOPPED_APPLICATION_EXIT else 1
            break
        result = host.call(uc, op, param)
        if result is None:
            return None
        uc.reg_write(A.UC_ARM_REG_R0, result)
        pc = at + 2
    seconds = time.perf_counter() - started
    return (seconds, host.output.decode("latin-1")) if code == 0 else None


def plain_unicorn_seconds(elf: Path, board_name: str) -> float | None:
    """plain_unicorn's seconds alone (benchmarks/where_time_goes.py --plain-unicorn)."""
    done = plain_unicorn(elf, board_name)
    return done[0] if done is not None else None


def qemu_run(elf: Path, board: str) -> tuple[float, str] | None:
    """(whole-process seconds, output) of QEMU running the ELF, for the MPS2 boards."""
    qemu = shutil.which("qemu-system-arm")
    if qemu is None or not board.startswith("mps2"):
        return None
    started = time.perf_counter()
    done = subprocess.run([qemu, "-M", board, "-nographic", "-semihosting-config", "enable=on,target=native",
                           "-kernel", str(elf)], capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, f"QEMU {board} {elf.name}: exit {done.returncode}"
    return seconds, done.stdout.decode("latin-1").replace("\r\n", "\n")


FIRST_BLOCK = "import sys; from mcusim.launch import main; sys.argv[0] = 'mcusim'; main()"
CYCLE_LIMIT_EXIT = 124  # what `mcusim run` exits with when --max-cycles ends the run (docs/reliability.md)


def _environment(cache_dir: str, store_dir: str) -> dict:
    """numba's cache in `cache_dir`, the object store and the decode store (what `mcusim prepare`
    describes for the decoder) in `store_dir`, mcusim importable."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, MCUSIM_NATIVE_STORE=store_dir,
               MCUSIM_DECODE_CACHE=os.path.join(store_dir, "decode"),
               PYTHONPATH=os.pathsep.join([str(Path(mcusim.__file__).parents[1])] +
                                          [p for p in [os.environ.get("PYTHONPATH")] if p]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files; without them
    # every start compiles mcusim's Python source again (about 1 s here)
    return env


def start_seconds(elf: Path, board: str, cache_dir: str, store_dir: str) -> float:
    """Wall time of a fresh `mcusim run` process that runs `elf` to its first block, with numba's
    cache in `cache_dir` and the object store in `store_dir`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FIRST_BLOCK, "run", str(elf), "--board", board, "--max-cycles", "1"],
                          env=_environment(cache_dir, store_dir), capture_output=True, timeout=600)
    seconds = time.perf_counter() - started
    assert done.returncode == CYCLE_LIMIT_EXIT, done.stderr.decode(errors="replace")[-2000:]
    return seconds


def prepare_seconds(cache_dir: str, store_dir: str) -> float:
    """Wall time of `mcusim prepare` (the ahead-of-time compile scripts/setup.sh runs) into
    `store_dir`, with numba's cache in `cache_dir`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FIRST_BLOCK, "prepare"], env=_environment(cache_dir, store_dir),
                          capture_output=True, timeout=3600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return time.perf_counter() - started


def build(programs: list[str], boards: list[str]) -> None:
    targets = [f"build/{b}/{p}.elf" for b in boards for p in programs]
    subprocess.run(["make", "-C", str(ROOT / "firmware"), "-s", f"-j{os.cpu_count() or 2}", f"PYTHON={sys.executable}",
                    *targets], check=True)


def decode_us(seconds: dict, counts: dict) -> float | None:
    """Host us per decoded instruction of an instrumented run (where_time_goes.measure)."""
    decoded = counts["instructions decoded"]
    decode = seconds.get("decode: capstone", 0.0) + seconds.get("decode: timing model", 0.0)
    return 1e6 * decode / decoded if decoded else None


FRESH = ("import json, sys; sys.path.insert(0, sys.argv[1]); import where_time_goes; "
         "seconds, counts, result = where_time_goes.measure(sys.argv[2], sys.argv[3], capstone_apart=False); "
         "print(json.dumps([seconds, counts, result.exit_code, result.exit_detail]))")


def measure_fresh(elf: Path, board: str) -> tuple[dict, dict]:
    """where_time_goes.measure of one run in a new process (the decode store the environment
    names; capstone's calls timed with the rest of the decode): a user's run is a process of its
    own, whose memos of the encodings it met are empty, while this one's hold every image
    measured before."""
    done = subprocess.run([sys.executable, "-c", FRESH, str(Path(__file__).resolve().parent), str(elf), board],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    seconds, counts, exit_code, detail = json.loads(done.stdout.strip().splitlines()[-1])
    assert exit_code == 0, f"{board} {elf.name}: {detail}"
    return seconds, counts


def measure_speed(boards: list[str], programs: list[str], repeat: int, stores: str) -> dict:
    """Per (board, program): instructions, medians and decode cost; checks the outputs agree.
    Each image gets a new decode store in folder `stores`."""
    rows = {}
    for board in boards:
        for program in programs:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            # a decode store of its own: the first run is a first decode, the second an image seen before
            os.environ["MCUSIM_DECODE_CACHE"] = tempfile.mkdtemp(prefix="decode-", dir=stores)
            seconds, counts = measure_fresh(elf, board)  # a user's first run: a new process
            again, counts_again = measure_fresh(elf, board)  # the image seen before
            warm_up = mcusim.run(elf, board)  # (untimed: this process's first run of it)
            assert warm_up.exit_code == 0, f"{board} {program}: {warm_up.exit_detail}"
            ours, plain, qemu = [], [], []
            for _ in range(repeat):
                result = mcusim.run(elf, board)
                assert result.exit_code == 0, result.exit_detail
                ours.append(result.host_seconds)
                if board.startswith("mps2"):
                    if (p := plain_unicorn(elf, board, uart=any(result.uart.values()))) is not None:
                        assert p[1] == result.stdout, f"{board} {program}: plain Unicorn printed other output"
                        plain.append(p[0])
                    if (q := qemu_run(elf, board)) is not None:
                        assert q[1] == result.stdout, f"{board} {program}: QEMU printed other output"
                        qemu.append(q[0])
            rows[board, program] = {"instructions": result.instructions, "mcusim": median(ours),
                                    "unicorn": median(plain), "qemu": median(qemu),
                                    "decoded": counts["instructions decoded"],
                                    "decode_us": decode_us(seconds, counts),
                                    "decode_again_us": decode_us(again, counts_again),
                                    "copied": counts_again["instructions copied"]}
            print(f"  measured {board} {program}", file=sys.stderr, flush=True)
    return rows


def measure_vendor_pairs(boards: list[str], programs: list[str], repeat: int) -> dict:
    """Per (vendor board, program): (its MIPS, its MPS2 counterpart's), the two run in turn in this
    process (measure_speed warmed both), max(repeat, PAIR_RUNS) pairs with the order swapped each
    pair, medians of each. The machines here are shared: two medians taken minutes apart moved
    with the load (bench-float on mcu-b 0.37x to 0.89x in three runs of the same code,
    docs/performance.md, "Forty-third pass"); runs in turn see the same load."""
    pairs = {}
    for board in boards:
        other = COUNTERPART.get(board)
        if other not in boards:
            continue
        for program in programs:
            times, instructions = {board: [], other: []}, {}
            for i in range(max(repeat, PAIR_RUNS)):
                for name in (board, other) if i % 2 == 0 else (other, board):
                    result = mcusim.run(ROOT / "firmware" / "build" / name / f"{program}.elf", name)
                    assert result.exit_code == 0, f"{name} {program}: {result.exit_detail}"
                    times[name].append(result.host_seconds)
                    instructions[name] = result.instructions
            pairs[board, program] = tuple(instructions[name] / median(times[name]) / 1e6 for name in (board, other))
    return pairs


def cross_board_table(boards: list[str], programs: list[str], stores: str) -> list[str]:
    """Each program's first run on each board in turn, one decode store for all (a user's cache,
    a new one in folder `stores`): how much of each board's build the builds for the boards
    before it already decoded."""
    lines = ["| program | board | instructions decoded | copied from the boards before | us per instruction |",
             "|---|---|---|---|---|"]
    for program in programs:
        os.environ["MCUSIM_DECODE_CACHE"] = tempfile.mkdtemp(prefix="decode-", dir=stores)
        for board in boards:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            seconds, counts = measure_fresh(elf, board)
            decoded, copied = counts["instructions decoded"], counts["instructions copied"]
            lines.append(f"| {program} | {board} | {decoded:,} | {copied:,} ({100 * copied / max(decoded, 1):.0f} %) | "
                         f"{fmt(decode_us(seconds, counts), 1)} |")
    return lines


PREPARE_PATTERNS = "from mcusim.prepare import describe_patterns; describe_patterns()"


def prepared_decode_table(boards: list[str], programs: list[str], rows: dict, stores: str, repeat: int) -> list[str]:
    """Each program that is not a bundled example (so new code to `mcusim prepare`) on each board:
    its first run in a new process with a decode store `mcusim prepare` filled (every bundled
    example's code decoded once per core model keeping register patterns: timing/pattern_store.py),
    beside its first run with an empty store (measure_speed's, a single run). Each is the median
    of `repeat` such first runs, each a new process with a new copy of the store: three first runs
    of mps2-an500 coremark-like with the same store measured 8.4 to 11.1 us per instruction on a
    shared machine (docs/performance.md, "Thirty-eighth pass"), about the goal's 10 us."""
    from mcusim import examples

    template = tempfile.mkdtemp(prefix="decode-prepared-", dir=stores)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", PREPARE_PATTERNS], env={**os.environ, "MCUSIM_DECODE_CACHE": template},
                   check=True, capture_output=True)
    seconds_taken = time.perf_counter() - started
    after_prepare = f"first run after `mcusim prepare`, median of {repeat} (range)" if repeat > 1 else \
        "first run after `mcusim prepare`"
    lines = ["| board | program | instructions decoded | us per instruction, first run, empty store | "
             f"{after_prepare} | goal <= 10 us |", "|---|---|---|---|---|---|"]
    bundled = set(examples.available())
    for board in boards:
        for program in programs:
            if program in bundled or (board, program) not in rows:
                continue
            runs = []
            for _ in range(repeat):
                store = tempfile.mkdtemp(prefix="decode-", dir=stores)
                shutil.copytree(template, store, dirs_exist_ok=True)
                os.environ["MCUSIM_DECODE_CACHE"] = store
                seconds, counts = measure_fresh(ROOT / "firmware" / "build" / board / f"{program}.elf", board)
                shutil.rmtree(store, ignore_errors=True)
                if (us := decode_us(seconds, counts)) is not None:
                    runs.append(us)
            after = median(runs)
            spread = f" ({min(runs):.1f} to {max(runs):.1f})" if len(runs) > 1 else ""
            lines.append(f"| {board} | {program} | {counts['instructions decoded']:,} | "
                         f"{fmt(rows[board, program]['decode_us'], 1)} | {fmt(after, 1)}{spread} | "
                         f"{verdict(after, DECODE_US_GOAL)} |")
    lines.append(f"\nDescribing the register patterns and the encoding tables (the bundled examples' code and the "
                 f"toolchain's libraries: what `mcusim prepare` adds for this) took {seconds_taken:.1f} s.")
    return lines


def speed_table(rows: dict) -> list[str]:
    lines = ["| board | program | instructions | mcusim s | MIPS | plain Unicorn s | mcusim / Unicorn (goal <= 2x) | "
             "QEMU s | mcusim / QEMU |", "|---|---|---|---|---|---|---|---|---|"]
    for (board, program), r in rows.items():
        u, q = ratio(r["mcusim"], r["unicorn"]), ratio(r["mcusim"], r["qemu"])
        goal = f"{fmt(u, 2, 'x')} {verdict(u, UNICORN_GOAL)}" if u is not None else "n/a"
        lines.append(f"| {board} | {program} | {r['instructions']:,} | {fmt(r['mcusim'])} | "
                     f"{mips(r['instructions'], r['mcusim'])} | {fmt(r['unicorn'])} | {goal} | {fmt(r['qemu'])} | "
                     f"{fmt(q, 2, 'x')} |")
    return lines


def vendor_table(pairs: dict) -> list[str]:
    lines = ["| board | counterpart | program | board MIPS | counterpart MIPS | ratio | goal >= 0.5x | "
             "floor >= 0.25x |", "|---|---|---|---|---|---|---|---|"]
    for (board, program), (speed, other_speed) in pairs.items():
        r = speed / other_speed
        lines.append(f"| {board} | {COUNTERPART[board]} | {program} | {speed:.3g} | {other_speed:.3g} | {r:.2f}x | "
                     f"{verdict(r, VENDOR_GOAL, at_most=False)} | {verdict(r, VENDOR_FLOOR, at_most=False)} |")
    return lines


def decode_table(rows: dict) -> list[str]:
    lines = ["| board | program | instructions decoded | us per instruction, first run | goal <= 10 us | "
             "us per instruction, image seen before | from the decode store | goal <= 10 us |",
             "|---|---|---|---|---|---|---|---|"]
    for (board, program), r in rows.items():
        lines.append(f"| {board} | {program} | {r['decoded']:,} | {fmt(r['decode_us'], 1)} | "
                     f"{verdict(r['decode_us'], DECODE_US_GOAL)} | {fmt(r['decode_again_us'], 1)} | "
                     f"{r['copied']:,} | {verdict(r['decode_again_us'], DECODE_US_GOAL)} |")
    return lines


def start_table(boards: list[str], program: str, repeat: int) -> list[str]:
    """Per board: the first run with nothing compiled (empty numba cache and object store), the
    first run after `mcusim prepare` (empty numba cache, prepared store) and warm runs."""
    lines = [f"| board | cold s, nothing prepared | cold s after `mcusim prepare` (goal <= {COLD_GOAL_S:g}) | | "
             f"warm s (goal <= {WARM_GOAL_S:g}) | |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="speed-prepared-") as prepared:
        with tempfile.TemporaryDirectory(prefix="speed-numba-") as cache:
            prepare_s = prepare_seconds(cache, prepared)
        for board in boards:
            elf = ROOT / "firmware" / "build" / board / f"{program}.elf"
            with tempfile.TemporaryDirectory(prefix="speed-numba-") as cache, \
                    tempfile.TemporaryDirectory(prefix="speed-store-") as store:
                cold = start_seconds(elf, board, cache, store)
                warm = median([start_seconds(elf, board, cache, store) for _ in range(max(repeat, 1))])
            with tempfile.TemporaryDirectory(prefix="speed-numba-") as cache:
                after_prepare = start_seconds(elf, board, cache, prepared)
            lines.append(f"| {board} | {cold:.2f} | {after_prepare:.2f} | {verdict(after_prepare, COLD_GOAL_S)} | "
                         f"{warm:.2f} | {verdict(warm, WARM_GOAL_S)} |")
    lines.append(f"\n`mcusim prepare` (once, at install: scripts/setup.sh) took {prepare_s:.1f} s.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per ELF (default 3; --quick: 1)")
    parser.add_argument("--board", action="append", default=None, help="a board (default: all six)")
    parser.add_argument("--program", action="append", default=None, help="a workload (default: all)")
    parser.add_argument("--quick", action="store_true", help="one repeat; the issue's workloads and one model")
    parser.add_argument("--start-only", action="store_true",
                        help="only the cold and warm start table (of the first --program, default coremark-like)")
    args = parser.parse_args()
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    repeat = args.repeat or (1 if args.quick else 3)
    boards = args.board or board_names()
    programs = args.program or list(QUICK_PROGRAMS if args.quick else PROGRAMS)
    if args.start_only:
        program = args.program[0] if args.program else STRETCH_PROGRAM
        build([program], boards)
        print(f"Start to the first instruction ({program}; cold = empty numba cache; warm = median of "
              f"{max(repeat, 1)} with the caches the cold run filled):\n")
        print("\n".join(start_table(boards, program, repeat)))
        return
    build(programs, boards)
    stores = tempfile.mkdtemp(prefix="speed-decode-")  # (an earlier store would make a first run no first decode)
    decode_store = os.environ.get("MCUSIM_DECODE_CACHE")  # (each image's store is set in turn below)
    try:
        rows = measure_speed(boards, programs, repeat, stores)
        pairs = measure_vendor_pairs(boards, programs, repeat)
        cross_board = cross_board_table(boards, programs, stores)
        prepared = prepared_decode_table(boards, programs, rows, stores, repeat)
    finally:
        shutil.rmtree(stores, ignore_errors=True)
        if decode_store is None:
            os.environ.pop("MCUSIM_DECODE_CACHE", None)
        else:
            os.environ["MCUSIM_DECODE_CACHE"] = decode_store

    print(f"Speed (medians of {repeat} alternating runs; mcusim s is the run from first decode to stop):\n")
    print("\n".join(speed_table(rows)))
    print(f"\nVendor board / MPS2 counterpart, MIPS on the same program (flash and caches as SystemInit sets them; "
          f"medians of {max(repeat, PAIR_RUNS)} runs of each, the two in turn):\n")
    print("\n".join(vendor_table(pairs)))
    print("\nDecoding code first seen (capstone + timing model, host us per decoded instruction):\n")
    print("\n".join(decode_table(rows)))
    print("\nThe first run of a program's build for each board in turn, one decode store for all (host us per "
          "decoded instruction, copies included):\n")
    print("\n".join(cross_board))
    print("\nThe first run of a program that is not a bundled example, after `mcusim prepare` (host us per decoded "
          "instruction; new processes):\n")
    print("\n".join(prepared))
    start_program = STRETCH_PROGRAM if STRETCH_PROGRAM in programs else programs[0]
    print(f"\nStart to the first instruction ({start_program}; a fresh `mcusim run --max-cycles 1` process: Python, "
          f"imports, simulator, first block; cold = empty numba cache; warm = median of {max(repeat, 1)}):\n")
    print("\n".join(start_table(boards, start_program, repeat)))
    for m7, m4 in CORE_PAIRS:
        shown = [f"{p} {rows[m7, p]['mcusim'] / rows[m4, p]['mcusim']:.2f}x" for p in programs
                 if (m7, p) in rows and (m4, p) in rows]
        if shown:
            print(f"\n{m7} / {m4} time (Cortex-M7 model / Cortex-M4 model): " + ", ".join(shown))
    for board in boards:
        r = rows.get((board, STRETCH_PROGRAM))
        if r and r["qemu"]:
            q = r["mcusim"] / r["qemu"]
            print(f"\nstretch: {STRETCH_PROGRAM} on {board}, mcusim / QEMU whole process {q:.2f}x "
                  f"(goal <= {QEMU_STRETCH:g}x): {verdict(q, QEMU_STRETCH)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
