"""Flash read as MMIO, so its data reads are timed by a read callback rather than a memory
hook: the pages that hold no code at their own address, and the code pages that also hold
other sections' data through an alias.

A memory hook costs twice: while any exists, Unicorn sends every load and store of the whole
address space to its slow path, and an access in the hooked range re-derives the PC from the
translated block (cpu_restore_state) before the call. An MMIO read skips both. Code cannot run
from MMIO (QEMU translates only from RAM), so a page with any instruction on it stays RAM:
pages are data when no executable segment reaches them, or when the ELF's mapping symbols
($t/$d) mark all of them as data (a stripped image keeps its executable segments as code).
A code page's literal loads are timed by the block hook (timing/literal_loads.py); a code page
that also holds bytes of a non-executable section is read through its MMIO alias instead
(split_code_pages, FlashDataPages.route).
"""
from __future__ import annotations

import numpy as np
from unicorn import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH, UC_PROT_READ, UC_TLB_VIRTUAL

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


def split_code_pages(code_pages: list[tuple[int, int]], data_ranges: list[tuple[int, int]], page_bytes: int):
    """The [start, end) runs of flash code pages split into (what the block hook times, the
    PC-relative reads only: timing/literal_loads.py) and (the whole pages that also hold data of
    other sections, e.g. the .rodata on the page where .text ends, whose data reads go through
    their MMIO alias: every read of those pages, literal loads included), each sorted."""
    aliased = set()
    for a, b in code_pages:
        for c, d in data_ranges:
            lo, hi = max(a, c), min(b, d)
            if lo < hi:
                aliased.update(range(lo - lo % page_bytes, hi, page_bytes))
    literal, runs = [], []
    for a, b in sorted(code_pages):
        at = a
        while at < b:
            page_end = min(b, at - at % page_bytes + page_bytes)
            target = runs if at - at % page_bytes in aliased else literal
            if target and target[-1][1] == at:
                target[-1] = (target[-1][0], page_end)
            else:
                target.append((at, page_end))
            at = page_end
    return literal, runs


