"""Check, at length, that an encoding described from another of its register pattern
(timing/register_pattern.py) gets the decode rows capstone's own detail and the Cortex-M4 model
give it: every 16-bit encoding (IT instructions placed with their blocks), random 32-bit
encodings, and the encodings of the files given (executable ELF files, objects or ar archives
of them; the kit's builds by default) with their register fields varied, a tenth of them in IT
blocks. tests/unit/test_register_pattern.py runs a sample of this in the test suite.

    python scripts/check_register_patterns.py [--seed 1] [--wide 30000] [--variants 2] [--prepared DIR] [FILE ...]

--prepared DIR: the decoder under test reads the register patterns and the tables of 16- and
32-bit encodings (timing/thumb16_table.py, timing/thumb32_table.py) of the decode store DIR
that `mcusim prepare` filled (MCUSIM_DECODE_CACHE=DIR), as a first run after prepare does.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "unit")]

from mcusim.code_files import thumb_code  # noqa: E402
from mcusim.timing import m4_descriptors  # noqa: E402
from mcusim.timing.decode_store import store_for  # noqa: E402
from test_m4_native_rows import BASE, decoders, rows  # noqa: E402


def is_it(code: bytes) -> bool:
    halfword = int.from_bytes(code[:2], "little")
    return halfword & 0xFF00 == 0xBF00 and halfword & 0xF != 0


def wide(code: bytes) -> bool:
    return int.from_bytes(code[:2], "little") >= 0xE800


def encodings_of(path: Path) -> set[bytes]:
    """The halfwords and 32-bit encodings of an executable ELF's executable segments (what data
    they hold too), or of an object's or an ar archive's Thumb code (code_files), read as Thumb
    code."""
    with open(path, "rb") as f:
        executable = f.read(4) == b"\x7fELF" and ELFFile(f).header["e_type"] == "ET_EXEC"
        if executable:
            pieces = [segment.data() for segment in ELFFile(f).iter_segments()
                      if segment["p_type"] == "PT_LOAD" and segment["p_flags"] & 1]
    if not executable:
        pieces = thumb_code(path)
    found = set()
    for data in pieces:
        at = 0
        while at + 4 <= len(data):
            size = 4 if wide(data[at: at + 2]) else 2
            found.add(data[at: at + size])
            at += size
    return found


def variant(code: bytes, rng: random.Random) -> bytes:
    """`code` with register fields (and some bits around them) changed."""
    if len(code) == 2:
        return (int.from_bytes(code, "little") ^ rng.randrange(0x40)).to_bytes(2, "little")
    first, second = int.from_bytes(code[:2], "little"), int.from_bytes(code[2:], "little")
    first ^= rng.choice([0, 0xF, 0x4F]) & rng.randrange(0x10000)
    second ^= rng.choice([0xF000, 0x0F00, 0x000F, 0xFF0F, 0xF0AF]) & rng.randrange(0x10000)
    return first.to_bytes(2, "little") + second.to_bytes(2, "little")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--wide", type=int, default=30000, help="random 32-bit encodings")
    parser.add_argument("--variants", type=int, default=2, help="register variants of each ELF encoding")
    parser.add_argument("--prepared", type=Path, help="a decode store mcusim prepare filled (see above)")
    parser.add_argument("elf", nargs="*", type=Path, help="ELF files, objects or ar archives (default: the kit's builds)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    elfs = args.elf or sorted((ROOT / "firmware" / "build").glob("mcu-m/*.elf"))
    plain = [h.to_bytes(2, "little") for h in range(0xE800) if not is_it(h.to_bytes(2, "little"))]
    plain += [rng.randrange(0xE800, 0x10000).to_bytes(2, "little") + rng.randrange(0x10000).to_bytes(2, "little")
              for _ in range(args.wide)]
    for elf in elfs:
        for code in sorted(encodings_of(elf)):
            for changed in [code] + [variant(code, rng) for _ in range(args.variants)]:
                if not is_it(changed) and (len(changed) == 4) == wide(changed):
                    plain.append(changed)
    rng.shuffle(plain)
    sequence = []
    for code in plain:
        if rng.random() < 0.1:  # an IT block before it
            mask = rng.randrange(1, 16)
            sequence.append((0xBF00 | rng.randrange(14) << 4 | mask).to_bytes(2, "little"))
            sequence += [rng.choice(plain) for _ in range(4 - ((mask & -mask).bit_length() - 1))]
        sequence.append(code)
    counts = {"renamed": 0, "from the 16-bit table": 0, "from the 32-bit table": 0}
    for name, method in (("renamed", "add_renamed"), ("from the 16-bit table", "add_short"),
                         ("from the 32-bit table", "add_wide")):
        def counted(self, *args, name=name, found=getattr(m4_descriptors.Descriptors, method)):
            entry = found(self, *args)
            counts[name] += entry is not None
            return entry

        setattr(m4_descriptors.Descriptors, method, counted)
    patterns = None
    if args.prepared:
        os.environ["MCUSIM_DECODE_CACHE"] = str(args.prepared)
        fast, _ = decoders(b"")
        patterns = store_for([], fast.timing, fast.instruction_cycles).pattern_file
        if not (patterns.is_file() and patterns.with_name("m4-thumb16.bin").is_file()):
            parser.error(f"{args.prepared}: no patterns and tables of this mcusim's Cortex-M4 model "
                         f"({patterns.parent.name}): run mcusim prepare with MCUSIM_DECODE_CACHE={args.prepared}")
    started, bad = time.perf_counter(), 0
    for at in range(0, len(sequence), 64):
        code = b"".join(sequence[at: at + 64])
        fast, reference = decoders(code)
        if patterns is not None:
            fast._m4.use_file(patterns)
        for decoder in (fast, reference):
            decoder.decode(BASE, BASE + len(code))
        if not np.array_equal(rows(fast), rows(reference)):
            bad += 1
            print(f"differs: {code.hex()}")
    found = ", ".join(f"{count:,} {name}" for name, count in counts.items())
    print(f"{len(sequence):,} instructions in {len(sequence) // 64 + 1:,} ranges, {found}, "
          f"{bad} ranges differ ({time.perf_counter() - started:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
