"""Data watchpoints for run control (and the GDB server): a Python memory hook on each watched
range notes the first access and asks the run to stop at the next block boundary.

The hook never stops Unicorn itself: an emu_stop inside a memory hook abandons the accessing
instruction, which then runs again on resume, and the native flash and cache hooks would count
its access twice. Asking for the stop between blocks (the native hook's DEADLINE) lets the access
and the rest of its block complete, charged as always, so a watchpoint changes nothing that is
measured. The stop is therefore after the accessing instruction, at the latest at the end of
its translated block, as a Cortex-M's DWT watchpoint is also reported some instructions late.
"""
from __future__ import annotations

from dataclasses import dataclass

from unicorn import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE, UC_MEM_WRITE

from .native.layout import ALIAS_ADDRESS_MASK, CODE_ALIAS_OFFSET, PLAIN_ALIAS_OFFSET, RAM_ALIAS_OFFSET

KINDS = {"write": UC_HOOK_MEM_WRITE, "read": UC_HOOK_MEM_READ, "access": UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE}
WIDEST_ACCESS = 8  # bytes (LDRD/STRD, VLDR.64): an access starting this far before a range can reach it


@dataclass(frozen=True)
class Hit:
    kind: str      # the watchpoint's kind: "write", "read" or "access"
    watched: int   # the watchpoint's address
    address: int   # the address accessed
    is_write: bool


class Watchpoints:
    """The watched ranges of one machine, keyed by (address, size, kind)."""

    def __init__(self, machine):
        self.machine = machine
        self.hooks: dict[tuple[int, int, str], list[int]] = {}
        self.hit: Hit | None = None  # the first access since run() began, if any

    def add(self, address: int, size: int, kind: str = "write") -> None:
        """Watch [address, address + size) for `kind` accesses; ValueError for a bad kind or size,
        or for a range that is neither the board's memory nor a peripheral space."""
        if kind not in KINDS:
            raise ValueError(f"watchpoint kind {kind!r}: use one of {', '.join(KINDS)}")
        if size < 1:
            raise ValueError("a watchpoint covers at least one byte")
        if not self.machine.is_watchable(address, size):
            raise ValueError(f"0x{address:08x}..0x{address + size:08x} is not memory or a peripheral register on "
                             f"{self.machine.board.name}: nothing there can be watched")
        key = (address, size, kind)
        if key in self.hooks:
            return
        begin, end = max(address - WIDEST_ACCESS + 1, 0), address + size - 1
        ranges = [(begin, end)]
        pieces = self.machine.memory.flash_ram_pieces
        if kind != "write" and any(begin <= a + n - 1 and a <= end for a, n, _, _ in pieces):
            ranges.append((begin + CODE_ALIAS_OFFSET, end + CODE_ALIAS_OFFSET))  # reads of flash code pages
        if kind != "write" and self.machine.flash_data_pages.plain_alias_covers(begin, end):
            ranges.append((begin + PLAIN_ALIAS_OFFSET, end + PLAIN_ALIAS_OFFSET))  # data pages read plain
        if self.machine.cached_ram.covers(begin, end):
            ranges.append((begin + RAM_ALIAS_OFFSET, end + RAM_ALIAS_OFFSET))  # RAM behind a data cache
        self.hooks[key] = [self.machine.uc.hook_add(KINDS[kind], self._on_access, key, begin=b, end=e)
                           for b, e in ranges]

    def remove(self, address: int, size: int, kind: str = "write") -> bool:
        handles = self.hooks.pop((address, size, kind), [])
        for handle in handles:
            self.machine.uc.hook_del(handle)
        return bool(handles)

    def clear(self) -> None:
        for key in list(self.hooks):
            self.remove(*key)

    def _on_access(self, uc, access, address, size, value, key):
        self.machine.refuse_held()
        watched, length, kind = key
        address &= ALIAS_ADDRESS_MASK  # (an access through one of the aliases above: the address it shows)
        if address + size <= watched or address >= watched + length or self.hit is not None:
            return
        self.hit = Hit(kind, watched, address, access == UC_MEM_WRITE)
        self.machine.request_stop()
