"""RAM behind a data cache (mcu-d's SRAM1 and SRAM2) timed through an MMIO alias, not a memory hook.

While its port times RAM accesses (the data cache on, or RAM reads that wait), the TLB fill hook
(hooks.code_page_tlb_fill) maps the range's loads and stores to an MMIO alias at
RAM_ALIAS_OFFSET + their address, on the same storage; its callbacks (hooks.cached_ram_read,
cached_ram_write) do the access and time it with the data cache model. Otherwise, and between
the windows of sampled data timing, the range is plain RAM. A switch empties Unicorn's TLB and
nothing else. A memory hook did this before: while one is held, every load and store of the
program takes Unicorn's slow path, each access in the hooked range makes Unicorn re-derive the
PC (a search of its translated code), and adding or removing it needs the translated code
flushed (docs/performance.md, "Fourteenth pass").

An access is timed as the MMIO alias sees it, as flash data reads are (memory_model.transfers):
QEMU splits an unaligned load into the two aligned ones around it, an unaligned store into
bytes, and an access of 8 bytes into two of 4. Instruction fetches map to the RAM itself; a
store through the alias to a page code was fetched from drops the translated code of the bytes
it wrote, as Unicorn's own tracking of writes to RAM it maps would.
"""
from __future__ import annotations

import numpy as np
from unicorn import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH

from . import native as N
from .native import hooks


class CachedRam:
    """The MMIO aliases of the RAM ranges of `ports` (flash ports whose data cache serves RAM),
    in the TLB fill hook's `table` (FlashDataPages.table)."""

    def __init__(self, uc, memory, state, ports, table: np.ndarray, page_bytes: int):
        self.uc, self.state, self.table = uc, state, table
        self.ranges = []  # (port, start, end, run)
        for port in ports:
            for start, end in port.ram_ranges:
                pages = -(-(end - start) // page_bytes)
                run = np.zeros(N.RAM_RUN + pages, np.int64)
                run[N.RR_STATE] = state.address
                run[N.RR_BASE] = start
                run[N.RR_BYTES] = memory.host_address(start, end - start)
                run[N.RR_PAGE_SHIFT] = page_bytes.bit_length() - 1
                run[N.RR_PORT] = port.g
                hooks.map_native_mmio(uc, N.RAM_ALIAS_OFFSET + start, end - start,
                                      hooks.cached_ram_read, hooks.cached_ram_write, run)
                self.ranges.append((port, start, end, run))
        if len(self.ranges) > N.MAX_RAM_ALIASES:
            raise ValueError(f"{len(self.ranges)} RAM ranges behind a data cache: at most {N.MAX_RAM_ALIASES}")
        for i, (_, start, end, run) in enumerate(self.ranges):
            at = N.AT_RAM_ENTRIES + N.RAM_ALIAS * i
            table[at + N.RA_BEGIN], table[at + N.RA_END] = start, end
            table[at + N.RA_RUN] = run.ctypes.data
        table[N.AT_RAM_COUNT] = len(self.ranges)

    def update(self) -> None:
        """Send each range's loads and stores to its alias while its port times them
        (FlashTiming.ram_timed), to the RAM itself otherwise; Unicorn's TLB is emptied if that
        changed anything (its entries were filled under the other routing). Between runs."""
        changed = False
        for i, (port, _, _, _) in enumerate(self.ranges):
            at = N.AT_RAM_ENTRIES + N.RAM_ALIAS * i + N.RA_TIMED
            timed = int(port.ram_timed)
            changed = changed or self.table[at] != timed
            self.table[at] = timed
        if changed:
            self.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)

    def alias_ranges(self) -> list[tuple[int, int]]:
        """[start, end) of every alias (watchpoints and traffic counters cover them too)."""
        return [(N.RAM_ALIAS_OFFSET + start, N.RAM_ALIAS_OFFSET + end) for _, start, end, _ in self.ranges]

    def covers(self, begin: int, end: int) -> bool:
        """Whether [begin, end] (inclusive) overlaps a range with an alias."""
        return any(begin < stop and start <= end for _, start, stop, _ in self.ranges)

    def moved(self) -> None:
        """The shared buffer moved: the callbacks find it at its new address."""
        for _, _, _, run in self.ranges:
            run[N.RR_STATE] = self.state.address
