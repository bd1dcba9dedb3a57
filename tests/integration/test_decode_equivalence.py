"""The memoised decoder (timing/instruction.py, the timing models' memos) fills exactly the
tables the plain one does: capstone's own detail instructions, every analysis made afresh.

Images of every kind the kit builds are decoded for their board both ways, once code range by
code range (as an image with symbols runs) and once in blocks in a shuffled order with no code
ranges (as a stripped image or code in RAM runs), and every table row, watched instruction and, on a
dual-issue core, block-start correction is compared. The memos are process-wide, so the later
images run mostly on encodings met before, as a long-lived process would."""
import bisect
import random

import numpy as np
import pytest

from mcusim.api import Simulator
from mcusim.config.loader import core_timing_table
from mcusim.machine import native as N
from mcusim.machine.native.m7_rows import NOT_NATIVE
from mcusim.timing.cortex_m4 import CortexM4Timing
from mcusim.timing.cortex_m7 import CortexM7Timing
from mcusim.timing.decoder import Decoder
from mcusim.timing.instruction import thumb_length

from conftest import BOARDS

QUICK = ["isa", "pipeline", "odd_shapes-opt"]
# More images of other shapes (the C library, exceptions, FP, both kernel variants): with QUICK
# they cover the kinds of code the kit builds without decoding all 28 images twice on six boards
# (which took minutes of the suite's time).
MORE = ["hello", "exceptions", "bench-float", "kws_dscnn_s-ref", "person_detection-opt"]


def reference_decoder(machine) -> Decoder:
    """A decoder on a state of its own, with capstone's instructions and nothing memoised."""
    core = machine.board.core
    table = core_timing_table(core)
    timing = CortexM7Timing(table, memoise=False) if core.timing_model == "cortex-m7" else CortexM4Timing(table)
    return Decoder(N.NativeState(), machine.read_memory, core.default_instruction_cycles,
                   is_writable=machine._is_writable, timing=timing, memoise=False)


def blocks(machine, ranges, seed: int) -> list[tuple[int, int]]:
    """The code ranges cut into blocks of 1 to 100 instructions, shuffled."""
    rng = random.Random(seed)
    found = []
    for start, end in ranges:
        address = start
        while address < end:
            stop = address
            for _ in range(rng.choice([1, 2, 3, 5, 8, 13, 30, 100])):
                if stop >= end:
                    break
                stop += thumb_length(int.from_bytes(machine.read_memory(stop, 2), "little"))
            found.append((address, stop - address))
            address = stop
    rng.shuffle(found)
    return found


def tables(decoder) -> dict:
    """Each decoded window's tables as the hooks read them (KIND, per-instruction values and
    prefix sums), one row per halfword, by base address."""
    state = decoder.state
    return {base: state.rows(index).T for index, (base, _, _) in enumerate(state.windows)}


def assert_same(decoder, reference, where: str) -> None:
    got, expected = tables(decoder), tables(reference)
    assert got.keys() == expected.keys(), where
    for base in expected:
        differ = np.argwhere(got[base] != expected[base])
        assert not len(differ), f"{where}: window 0x{base:x}, (field, halfword) {differ[:5].tolist()}"
    assert decoder.fp_instruction_addresses == reference.fp_instruction_addresses, where
    assert decoder.divides == reference.divides, where
    assert decoder.sevs == reference.sevs, where


def check(firmware_build, board: str, name: str) -> None:
    elf = firmware_build / board / f"{name}.elf"
    assert elf.exists(), f"{elf} is not built"
    machine = Simulator(elf, board).machine
    ranges = list(machine.decoder._ranges)
    assert ranges, "an image with mapping symbols has code ranges"

    decoder, reference = machine.decoder, reference_decoder(machine)
    reference.set_code_ranges(ranges)
    for start, _ in ranges:
        decoder.decode_block(start, 2)
        reference.decode_block(start, 2)
    assert_same(decoder, reference, f"{board} {name}, by code range")

    machine = Simulator(elf, board).machine
    decoder, reference = machine.decoder, reference_decoder(machine)
    decoder.set_code_ranges([])
    pieces = blocks(machine, ranges, seed=len(name))
    for start, size in pieces:
        decoder.decode_block(start, size)
        reference.decode_block(start, size)
    assert_same(decoder, reference, f"{board} {name}, in blocks")
    if hasattr(decoder.timing, "fresh_schedule"):
        for start, size in pieces[:200]:
            for pc in (start + 2, start + size):
                assert decoder.start_prefix(start, pc) == reference.start_prefix(start, pc), (board, name, start, pc)


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", QUICK)
def test_decode_equals_the_plain_decoder(firmware_build, board, name):
    check(firmware_build, board, name)


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", MORE)
def test_decode_equals_the_plain_decoder_on_more_images(firmware_build, board, name):
    check(firmware_build, board, name)


