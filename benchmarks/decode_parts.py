"""Where the time of decoding code first seen goes, part by part, in one run of an ELF in this
process: host microseconds per decoded instruction and per call of each part (each part's own
time includes the parts it calls: the renamed descriptor includes the register pattern and the
pattern file's reading), and the counts of encodings described from capstone's detail and renamed
from their register pattern (timing/register_pattern.py).

    python benchmarks/decode_parts.py ELF BOARD [--store DIR|off] [--all] [--no-gc] [--kept] [--capstone-first]

--store: the decode store folder (MCUSIM_DECODE_CACHE; default off, so no pattern file: a first
run on a fresh install). --all: decode every code range of the image instead of running it (as
`mcusim prepare` does). --no-gc: Python's garbage collector off (its pauses fall on whatever
allocates when they are due; its own time is given apart either way, within decoding and in the rest
of the run, where a full collection falls due as the store is saved). --kept: also count the
objects the collector tracks that the run keeps (full collections before and after it: each
later full collection walks them; the collections then fall elsewhere, so compare times from
runs without it). --capstone-first: capstone loaded before the run (capstone is loaded
when first needed, once a process: by the decode's first cheap pass, or on a vendor
board often earlier, by the access locator at the first MMIO access; with it, no part includes
it, so trees that need capstone at different points compare alike: a tree that imports
capstone's Python package for it has it imported, one that calls its library has that loaded). Each wrapped call adds
a little time of its own (under a microsecond): compare parts within a run, and totals with
benchmarks/compare_trees.py --decode.
"""
from __future__ import annotations

import argparse
import functools
import gc
import importlib
import os
import sys
import time

