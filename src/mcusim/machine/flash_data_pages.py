"""Flash pages that hold no code, mapped as MMIO so their data reads are timed by a read
callback rather than a memory hook.

A memory hook costs twice: while any exists, Unicorn sends every load and store of the whole
address space to its slow path, and an access in the hooked range re-derives the PC from the
translated block (cpu_restore_state) before the call. An MMIO read skips the second, and once
no flash page needs a hook, the first. Code cannot run from MMIO (QEMU translates only from
RAM), so a page stays RAM, under the flash read hook, if any instruction is on it: pages are
data when no executable segment reaches them, or when the ELF's mapping symbols ($t/$d) mark
all of them as data (a stripped image keeps its executable segments as code).
"""
from __future__ import annotations

import numpy as np

from ..timing.decoder import code_ranges
from .native import hooks, layout


def data_page_runs(image, board, page_bytes: int) -> dict[str, list[tuple[int, int]]]:
    """Per flash storage region read through a flash port: the [start, end) offsets of its runs
    of whole pages with no code on them."""
    flash = {spec.region for spec in board.flash_ports}
    code: dict[str, list[tuple[int, int]]] = {name: [] for name in flash}

    def add(address: int, length: int) -> None:
        for region, start, end in board.regions_covering(address, length) or []:
            storage = board.storage_region(region).name
            if storage in code:
                code[storage].append((start - region.base, end - region.base))

    marked = code_ranges(image.segments, image.mapping_symbols)
    for segment in image.segments:
        if not segment.executable or not segment.data or segment.vaddr != segment.paddr:
            continue  # (a copy run elsewhere, e.g. code copied to RAM, is data where it is stored)
        start, end = segment.vaddr, segment.vaddr + len(segment.data)
        if any(start <= a < end for a, _ in image.mapping_symbols):
            inside = [(a, b) for a, b in marked if start <= a < end]
        else:
            inside = [(start, end)]  # stripped: all of it may be code
        for a, b in inside:
            add(a, b - a)
    runs: dict[str, list[tuple[int, int]]] = {}
    for name in flash:
        size = next(r.size_bytes for r in board.memory if r.name == name)
        taken = set()
        for a, b in code[name]:
            taken.update(range(a // page_bytes, (b - 1) // page_bytes + 1))
        runs[name] = []
        page = 0
        pages = size // page_bytes
        while page < pages:
            if page in taken:
                page += 1
                continue
            first = page
            while page < pages and page not in taken:
                page += 1
            runs[name].append((first * page_bytes, page * page_bytes))
    return runs


class FlashDataPages:
    """The MMIO pieces of a MemoryMap, each with the small array its read callback gets."""

    def __init__(self, uc, memory, state):
        self.state = state
        self.runs: list[tuple[np.ndarray, int]] = []  # (descriptor, size in bytes)
        for address, size, name, offset in memory.mmio_pieces:
            run = np.zeros(layout.DATA_RUN, np.int64)
            run[layout.RUN_STATE] = state.address
            run[layout.RUN_BASE] = address
            run[layout.RUN_BYTES] = memory.buffers[name].ctypes.data + offset
            hooks.map_flash_data_run(uc, run, size)
            self.runs.append((run, size))

    def timed(self, start: int, end: int, on: bool) -> list[tuple[int, int]]:
        """Time the data reads of the pieces in [start, end) or not (as a flash read hook
        there would); returns what of [start, end) is left for the hook, as [start, end) ranges."""
        left, at = [], start
        for run, size in sorted(self.runs, key=lambda r: int(r[0][layout.RUN_BASE])):
            base = int(run[layout.RUN_BASE])
            if start <= base and base + size <= end:
                run[layout.RUN_TIMED] = int(on)
                if base > at:
                    left.append((at, base))
                at = base + size
        if at < end:
            left.append((at, end))
        return left

    def moved(self) -> None:
        """The shared buffer moved: the callbacks find it at its new address."""
        for run, _ in self.runs:
            run[layout.RUN_STATE] = self.state.address
