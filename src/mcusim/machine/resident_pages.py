"""Flash data pages read as plain memory while a unified direct-mapped cache holds all of them.

A flash whose one cache holds instructions and data (mcu-b's Apollo3 flash cache) keeps its data
pages MMIO under sampled data timing too: a data read there can evict an instruction line, which
the fetch model must see (data_sampling.py). But a read that hits a direct-mapped cache changes
nothing the model keeps (one way: no replacement order) except the hit count, and costs no wait.
So once every line of a data page is in the cache, the page is read through a plain read-only
alias of the same storage (the TLB fill hook maps its reads there), as fast as any load, and the
run's cycles, waits, misses and energy stay what timing every read gives: the page goes back to
MMIO, its TLB entry flushed before the next access, as soon as any line of it leaves the cache (a
fetch, literal or data miss replacing it, an invalidation, a cache setting changed). The
decision is native (memory_model.note_resident_read, _replacing; hooks.code_page_tlb_fill).

What it does not keep: the data cache hit count counts the reads timed (as sampled data timing's
counts do, docs/timing.md). With `--data-timing exact` nothing here is used. A page thrashed by
code in the same cache sets goes back often: each time it does, it waits twice as many hits in a
row before its lines are checked again (each change flushes Unicorn's TLB).
"""
from __future__ import annotations

from unicorn import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH

from . import native as N


def eligible_port(ports, page_bytes: int):
    """The first port whose cache is one for instructions and data over a single page-aligned
    flash range and no RAM (the pages' offsets are then their addresses' pages), or None."""
    for port in ports:
        if (port.unified_cache and not port.ram_ranges
                and len(port.ranges) == 1 and port.ranges[0][0] % page_bytes == 0):
            return port
    return None


class ResidentPages:
    """The data page runs of `port`'s flash given plain aliases, and the native state that says
    which pages read them (PP_*, RESIDENT_PAGE_AREA)."""

    def __init__(self, uc, state, port, flash_data_pages, page_bytes: int):
        self.uc, self.state, self.port = uc, state, port
        start, end = port.ranges[0]
        self.runs = [(run, size) for run, size in flash_data_pages.runs if start <= int(run[N.RUN_BASE]) < end]
        flash_data_pages.give_plain_aliases(self.runs)
        for run, _ in self.runs:
            run[N.RUN_PLAIN] = 1
        state[N.PP_PORT] = port.g
        state[N.PP_PAGE_SHIFT] = page_bytes.bit_length() - 1
        state[N.PP_PAGES] = min((end - start) // page_bytes, N.MAX_RESIDENT_PAGES)
        flash_data_pages.table[N.AT_STATE] = state.address
        port.on_cache_change = self.all_timed

    def _pages(self):
        """The pages' records (RESIDENT_PAGE_AREA): a view on the state's buffer, one row each."""
        count = int(self.state[N.PP_PAGES])
        area = self.state.buffer[N.RESIDENT_PAGE_AREA: N.RESIDENT_PAGE_AREA + N.RESIDENT_PAGE * count]
        return area.reshape(count, N.RESIDENT_PAGE)

    def all_timed(self) -> None:
        """Every page back to MMIO (the cache was emptied or reconfigured, from Python)."""
        pages = self._pages()
        plain = pages[:, N.PG_PLAIN] != 0
        pages[:, N.PG_HITS] = 0
        if plain.any():
            pages[plain, N.PG_PLAIN] = 0
            self.state[N.PP_DEMOTIONS] += int(plain.sum())
            self.state[N.PP_FLUSH] = 0
            self.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)

    def plain_pages(self) -> list[int]:
        """The addresses of the pages read plain now."""
        shift = int(self.state[N.PP_PAGE_SHIFT])
        start = self.port.ranges[0][0]
        return [start + (int(i) << shift) for i in (self._pages()[:, N.PG_PLAIN] != 0).nonzero()[0]]

    def summary(self) -> dict[str, int]:
        """run.json's `resident_pages`: times a page went plain and back to MMIO (empty: never)."""
        plain, timed = int(self.state[N.PP_PROMOTIONS]), int(self.state[N.PP_DEMOTIONS])
        return {"pages_read_plain": plain, "pages_timed_again": timed} if plain else {}
