"""Where the native block hook's time goes, by numba function: `perf record` of one run, each
sample in numba's code charged to the function it falls in (what perf cannot name: numba's code
is not in any symbol table; the compiled object's symbols give each function's address range).

    PYTHONPATH=src python benchmarks/hook_profile.py firmware/build/mcu-m/coremark-like.elf --board mcu-m
    PYTHONPATH=src python benchmarks/hook_profile.py ELF --board mcu-s --instructions 20  # busiest instructions too
    PYTHONPATH=src python benchmarks/hook_profile.py ELF --board mcu-m --runs 20  # a short run, 20 times

Needs `perf` (Debian: linux-perf). The run compiles the hooks into a fresh numba cache and an
empty object store (so the functions' names and addresses are known: a hook loaded from either
is object code without them), so the profile also holds the compile; the table counts only
samples in numba's functions and in the rest of the JIT code (Unicorn's translated guest code, the other hooks). A helper LLVM
inlined into its caller is counted there (native/jit.py has every helper inlined, so the block hook is one row,
with the cfunc wrapper, numba's runtime, NRT, and the front Unicorn calls first, native/held_front.py, the only
others); --instructions then lists the busiest machine instructions of the busiest function. Samples are
cpu-clock ticks of this process: compare rows of one run, or the same row across two trees
run one after the other.
"""
from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GUEST = "(other JIT code: Unicorn's translated guest code, the other hooks)"
CHILD = """
import ctypes, json, sys
from mcusim.api import Simulator
from mcusim.machine import native as N
simulator = Simulator(sys.argv[1], sys.argv[2])
predictor = bool(simulator.machine.state[N.PREDICTOR_SETS] > 0)  # (the variant the run registers)
hook = N.block_hook_for(simulator.machine.hook_features, predictor)
hook.address  # (compiled by numba: the object store is empty, see main)
library = hook.compiled._library
import io
from elftools.elf.elffile import ELFFile
elf = ELFFile(io.BytesIO(library.serialize_using_object_code()[2][0]))
symbols = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols() if s["st_info"]["type"] == "STT_FUNC"}
names = {}
for function in library._final_module.functions:
    symbol = symbols.get(function.name)
    if not function.is_declaration and symbol is not None and symbol["st_size"]:
        text = elf.get_section(symbol["st_shndx"]).data()
        code = text[symbol["st_value"]:symbol["st_value"] + symbol["st_size"]]
        names[library.get_pointer_to_function(function.name)] = (function.name, symbol["st_size"], code.hex())
from mcusim.machine.native import held_front  # (the front Unicorn calls before the hook: its own row)
front = ELFFile(io.BytesIO(held_front._compile()))
symbol = next(s for s in front.get_section_by_name(".symtab").iter_symbols() if s.name == held_front.SYMBOL)
code = front.get_section(symbol["st_shndx"]).data()[symbol["st_value"]:symbol["st_value"] + symbol["st_size"]]
names[held_front.HELD_FRONT.address] = ("held front", symbol["st_size"], code.hex())
json.dump({str(k): v for k, v in names.items() if k}, open(sys.argv[3], "w"))
result = simulator.run()
for _ in range(int(sys.argv[4]) - 1):  # (more samples of a short run: the same hook, run again)
    result = Simulator(sys.argv[1], sys.argv[2]).run()
print(result.cycles, result.instructions)
"""


def short(name: str) -> str:
    """numba's mangled name (_ZN, then <length><identifier>...) as module.function."""
    if name.startswith("cfunc."):
        return "(the cfunc wrapper)"
    if not name.startswith("_ZN"):
        return name
    words, rest = [], name[3:]
    while (m := re.match(r"\d+", rest)):
        length, rest = int(m.group()), rest[m.end():]
        words.append(rest[:length])
        rest = rest[length:]
    return ".".join(w for w in words if w not in ("mcusim", "machine", "native", "_3clocals_3e")) or name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("elf")
    parser.add_argument("--board", required=True)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1,
                        help="run the ELF this many times in the profiled process (more samples of a short run)")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="also list the N instructions of the busiest function with the most samples "
                             "(x86-64, from the compiled object), to see which of its loads and branches cost")
    args = parser.parse_args()
    if not shutil.which("perf"):
        sys.exit("hook_profile.py needs perf (Debian: apt-get install linux-perf)")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "MCUSIM_NATIVE_STORE": str(folder / "store")}
        done = subprocess.run(["perf", "record", "-q", "-o", str(folder / "perf.data"), sys.executable, "-c", CHILD,
                               args.elf, args.board, str(folder / "names.json"), str(args.runs)], env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the profiled run failed:\n{done.stderr[-2000:]}")
        cycles, instructions = done.stdout.split()[-2:]
        script = subprocess.run(["perf", "script", "-i", str(folder / "perf.data"), "-F", "ip,dso"],
                                capture_output=True, text=True, check=True).stdout
        functions = {int(k): v for k, v in json.loads((folder / "names.json").read_text()).items()}
    starts = sorted(functions)
    samples: collections.Counter[str] = collections.Counter()
    offsets: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    total = 0
    for line in script.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        total += 1
        if "perf-" not in fields[1]:  # (JIT code: perf-PID.map)
            continue
        ip = int(fields[0], 16)
        k = bisect.bisect_right(starts, ip) - 1
        inside = k >= 0 and ip - starts[k] < functions[starts[k]][1]
        samples[short(functions[starts[k]][0]) if inside else GUEST] += 1
        if inside:
            offsets[functions[starts[k]][0]][ip - starts[k]] += 1
    print(f"{args.elf} on {args.board}: {int(cycles):,} cycles, {int(instructions):,} instructions; "
          f"{total:,} samples in the process (the compile included)")
    print("| function | samples |\n|---|---|")
    for name, count in samples.most_common(args.top):
        print(f"| {name} | {count:,} |")
    print(f"| all numba functions and the front | {sum(samples.values()) - samples[GUEST]:,} |")
    if args.instructions and offsets:
        hot_instructions(functions, offsets, args.instructions)


def hot_instructions(functions: dict, offsets: dict, count: int) -> None:
    """The busiest function's `count` instructions with the most samples, each with the two
    before it (a sample usually lands just after the instruction that stalled)."""
    from capstone import CS_ARCH_X86, CS_MODE_64, Cs

    name = max(offsets, key=lambda n: sum(offsets[n].values()))
    code = next(bytes.fromhex(v[2]) for v in functions.values() if v[0] == name)
    listing = list(Cs(CS_ARCH_X86, CS_MODE_64).disasm(code, 0))
    where = {insn.address: i for i, insn in enumerate(listing)}
    total = sum(offsets[name].values())
    print(f"\n{short(name)}: {len(code):,} bytes, {total:,} samples; the instructions with the most")
    for offset, hits in offsets[name].most_common(count):
        i = where.get(offset)
        if i is None:
            continue
        print(f"  {hits:6,} ({100 * hits / total:4.1f} %)")
        for insn in listing[max(0, i - 2):i + 1]:
            print(f"      {insn.address:6x}  {insn.mnemonic} {insn.op_str}")


if __name__ == "__main__":
    main()