PARTS = [  # (module, attribute, label), in the order printed
    ("mcusim.timing.decoder", "lite_runs", "capstone's cheap pass (lite_runs)"),
    ("mcusim.timing.m4_descriptors", "register_pattern", "register pattern"),
    ("mcusim.timing.m4_descriptors", "read_patterns", "pattern file read"),
    ("mcusim.timing.m4_descriptors.Descriptors", "add_short", "16-bit table (add_short)"),
    ("mcusim.timing.m4_descriptors.Descriptors", "add_renamed", "renamed descriptor (add_renamed)"),
    ("mcusim.timing.m4_descriptors", "instructions_of", "capstone's detail (instructions_of)"),  # (an older mcusim)
    ("mcusim.timing.m4_descriptors", "detail_of", "capstone's detail (instructions_of)"),  # (its caller now)
    ("mcusim.timing.m4_descriptors.Descriptors", "add", "model's description (Descriptors.add)"),  # DESCRIBED
    ("mcusim.timing.decode_store", "_read_siblings", "other images' decode files read"),
    ("mcusim.timing.decoder", "table_walk", "the tables' encodings found natively (table_walk)"),
    ("mcusim.timing.decoder", "m4_rows", "native rows (m4_rows)"),
    ("mcusim.timing.decoder.Decoder", "_walk", "each range's encodings found (_walk)"),
    ("mcusim.timing.decoder.Decoder", "_describe_pending", "new encodings outside IT blocks (_describe_pending)"),
    ("mcusim.timing.decoder", "detail_of", "Cortex-M7: capstone's detail (detail_of)"),  # (an older mcusim)
    ("mcusim.timing.m7_descriptors", "detail_of", "Cortex-M7: capstone's detail (detail_of)"),  # (its caller now)
    ("mcusim.timing.m7_descriptors.Descriptors", "_describe", "Cortex-M7: model's description (m7 _describe)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "_rename", "Cortex-M7: renamed descriptor (_rename)"),
    ("mcusim.timing.m7_table", "read_table", "Cortex-M7: encoding table read (m7_table)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "add_new", "Cortex-M7: encodings new to the run described (add_new)"),
    ("mcusim.timing.m7_descriptors", "read_patterns", "Cortex-M7: pattern file read"),
    ("mcusim.timing.m7_patterns.Patterns", "get", "Cortex-M7: pattern file records (Patterns.get)"),
    ("mcusim.timing.m7_patterns", "template_of", "Cortex-M7: their templates read (template_of)"),
    ("mcusim.timing.immediate_forms.FormIndex", "__init__", "an encoding table's forms indexed (FormIndex)"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "add_idents", "Cortex-M7: idents of the table's rows (add_idents)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "_table_placed",  # (an older mcusim)
     "Cortex-M7: encoding table placed (_table_placed)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "walk_tables", "Cortex-M7: the table ready to walk (walk_tables)"),
    ("mcusim.timing.m4_descriptors.Descriptors", "walk_tables", "Cortex-M4: the tables ready to walk (walk_tables)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "add_wide", "Cortex-M7: encoding table look-ups (add_wide)"),
    ("mcusim.timing.m7_descriptors.Descriptors", "add_in_it",
     "Cortex-M7: encoding table look-ups inside IT blocks (add_in_it)"),
    ("mcusim.timing.instruction", "instructions_of", "capstone's detail (instruction.instructions_of)"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "cost", "Cortex-M7: in-sequence cost (Python)"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "start_adjustments", "Cortex-M7: block-start schedules"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "pipeline_before", "Cortex-M7: pipeline to native"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "take_pipeline", "Cortex-M7: pipeline from native"),
    ("mcusim.timing.cortex_m7.CortexM7Timing", "state_text", "Cortex-M7: pipeline state as text (state_text)"),  # (an older mcusim)
    ("mcusim.timing.decoder", "m7_rows", "Cortex-M7: native rows (m7_rows)"),
    ("mcusim.timing.decoder.Decoder", "_write_rows", "rows written"),
    ("mcusim.machine.native.object_store.Store", "load",
     "native code loaded from the object store (Store.load; the Simulator's construction too)"),
    ("mcusim.timing.decoder.Decoder", "decode_block", "decode, in all"),
    ("mcusim.timing.decoder.Decoder", "_fresh_schedule", "a block start's schedule in Python (_fresh_schedule)"),
    ("mcusim.timing.decoder.Decoder", "start_prefix",
     "a dual-issue core's block start at a mid-block stop (start_prefix: not in decode_block)"),
]


DESCRIBED = "model's description (Descriptors.add)"
DESCRIBED_M7 = "Cortex-M7: capstone's detail (detail_of)"


def _owner(path: str):
    """The module, or the class (a path ending in a capitalised name), `path` names (None: not in
    the mcusim measured)."""
    module, _, last = path.rpartition(".")
    if last[:1].isupper():
        return getattr(sys.modules.get(module), last, None)
    return sys.modules.get(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("elf")
    parser.add_argument("board")
    parser.add_argument("--store", default="off")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--no-gc", action="store_true")
    parser.add_argument("--kept", action="store_true")
    parser.add_argument("--capstone-first", action="store_true")
    args = parser.parse_args()
    if args.capstone_first:
        lazy = importlib.import_module("mcusim.timing.lazy_capstone")
        if hasattr(lazy, "package_disassembler"):  # (capstone's library called directly)
            lazy.thumb()
        else:
            importlib.import_module("capstone")
    os.environ["MCUSIM_DECODE_CACHE"] = args.store
    for module in sorted({path.rpartition(".")[0] if path.rpartition(".")[2][:1].isupper() else path
                          for path, _, _ in PARTS}):
        try:
            importlib.import_module(module)
        except ImportError:  # (an older mcusim, measured for comparison)
            pass
    from mcusim.api import Simulator

    spent, calls, results = {}, {}, {"renamed": 0}
    for path, name, label in PARTS:
        owner = _owner(path)
        original = getattr(owner, name, None) if owner is not None else None
        if original is None:  # (an older mcusim, measured for comparison)
            continue

        def timed(*a, _original=original, _label=label, **k):
            started = time.perf_counter()
            try:
                result = _original(*a, **k)
                if "renamed descriptor" in _label and result is not None:
                    results["renamed"] += 1
                return list(result) if _label.startswith("capstone's cheap") else result
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - started
                calls[_label] = calls.get(_label, 0) + 1
        setattr(owner, name, functools.wraps(original)(timed))
    collecting = [0.0, 0.0, 0.0]  # the collector's time in all, when a pause started, its time while decoding
    decoding = [False]
    from mcusim.timing.decoder import Decoder
    decode_block = Decoder.decode_block

    def flagged(*a, **k):
        decoding[0] = True
        try:
            return decode_block(*a, **k)
        finally:
            decoding[0] = False
    Decoder.decode_block = functools.wraps(decode_block)(flagged)

    def collector(phase, info):
        if phase == "start":
            collecting[1] = time.perf_counter()
        else:
            collecting[0] += time.perf_counter() - collecting[1]
            collecting[2] += (time.perf_counter() - collecting[1]) if decoding[0] else 0.0

    simulator = Simulator(args.elf, args.board)
    decoder = simulator.machine.decoder
    if args.no_gc:
        gc.disable()
    tracked_before = _tracked() if args.kept else None
    gc.callbacks.append(collector)
    if args.all:
        for start, _ in list(decoder._ranges):  # (Decoder.decode_all, also in an older mcusim)
            decoder.decode_block(start, 2)
    else:
        simulator.run()
    gc.callbacks.remove(collector)
    if args.kept:
        started = time.perf_counter()
        tracked_after = _tracked()
        walk = (time.perf_counter() - started) / 3
    decoded = decoder.instructions_decoded
    print(f"{os.path.basename(args.elf)} on {args.board}: {decoded:,} instructions decoded "
          f"({decoder.instructions_copied:,} copied), {calls.get(DESCRIBED, 0) + calls.get(DESCRIBED_M7, 0):,} "
          f"encodings described from capstone's detail, {results['renamed']:,} renamed from their register pattern")
    print("| part | calls | us per call | us per decoded instruction |\n|---|---|---|---|")
    for label in dict.fromkeys(label for _, _, label in PARTS):
        if label in spent:
            print(f"| {label} | {calls[label]:,} | {1e6 * spent[label] / calls[label]:.1f} | "
                  f"{1e6 * spent[label] / max(decoded, 1):.1f} |")
    print(f"| garbage collector while decoding (in the parts above) | | | {1e6 * collecting[2] / max(decoded, 1):.1f} |")
    print(f"| garbage collector in the whole run (not decode: saving the store at its end, ...) | | | "
          f"{1e6 * (collecting[0] - collecting[2]) / max(decoded, 1):.1f} |")
    if args.kept:
        print(f"objects the garbage collector tracks, kept by the run: {tracked_after - tracked_before:,} "
              f"(a full collection then walks {tracked_after:,} in {1e3 * walk:.1f} ms)")


def _tracked() -> int:
    """The objects the garbage collector tracks after full collections (three: one stops tracking
    a tuple only once it has seen the tuple's items untracked)."""
    for _ in range(3):
        gc.collect()
    return len(gc.get_objects())


if __name__ == "__main__":
    main()