class FlashDataPages:
    """Flash read as MMIO, each piece with the small array its read callback gets: the pages
    with no code (memory.mmio_pieces, mapped so at their address), and the code pages
    (memory.flash_ram_pieces), each with an MMIO alias at CODE_ALIAS_OFFSET + its address that
    their data reads reach through hooks.code_page_tlb_fill, in Unicorn's virtual TLB mode
    (always on), for the pages `route` lists. No flash read then needs a memory hook, which would send every
    load and store of the program to Unicorn's slow path."""

    def __init__(self, uc, memory, state):
        self.uc, self.state = uc, state
        self.runs = [self._map(memory, piece, 0) for piece in memory.mmio_pieces]  # (descriptor, size)
        self.plain = False  # the sampled data pages read plain (between windows of sampled data timing)
        self.plain_aliased: list[tuple[int, int]] = []  # (address, size) of the runs given plain aliases
        self.sampled_runs = 0  # the data page runs map_plain switches (their entries in the table)
        self.routed: list[tuple[int, int]] = []  # the code pages route() sends to their aliases
        self.aliases = [self._map(memory, piece, layout.CODE_ALIAS_OFFSET) for piece in memory.flash_ram_pieces]
        self.table = np.zeros(layout.ALIAS_TABLE, np.int64)  # the TLB fill hook's (it must live as long)
        # Unicorn's virtual TLB mode on every board, also with no page to route: the fill hook's
        # entries for data accesses have no execute right, which keeps Unicorn's TLB from growing
        # at every flush (hooks.code_page_tlb_fill)
        hooks.register_tlb_fill_hook(uc, self.table)
        uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)

    def _map(self, memory, piece, offset: int) -> tuple[np.ndarray, int]:
        address, size, name, start = piece
        run = np.zeros(layout.DATA_RUN, np.int64)
        run[layout.RUN_STATE] = self.state.address
        run[layout.RUN_BASE] = address
        run[layout.RUN_BYTES] = memory.buffers[name].ctypes.data + start
        run[layout.RUN_PORT] = layout.PORT_UNKNOWN
        hooks.map_flash_data_run(self.uc, run, size, address + offset)
        return run, size

    def plain_alias_covers(self, begin: int, end: int) -> bool:
        """Whether [begin, end] (inclusive) reaches a data page run with a plain alias (a memory
        hook over it must cover the alias too: Unicorn matches hooks by the address the TLB maps
        an access to)."""
        return any(begin < address + size and address <= end for address, size in self.plain_aliased)

    def sample_plain(self, runs: list[tuple[np.ndarray, int]]) -> list[tuple[np.ndarray, int]]:
        """The data page runs of `runs` that map_plain switches: the largest MAX_PLAIN_RUNS (the
        TLB fill hook's room; the others stay MMIO, timed whole), each mapped a second time as
        plain read-only memory on the same storage at PLAIN_ALIAS_OFFSET + its address (where
        the TLB fill hook sends its reads) and entered in the hook's table."""
        kept = sorted(runs, key=lambda run: -run[1])[:layout.MAX_PLAIN_RUNS]
        for run, size in kept:
            address = int(run[layout.RUN_BASE])
            self.uc.mem_map_ptr(layout.PLAIN_ALIAS_OFFSET + address, size, UC_PROT_READ, int(run[layout.RUN_BYTES]))
            self.plain_aliased.append((address, size))
        for i, (run, size) in enumerate(kept):
            at = layout.AT_PLAIN_ENTRIES + layout.CODE_ALIAS * i
            self.table[at + layout.AL_BEGIN] = int(run[layout.RUN_BASE])
            self.table[at + layout.AL_END] = int(run[layout.RUN_BASE]) + size
        self.sampled_runs = len(kept)
        return kept

    def map_plain(self, plain: bool) -> None:
        """Send the data reads of the runs sample_plain kept to their plain aliases (they then
        cost what any load costs, untimed: sampled data timing between its windows) or to the
        MMIO pages again; the code pages whose alias run is sampled (RUN_SAMPLED) are read plain
        or through their alias with them. A switch is a TLB flush: remapping the pages instead
        cost 0.2 to 0.7 ms a switch (docs/performance.md, "Sixteenth pass")."""
        if plain == self.plain:
            return
        self.plain = plain
        self.table[layout.AT_PLAIN_COUNT] = self.sampled_runs if plain else 0
        self._route()
        self.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)

    def timed(self, start: int, end: int, on: bool) -> list[tuple[int, int]]:
        """Time the data reads of the flash in [start, end) or not (data pages and the aliases
        of code pages); returns the code pages of [start, end), as [start, end) ranges."""
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
        for run, size in self.aliases:
            base = int(run[layout.RUN_BASE])
            if start <= base and base + size <= end:
                run[layout.RUN_TIMED] = int(on)
        return left

    def route(self, pages: list[tuple[int, int]]) -> None:
        """Send the data reads of `pages` (code pages, [start, end) runs) to their aliases (while
        the data pages are plain, not those of a sampled alias run: they are read plain too)."""
        if len(pages) > layout.MAX_CODE_ALIASES:
            raise ValueError(f"{len(pages)} runs of flash code pages with data: at most {layout.MAX_CODE_ALIASES}")
        self.routed = list(pages)
        if self._route():
            self.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)  # (entries filled under the other routing)

    def _route(self) -> bool:
        """Write the TLB fill hook's table of routed pages; whether it changed."""
        sampled = [(int(run[layout.RUN_BASE]), int(run[layout.RUN_BASE]) + size) for run, size in self.aliases
                   if run[layout.RUN_SAMPLED] != 0]
        pages = [(begin, end) for begin, end in self.routed
                 if not (self.plain and any(a <= begin < b for a, b in sampled))]
        table = self.table.copy()
        table[layout.AT_COUNT] = len(pages)
        for i, (begin, end) in enumerate(pages):
            at = layout.AT_ENTRIES + layout.CODE_ALIAS * i
            table[at + layout.AL_BEGIN], table[at + layout.AL_END] = begin, end
        if np.array_equal(table, self.table):
            return False
        self.table[:] = table
        return True

    def moved(self) -> None:
        """The shared buffer moved: the callbacks find it at its new address."""
        for run, _ in self.runs + self.aliases:
            run[layout.RUN_STATE] = self.state.address