@pytest.mark.parametrize("board", ["mcu-d", "mps2-an500"])
def test_blocks_decoded_out_of_order_time_as_their_code_range(firmware_build, board):
    """A stripped image decodes each block as it first runs: a block run before the one just
    above it in memory is decoded again with it, as one run, so a dual-issue core's schedule
    carries across them as it does through the code range of an image with symbols."""
    elf = firmware_build / board / "odd_shapes-opt.elf"
    assert elf.exists(), f"{elf} is not built"
    machine = Simulator(elf, board).machine
    ranges = [(start, end) for start, end in machine.decoder._ranges if end - start >= 64][:20]
    for start, end in ranges:
        middle = start
        while middle < (start + end) // 2:
            middle += thumb_length(int.from_bytes(machine.read_memory(middle, 2), "little"))
        pieces = Simulator(elf, board).machine.decoder
        pieces.set_code_ranges([])
        pieces.decode_block(middle, end - middle)
        pieces.decode_block(start, middle - start)
        whole = Simulator(elf, board).machine.decoder
        whole.set_code_ranges([(start, end)])
        whole.decode_block(start, 2)
        assert_same(pieces, whole, f"0x{start:x}-0x{end:x} cut at 0x{middle:x}")


def _run_with_store(elf, board, store, monkeypatch):
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", store)
    simulator = Simulator(elf, board)
    result = simulator.run()
    state = simulator.machine.decoder.state
    return result, {base: state.rows(index).copy() for index, (base, _, _) in enumerate(state.windows)}, \
        simulator.machine.decoder


@pytest.mark.parametrize("board, name", [("mcu-s", "large-startup"), ("mcu-m", "exceptions"),
                                         ("mcu-d", "large-startup"), ("mps2-an500", "exceptions")])
def test_a_run_from_the_decode_store_equals_a_fresh_one(firmware_build, board, name, tmp_path, monkeypatch):
    """A second run of an image copies its rows from the decode store (timing/decode_store.py),
    all at its start (Decoder.preload), and computes, times and decodes exactly what a run
    without the store does: each instruction the run without it decoded has the same row. The
    preload may also copy a code range that did not run, whose bytes are those of one that did
    (`bx lr; nop` stubs): with the rows a decode of it gives."""
    elf = firmware_build / board / f"{name}.elf"
    fresh, _, fresh_decoder = _run_with_store(elf, board, "off", monkeypatch)
    _run_with_store(elf, board, str(tmp_path), monkeypatch)
    again, _, decoder = _run_with_store(elf, board, str(tmp_path), monkeypatch)
    assert decoder.instructions_copied == decoder.instructions_decoded > 1000
    assert (again.exit_code, again.instructions, again.cycles, again.stdout) == \
        (fresh.exit_code, fresh.instructions, fresh.cycles, fresh.stdout)
    costs, fresh_costs = _rows_by_window(decoder), _rows_by_window(fresh_decoder)
    assert costs.keys() >= fresh_costs.keys()
    written = sum(np.count_nonzero(rows[:, N.KIND] == N.KIND_START) for rows in costs.values())
    assert decoder.instructions_copied == written
    for base, rows in fresh_costs.items():
        decoded = rows[:, N.KIND] != 0
        assert np.array_equal(costs[base][decoded], rows[decoded]), f"{board} {name}: window 0x{base:x}"
        extra = (costs[base][:, N.KIND] != 0) & ~decoded
        assert all(decoder._ranges[bisect.bisect_right(decoder._range_starts, base + 2 * at) - 1][1] > base + 2 * at
                   for at in np.nonzero(extra)[0].tolist())  # (only code ranges copied besides)


@pytest.mark.parametrize("board", ["mcu-m", "mcu-d"])
def test_a_code_range_decodes_alike_whatever_ran_before_it(firmware_build, board):
    """Each code range is decoded as entered afresh: its rows do not depend on whether the
    range just before it in memory was decoded first (what the preload relies on)."""
    elf = firmware_build / board / "large-startup.elf"
    decoders = []
    for order in (1, -1):
        decoder = Simulator(elf, board).machine.decoder
        for start, _ in decoder._ranges[:400][::order]:
            decoder.decode_block(start, 2)
        decoders.append(decoder)
    assert_same(*decoders, f"{board}: ranges decoded upwards and downwards")


