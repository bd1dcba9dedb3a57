"""Memory use of a run (run.json `memory`): the footprint the ELF places in each memory bank of
the board, and the stack and heap peaks the run reached.

The stack's peak is the deeper of two measures. The block hook reads SP as a block starts after
one that may have moved it (the decoder's F_SP_WRITE) and keeps the lowest in the main stack's
space, with the block, which names the function that reached it; a leaf function whose whole
frame lives inside one block is not seen that way. The RAM scan below sees it. Both heap and
stack are also read from RAM after the run, at no cost per instruction: the simulator starts
the free RAM between the image and the initial stack pointer zeroed (as QEMU does), so a word
that is no longer zero (nor the fill value, when start-up code filled that space itself) was
written. The stack grows down from the initial SP and the heap up from the image's end (the
layout SYS_HEAPINFO describes); in RAM they share, the longest run of untouched words
separates them (unless the heap's first word was never written: then there is no heap). A
stack word written with zero is not seen, so the stack peak can fall short by the zeros at the
bottom of the deepest frame. The process stack (Thread mode with CONTROL.SPSEL set, as an RTOS
runs its threads) is measured by the block hook alone: from the highest SP it had to the lowest.
"""
from __future__ import annotations

import numpy as np

from .. import pages
from ..elf import SHT_NOBITS
from ..machine.semihosting import heap_info, ram_spans
from .sampling import function_names


def _bank_of(board, address: int):
    """The bank holding an address (an alias resolved to the memory it shows); None outside."""
    region = board.region_at(address)
    return None if region is None else board.storage_region(region)


def _sections(image):
    """(name, address, load address, size, occupies file bytes) of each allocated section."""
    found = []
    for section in image.sections:
        address, size = section.address, section.size
        load = address
        for segment in image.segments:
            if section.name in segment.sections:
                load = address - segment.vaddr + segment.paddr
                break
        found.append((section.name, address, load, size, section.type != SHT_NOBITS))
    return found


def footprint(image, board) -> dict:
    """Flash bytes (code, read-only data and the initialised-data image: every section with
    contents loaded into flash) and RAM bytes (data and bss: every section placed in RAM, and
    load images there, as on the MPS2 boards whose code runs from RAM), and per bank the bytes
    used against its size, by section."""
    banks = {m.name: {"name": m.name, "kind": m.kind, "base": m.base, "size_bytes": m.size_bytes, "used_bytes": 0,
                      "sections": {}} for m in sorted(board.memory, key=lambda m: m.base) if not m.alias_of}

    def add(address: int, name: str, size: int) -> str | None:
        placed = _bank_of(board, address)
        if placed is None:
            return None
        bank = banks[placed.name]
        bank["used_bytes"] += size
        bank["sections"][name] = bank["sections"].get(name, 0) + size
        return bank["kind"]

    totals = {"flash": 0, "ram": 0}
    for name, address, load, size, has_contents in _sections(image):
        placements = [add(address, name, size)]
        if has_contents and load != address:
            placements.append(add(load, f"{name} (load image)", size))
        for kind in placements:
            if kind in totals:
                totals[kind] += size
    listed = [dict(bank, used_fraction=bank["used_bytes"] / bank["size_bytes"] if bank["size_bytes"] else 0.0)
              for bank in banks.values()]
    return {"flash_bytes": totals["flash"], "ram_bytes": totals["ram"], "banks": listed}


def _initial_words(image, begin: int, end: int) -> np.ndarray:
    """What the loader left in RAM [begin, end): zero, except loaded segments placed there."""
    initial = np.zeros(end - begin, np.uint8)
    for segment in image.segments:
        low, high = max(begin, segment.paddr), min(end, segment.paddr + len(segment.data))
        if low < high:
            initial[low - begin: high - begin] = np.frombuffer(segment.data, np.uint8)[low - segment.paddr:
                                                                                        high - segment.paddr]
    return initial.view("<u4")


