"""`mcusim prepare`: the native code compiled, and the register patterns of compiled code
described, ahead of the first run.

numba compiles the hooks the first time a run needs them: 8 to 18 s before the first instruction of
the first run after an install (docs/performance.md). This does it once, ahead of time
(scripts/setup.sh runs it): every block hook variant and every other hook, the decoder's walk
of the encoding tables (machine/native/table_walk.py), then two bundled examples on every board
with and without the captures (the decode store off, so that they decode
their code), so the functions Python calls are compiled for the arguments runs give them. Their
machine code goes to the object store (machine/native/object_store.py), from which later runs load
it without numba; a function nothing here used is compiled when a run first needs it, as before.
Then every bundled example's whole code is decoded once per core model (timing/pattern_store.py,
timing/m7_patterns.py), and so is the code of the libraries arm-none-eabi-gcc links for that
core (newlib's C and maths libraries, libgcc) and of any file given (code_files), so that the
first run of any firmware renames the register patterns compiled code uses instead of
describing each from capstone's detail; on the Cortex-M4 every 16-bit encoding is described
(timing/thumb16_table.py), and every 32-bit one met in all that code (timing/thumb32_table.py),
so that those are a look-up (docs/performance.md).
"""
from __future__ import annotations

import contextlib
import itertools
import os
import time

CAPTURES = dict(profile=True, pc_sample_cycles=997, branch_trace=True, swo=True, timeline=True,
                memory_traffic=True, power_trace=True)
EXAMPLES = ("hello", "bench")  # (bench: long enough for the profile's lines and the sampled data windows)


def hooks() -> list[tuple[str, object]]:
    """Every hook (named), each with its `address`: the block hook's variants, the module-level
    ones (jit._Cfunc) and the front Unicorn calls before the block hook (held_front.py)."""
    from .machine.native import console_uart, hooks as native_hooks
    from .machine.native.held_front import HELD_FRONT
    from .machine.native.jit import _Cfunc

    every = [native_hooks.Features(*on) for on in itertools.product((False, True), repeat=len(native_hooks.Features._fields))]
    found = [(f"block hook ({', '.join(name for name, on in features._asdict().items() if on) or 'core timing'}"
              f"{', branch predictor' if predictor else ''})", native_hooks.block_hook_for(features, predictor))
             for predictor in (False, True) for features in every]
    for module in (native_hooks, console_uart):
        found += [(name, value) for name, value in vars(module).items() if isinstance(value, _Cfunc)]
    return found + [("the block hook's front (held repeats)", HELD_FRONT)]


def prepare(say=print, learn: tuple = ()) -> int:
    """Compile (or load) everything above into the store; `say` gets a line per step; `learn`:
    compiled files whose register patterns are described too (describe_patterns). Returns the
    number of steps."""
    from . import examples
    from .api import Simulator
    from .config import board_names
    from .machine.native import table_walk

    steps = 0
    for name, hook in hooks():
        started = time.perf_counter()
        hook.address  # noqa: B018  (compiles, or loads, and keeps it in the store)
        say(f"{name}: {time.perf_counter() - started:.1f} s")
        steps += 1
    started = time.perf_counter()
    table_walk.compile_ahead()
    say(f"the decoder's walk of the encoding tables: {time.perf_counter() - started:.1f} s")
    with _decode_store_off():
        for board, example in itertools.product(board_names(), EXAMPLES):
            try:
                elf = examples.path(example, board)
            except LookupError as missing:
                say(f"{board}: skipped ({missing})")
                continue
            for options in ({}, CAPTURES, dict(power=False)):
                started = time.perf_counter()
                result = Simulator(elf, board, **options).run()
                kind = "captures" if options is CAPTURES else \
                    ", ".join(f"{k}={v}" for k, v in options.items()) or "default"
                say(f"{example} on {board} ({kind}): exit {result.exit_code}, {time.perf_counter() - started:.1f} s")
                steps += 1
    return steps + describe_patterns(say, learn=learn)


@contextlib.contextmanager
def _decode_store_off():
    """The decode store off (MCUSIM_DECODE_CACHE) while the examples run, so that they decode
    their code and the native code decoding calls (the Cortex-M4 rows, the Cortex-M7 start
    schedule) is compiled and stored even where the decode store holds their rows already (a
    second `mcusim prepare`, after the native store's folder changed): else the first run of new
    firmware compiles it."""
    given = os.environ.get("MCUSIM_DECODE_CACHE")
    os.environ["MCUSIM_DECODE_CACHE"] = "off"
    try:
        yield
    finally:
        if given is None:
            del os.environ["MCUSIM_DECODE_CACHE"]
        else:
            os.environ["MCUSIM_DECODE_CACHE"] = given


def describe_patterns(say=print, programs: list[str] | None = None, learn: tuple = (), toolchain: bool = True) -> int:
    """Decode all of every bundled example (or of `programs`) on the first board of each core
    model whose decoder keeps register patterns, then the code of the files in `learn` and (with
    `toolchain`) of the libraries arm-none-eabi-gcc links for that core (code_files), and keep
    the patterns (and the examples' decoded rows) in the decode store. Returns the number of
    images decoded."""
    from . import examples
    from .api import Simulator
    from .code_files import NotCode, thumb_code, toolchain_libraries
    from .config import board_names, load_board

    done, images = set(), 0
    known = examples.available()
    pieces: dict = {}  # file -> its Thumb code (read once for every core model)
    for board in board_names():
        started, count, patterns = time.perf_counter(), 0, None
        for program in programs if programs is not None else sorted(known):
            if board not in known.get(program, ()):
                continue
            decoder = Simulator(examples.path(program, board), board).machine.decoder
            patterns = decoder.pattern_file
            if patterns is None or patterns in done and count == 0:
                break  # (a core model without patterns, the store off, or this model's done)
            decoder.decode_all()
            decoder.save_store()
            count += 1
        if count:
            done.add(patterns)
            images += count
            say(f"register patterns of {count} examples' code on {board}: {time.perf_counter() - started:.1f} s")
            files = list(learn) + (toolchain_libraries(load_board(board).core.name) if toolchain else [])
            for path in files:
                started = time.perf_counter()
                if path not in pieces:
                    try:
                        pieces[path] = thumb_code(path)
                    except (NotCode, OSError) as error:
                        say(f"skipped {path}: {error}")
                        pieces[path] = []
                instructions = decoder.learn_patterns(pieces[path])
                say(f"register patterns of {path} ({instructions:,} instructions) on {board}: "
                    f"{time.perf_counter() - started:.1f} s")
            decoder.save_store()  # (the patterns learned from them all, written once)
            started = time.perf_counter()
            if decoder.write_encoding_tables():
                say(f"the tables of encodings met on {board}: {time.perf_counter() - started:.1f} s")
    return images