def test_a_second_run_copies_its_code_at_once(firmware_build, tmp_path, monkeypatch):
    """The second run of an image stops for decoding once, not once per code range first run."""
    elf = firmware_build / "mcu-m" / "large-startup.elf"
    stops = []
    decode_block = Decoder.decode_block
    monkeypatch.setattr(Decoder, "decode_block", lambda self, *block: (stops.append(block), decode_block(self, *block)))
    _run_with_store(elf, "mcu-m", str(tmp_path), monkeypatch)
    first = len(stops)
    stops.clear()
    _, _, decoder = _run_with_store(elf, "mcu-m", str(tmp_path), monkeypatch)
    assert first > 1000 and len(stops) == 1 and decoder.instructions_copied > 30000


def test_the_preload_leaves_room_for_the_code_it_does_not_hold(firmware_build, tmp_path, monkeypatch):
    """The preload fills half the decode windows at most: the rest of the code is copied as it
    first runs, with the same result."""
    from mcusim.timing import decoder as decoder_module

    elf = firmware_build / "mcu-m" / "large-startup.elf"
    fresh, _, _ = _run_with_store(elf, "mcu-m", "off", monkeypatch)
    _run_with_store(elf, "mcu-m", str(tmp_path), monkeypatch)
    monkeypatch.setattr(decoder_module, "MAX_WINDOWS", 8)
    windows = []
    preload = Decoder.preload
    monkeypatch.setattr(Decoder, "preload", lambda self: (preload(self), windows.append(len(self.state.windows))))
    again, _, decoder = _run_with_store(elf, "mcu-m", str(tmp_path), monkeypatch)
    assert windows == [4] and len(decoder.state.windows) > 4
    assert decoder.instructions_copied == decoder.instructions_decoded
    assert (again.instructions, again.cycles, again.stdout) == (fresh.instructions, fresh.cycles, fresh.stdout)


def _rows_by_window(decoder) -> dict:
    """Each decoded window's rows of its own instructions (Decoder._costs), by base address."""
    return {base: decoder._costs[index] for index, (base, _, _) in enumerate(decoder.state.windows)}


@pytest.mark.parametrize("board", ["mcu-d", "mps2-an500"])
def test_code_after_a_code_range_decodes_alike_whatever_was_decoded_between(firmware_build, board):
    """A code range leaves the Cortex-M7 schedule in no state: code outside the ranges that
    follows one (here: the second half of a function whose range is cut short) starts from an
    empty pipeline whether the range was decoded just before it or another range was decoded
    between (as a range copied from the decode store, which keeps no state, leaves it)."""
    elf = firmware_build / board / "odd_shapes-opt.elf"
    assert elf.exists(), f"{elf} is not built"
    machine = Simulator(elf, board).machine
    ranges = [(start, end) for start, end in machine.decoder._ranges if end - start >= 64][:20]
    assert len(ranges) >= 10
    halves = []
    for start, end in ranges:
        middle = start
        while middle < (start + end) // 2:
            middle += thumb_length(int.from_bytes(machine.read_memory(middle, 2), "little"))
        halves.append((start, middle, end))
    decoders = []
    for between in (False, True):
        decoder = Simulator(elf, board).machine.decoder
        decoder.set_code_ranges([(start, middle) for start, middle, _ in halves])
        for n, (start, middle, end) in enumerate(halves):
            decoder.decode_block(start, 2)
            if between:  # (another range, decoded before this one's second half)
                other = halves[(n + 1) % len(halves)]
                decoder.decode_block(other[0], 2)
            decoder.decode_block(middle, end - middle)
        decoders.append(decoder)
    assert_same(*decoders, f"{board}: the second halves after their ranges, with and without one between")


@pytest.mark.parametrize("first, then", [("mcu-s", "mcu-m"), ("mps2-an500", "mcu-d")])
def test_the_first_run_of_a_build_for_another_board_copies_the_same_code(firmware_build, first, then, tmp_path,
                                                                         monkeypatch):
    """The decode store finds the ranges another image shares (the same functions built for
    another board of the core) and computes exactly what a fresh decode does."""
    _run_with_store(firmware_build / first / "large-startup.elf", first, str(tmp_path), monkeypatch)
    elf = firmware_build / then / "large-startup.elf"
    fresh, fresh_tables, _ = _run_with_store(elf, then, "off", monkeypatch)
    again, tables, decoder = _run_with_store(elf, then, str(tmp_path), monkeypatch)
    assert decoder.instructions_copied > 0.8 * decoder.instructions_decoded
    assert (again.exit_code, again.instructions, again.cycles, again.stdout) == \
        (fresh.exit_code, fresh.instructions, fresh.cycles, fresh.stdout)
    assert tables.keys() == fresh_tables.keys()
    for base in tables:
        assert np.array_equal(tables[base], fresh_tables[base]), f"{then} after {first}: window 0x{base:x}"