def _untouched(words: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """True where a word still holds what it started with, or the value more than half of the
    area holds (start-up code that filled the free RAM with a pattern)."""
    same = words == initial
    fill = majority(words)
    if fill is not None:
        same |= words == fill
    return same


def majority(values: np.ndarray):
    """The value more than half of `values` hold, or None, in linear time (sorting a stack area of
    megabytes for its most common value took milliseconds of every run). The middle value is
    counted first: in RAM mostly as the loader left it, it is the one. Else neighbours are paired:
    a pair of two values cancels out, which leaves a value held by more than half still so, and an
    equal pair stands for two of its value, one level up; an odd one out of an odd length stands
    for its level's count of words. Boyer and Moore's majority vote over what is left, weighted so,
    gives the one candidate, which is counted."""
    if len(values) and 2 * np.count_nonzero(values == values[len(values) // 2]) > len(values):
        return values[len(values) // 2]
    left, rest, weight = [], values, 1  # (left: (value, the words it stands for))
    while len(rest) > 1:
        if len(rest) % 2:
            left.append((rest[-1], weight))
            rest = rest[:-1]
        rest = rest[0::2][rest[0::2] == rest[1::2]]
        weight *= 2
    left += [(value, weight) for value in rest.tolist()]
    candidate, votes = None, 0
    for value, words in left:
        if votes == 0 or value == candidate:
            candidate, votes = (value if votes == 0 else candidate), votes + words
        elif words > votes:
            candidate, votes = value, words - votes
        else:
            votes -= words
    if votes and 2 * np.count_nonzero(values == candidate) > len(values):
        return candidate
    return None


def _longest_run(flags: np.ndarray) -> tuple[int, int]:
    """[start, end) of the longest run of True in `flags` ((0, 0) when none): the first of the
    longest, found from where the flags change (no padded copy of a stack area's megabytes)."""
    changes = np.flatnonzero(flags[1:] != flags[:-1]) + 1
    starts = changes[~flags[changes - 1]]  # (a change to True)
    ends = changes[flags[changes - 1]]     # (a change to False)
    if len(flags) and flags[0]:
        starts = np.concatenate(([0], starts))
    if len(flags) and flags[-1]:
        ends = np.concatenate((ends, [len(flags)]))
    if not len(starts):
        return 0, 0
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k])


def _first_touched(untouched: np.ndarray) -> int:
    """The index of the first word written (len when none was)."""
    first = int(np.argmin(untouched)) if len(untouched) else 0  # (the first False, or 0 when all are True)
    return first if len(untouched) and not untouched[first] else len(untouched)


def _last_touched(untouched: np.ndarray) -> int:
    """The index of the last word written (-1 when none was)."""
    return len(untouched) - 1 - _first_touched(untouched[::-1]) if len(untouched) else -1


def _in_ram(board, begin: int, end: int) -> bool:
    """Whether [begin, end) lies in one run of adjacent RAM."""
    return any(span[0][0] <= begin and end <= span[-1][1] for span in ram_spans(board))


def peaks(read_words, image, board, initial_sp: int) -> dict:
    """The main stack's and the heap's high-water marks, from RAM as the run left it (`read_words`:
    begin, end -> the words there); None for each when its space is not in RAM (an initial SP
    outside it, say)."""
    heap_base, heap_limit, stack_base, stack_limit = heap_info(board, image.segments, initial_sp)
    stack_top = initial_sp or stack_base
    shared = heap_limit == stack_base
    low = heap_base if shared else stack_limit
    low, high = low & ~3, stack_top & ~3
    result = {"stack_top": stack_top, "heap_base": heap_base, "stack_peak_bytes": 0, "heap_peak_bytes": 0,
              "lowest_sp": stack_top}
    if not _in_ram(board, low, high):
        return dict(result, stack_peak_bytes=None, lowest_sp=None, heap_peak_bytes=None if shared else 0)
    if high > low:
        untouched = _untouched(read_words(low, high), _initial_words(image, low, high))
        if shared:
            if untouched[0]:  # the heap's first word never written: no heap, the stack is all that was
                gap_start, gap_end = 0, _first_touched(untouched)
            else:
                gap_start, gap_end = _longest_run(untouched)
            result["heap_peak_bytes"] = 4 * gap_start if gap_start else 0
            stack_from = gap_end
        else:
            stack_from = _first_touched(untouched)
        result["stack_peak_bytes"] = high - (low + 4 * stack_from)
        result["lowest_sp"] = low + 4 * stack_from
    if not shared and heap_limit > heap_base and _in_ram(board, heap_base, heap_limit):
        untouched = _untouched(read_words(heap_base, heap_limit), _initial_words(image, heap_base, heap_limit))
        result["heap_peak_bytes"] = 4 * (_last_touched(untouched) + 1)
    return result


def changed_bytes(storage: np.ndarray, image, bank) -> int:
    """Bytes of a RAM bank (`storage`: the host buffer behind it) that no longer hold what the
    loader left there (4 per changed word): a lower bound of what the run wrote, since a write of
    the same value does not show. Counted as non-zero words, corrected where loaded segments lie
    (a bank can be tens of MB: no copy is made, and the pages never touched, zeros, are not read)."""
    base, end = bank["base"], bank["base"] + (bank["size_bytes"] & ~3)
    words = storage[: end - base].view("<u4")
    ranges = pages.populated(words)  # (the pages never touched hold zeros: not read)
    if ranges is None:
        changed = int(np.count_nonzero(words))
    else:
        changed = sum(int(np.count_nonzero(words[a // 4: -(-b // 4)])) for a, b in ranges)
    for segment in image.segments:
        low, high = max(base, segment.paddr) & ~3, min(end, segment.paddr + len(segment.data) + 3) & ~3
        if low < high:
            part = words[(low - base) // 4: (high - base) // 4]
            changed += int(np.count_nonzero(part != _initial_words(image, low, high))) - int(np.count_nonzero(part))
    return 4 * changed


def memory_use(image, board, read_memory, storage: dict[str, np.ndarray], initial_sp: int,
               tracked_sp: int | None = None, tracked_at: int = -1,
               process_stack: tuple[int, int, int] | None = None, sbrk_peak: int | None = None) -> dict:
    """run.json's `memory`: the footprint, each RAM bank's changed bytes (`storage`: the host
    buffer of each bank by name) and the peaks. `tracked_sp`: the lowest SP the block
    hook saw at a block start (and `tracked_at`, that block): the deeper of it and the scan
    counts, and the function of that block is named as the one that reached the stack peak.
    `process_stack`: (lowest SP, its block, highest SP) of the process stack, when Thread mode
    ran on it: its peak is the span between them (the highest is where the firmware started it).
    `sbrk_peak`: the most heap _sbrk handed out at once (None: the image has no _sbrk)."""
    used = footprint(image, board)
    for bank in used["banks"]:
        if bank["kind"] == "ram" and bank["name"] in storage:
            bank["changed_bytes"] = changed_bytes(storage[bank["name"]], image, bank)

    def read_words(begin: int, end: int) -> np.ndarray:
        """[begin, end) as words: a view of its bank's storage where one bank holds it (no copy of
        a stack area of megabytes), else as the debugger reads it."""
        pieces = board.regions_covering(begin, end - begin)
        if pieces is not None and len(pieces) == 1:
            region, start, stop = pieces[0]
            bank = storage.get(board.storage_region(region).name)
            if bank is not None and (start - region.base) % 4 == 0:
                return bank[start - region.base: stop - region.base].view("<u4")
        return np.frombuffer(read_memory(begin, end - begin), "<u4")

    used.update(peaks(read_words, image, board, initial_sp))
    used["stack_peak_function"] = None
    if tracked_sp is not None and used["lowest_sp"] is not None:
        if tracked_sp <= used["lowest_sp"]:
            used["lowest_sp"] = tracked_sp
            used["stack_peak_bytes"] = used["stack_top"] - tracked_sp
        if tracked_at >= 0:
            used["stack_peak_function"] = function_names(image.functions, np.array([tracked_at]))[0] or None
    used["heap_sbrk_peak_bytes"] = sbrk_peak
    used["process_stack"] = None
    if process_stack is not None:
        lowest, at, highest = process_stack
        used["process_stack"] = {"peak_bytes": highest - lowest, "lowest_sp": lowest, "highest_sp": highest,
                                 "peak_function": function_names(image.functions, np.array([at]))[0] or None}
    used["peaks_method"] = ("the lowest SP at a block start, and RAM scanned after the run for words no longer "
                            "as loaded (docs/profiling.md)")
    return used