def test_a_start_prefix_is_scheduled_once_per_code(firmware_build, monkeypatch):
    """The dual-issue core's schedule of a block's first instructions (start_prefix, at every
    mid-block stop) is kept by the code's bytes: asked again it is not made again, and code
    rewritten there (RAM) is scheduled afresh."""
    machine = Simulator(firmware_build / "mcu-d" / "pipeline.elf", "mcu-d").machine
    decoder = machine.decoder
    ranges = list(decoder._ranges)
    decoder.set_code_ranges([])
    pieces = blocks(machine, ranges, seed=7)
    for start, size in pieces:
        decoder.decode_block(start, size)
    made = []
    schedule = Decoder._fresh_schedule
    monkeypatch.setattr(Decoder, "_fresh_schedule", lambda self, *args: made.append(args) or schedule(self, *args))
    block, pc = next((start, start + size) for start, size in pieces
                     if decoder.start_prefix(start, start + size) != (0, 0, 0))
    first = decoder.start_prefix(block, pc)
    made.clear()
    assert decoder.start_prefix(block, pc) == first and made == []
    nops = b"\x00\xbf" * ((pc - block) // 2 + 1)
    monkeypatch.setattr(decoder, "_read", lambda address, size: nops[:size])
    assert decoder.start_prefix(block, pc) != first and len(made) == 1


def _instruction_starts(machine, start: int, end: int) -> list[int]:
    found, address = [], start
    while address < end:
        found.append(address)
        address += thumb_length(int.from_bytes(machine.read_memory(address, 2), "little"))
    return found


@pytest.mark.parametrize("board", ["mcu-d", "mps2-an500"])
def test_a_start_prefix_is_scheduled_natively_as_python_schedules_it(firmware_build, board, monkeypatch):
    """A block start at a mid-block stop is scheduled from the idents m7_rows kept of the
    range it lies in (native_start_prefix) with what Python's schedule of capstone's
    instructions gives (the plain decoder's), at every kind of instruction (IT blocks, 32-bit
    encodings, up to and past the start window); Python schedules it only where an
    instruction there is undecodable or in an IT block whose IT is before the block's start
    (capstone reads it without its IT from there), and then gives the same as the plain decoder.
    (tests/unit/test_m7_native_rows.py: a block at any halfword, and code changed since.)"""
    elf = firmware_build / board / "odd_shapes-opt.elf"
    assert elf.exists(), f"{elf} is not built"
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", "off")  # (rows from the store keep no idents: Python's then)
    machine = Simulator(elf, board).machine
    decoder, reference = machine.decoder, reference_decoder(machine)
    ranges = list(decoder._ranges)
    reference.set_code_ranges(ranges)
    for start, _ in ranges:
        decoder.decode_block(start, 2)
        reference.decode_block(start, 2)
    in_python = []
    schedule = Decoder._fresh_schedule
    monkeypatch.setattr(Decoder, "_fresh_schedule",
                        lambda self, *args: (in_python.append(args[0]) if self is decoder else None,
                                             schedule(self, *args))[1])
    rng = random.Random(11)
    window = decoder.timing.t["start_window"]
    asked = governed = 0
    for start, end in ranges:
        starts = _instruction_starts(machine, start, end)
        _, _, kept, in_it = decoder._kept_starts[start]  # (every range: each decoded, or copied from one, here)
        for at, block in enumerate(starts):
            later = starts[at + 1: at + 12] + [end]
            for pc in rng.sample(later, 1):
                scheduled = [address for address in starts[at:] if address < pc][:window]
                governed_before = any(start + it_at < block <= start + offset < pc for offset, it_at in in_it)
                by_python = governed_before or any(kept[(address - start) >> 1] == NOT_NATIVE for address in scheduled)
                before = len(in_python)
                assert decoder.start_prefix(block, pc) == reference.start_prefix(block, pc), (board, block, pc)
                assert len(in_python) == before + by_python, (board, block, pc)
                asked += 1
                governed += governed_before
    assert asked > 5000 and 0 < governed < asked / 10
