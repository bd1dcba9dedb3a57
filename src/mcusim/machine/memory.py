"""The board's memory map in Unicorn: host buffers per storage region, aliases sharing them,
and the firmware's segments loaded by physical address."""
from __future__ import annotations

import ctypes

import numpy as np
from unicorn import UC_ERR_OK, UC_PROT_ALL, UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE, UcError
from unicorn.unicorn_py3.unicorn import uclib

from .. import pages
from ..elf import ElfError, ElfImage


def mapping_order(pieces) -> list:
    """The RAM mappings, (address, size, ...), from largest to smallest. Unicorn 2 (QEMU 5's
    exec.c ram_block_add) gives each mapping the offset just past the list's last block in its
    internal RAM address space, but keeps that list sorted by size: a mapping larger than one
    before it lands on addresses another mapping already has. Code translated from one and
    stores to the other then share addresses, so every store to the RAM retranslates the code at
    the same offset (measured: mcu-d's flash and DTCM, 94,000 translations of 579 blocks in one
    CoreMark-like run). Largest first, each mapping goes to the end of the list and gets
    addresses of its own."""
    return sorted(pieces, key=lambda piece: -piece[1])


class MemoryMap:
    def __init__(self, uc, board, data_runs: dict[str, list[tuple[int, int]]] | None = None):
        """`data_runs`: per storage region, [start, end) offsets to map as MMIO rather than RAM
        (flash_data_pages.py); the rest of each region (and its aliases) is mapped as RAM on the
        host buffer, every RAM piece largest first (mapping_order)."""
        self.uc = uc
        self.board = board
        self._read_buffer = ctypes.create_string_buffer(4096)
        self.buffers: dict[str, np.ndarray] = {}
        self.loaded: list[tuple[str, int, int]] = []  # (storage region, start offset, end offset)
        self.mmio_pieces: list[tuple[int, int, str, int]] = []  # (address, size, storage region, offset)
        self.flash_ram_pieces: list[tuple[int, int, str, int]] = []  # the same, of flash mapped as RAM (code pages)
        aliased = data_runs is not None  # (flash code pages get an MMIO alias: flash_data_pages.py)
        data_runs = data_runs or {}
        ram_pieces = []
        for region in board.memory:
            storage = board.storage_region(region)
            if storage.name not in self.buffers:
                # erased flash reads as 0xFF; RAM's zeros come from the OS page by page as the firmware
                # first touches them (the MPS2 boards' 24 MB were written whole at every start), in
                # small pages, whose first touches do not stall as a huge page's may (pages.py)
                self.buffers[storage.name] = np.full(storage.size_bytes, 0xFF, np.uint8) if storage.kind == "flash" \
                    else pages.zeros(storage.size_bytes, np.uint8)
            perms = UC_PROT_READ | UC_PROT_EXEC if storage.kind == "flash" else UC_PROT_ALL
            at = 0
            for start, end in data_runs.get(storage.name, []):
                end = min(end, region.size_bytes)
                if start >= end:
                    continue
                if start > at:
                    ram_pieces.append((region.base + at, start - at, perms, storage.name, at))
                self.mmio_pieces.append((region.base + start, end - start, storage.name, start))
                at = end
            if at < region.size_bytes:
                ram_pieces.append((region.base + at, region.size_bytes - at, perms, storage.name, at))
        for address, size, perms, name, offset in mapping_order(ram_pieces):
            uc.mem_map_ptr(address, size, perms, self.buffers[name].ctypes.data + offset)
            if aliased and not perms & UC_PROT_WRITE:
                self.flash_ram_pieces.append((address, size, name, offset))

    def host_address(self, address: int, size: int) -> int:
        """The host address of [address, address + size), which must lie in one region: its
        bytes in the region's storage buffer."""
        pieces = self.board.regions_covering(address, size)
        if not pieces or len(pieces) != 1:
            raise ValueError(f"0x{address:08x}..0x{address + size:08x} is not inside one memory region")
        region, start, _ = pieces[0]
        return self.buffers[self.board.storage_region(region).name].ctypes.data + start - region.base

    def in_mmio_piece(self, address: int, length: int) -> bool:
        return any(address < a + size and a < address + length for a, size, _, _ in self.mmio_pieces)

    def read(self, address: int, size: int) -> bytes:
        """`size` bytes at `address` as a debugger reads them: from the storage where MMIO pieces
        lie (Unicorn would call their read callback, which times a data read)."""
        if self.mmio_pieces and self.in_mmio_piece(address, size):
            pieces = self.board.regions_covering(address, size)
            if pieces is not None:
                out = bytearray()
                for region, start, end in pieces:
                    buffer = self.buffers[self.board.storage_region(region).name]
                    out += buffer[start - region.base: end - region.base].tobytes()
                return bytes(out)
        return self._read_unicorn(address, size)

    def _read_unicorn(self, address: int, size: int) -> bytes:
        """Unicorn's mem_read into one buffer kept for every read: Unicorn's own makes a ctypes
        array type for each size (`c_char * size`, which ctypes keeps only while something holds
        it), and the decoder reads code ranges of a thousand sizes on a large image: each read
        built a type, and each type was cyclic garbage for Python's collector."""
        if size > len(self._read_buffer):
            self._read_buffer = ctypes.create_string_buffer(max(size, 2 * len(self._read_buffer)))
        status = uclib.uc_mem_read(self.uc._uch, address, self._read_buffer, size)
        if status != UC_ERR_OK:
            raise UcError(status, address, size)
        return ctypes.string_at(self._read_buffer, size)

    def regions_text(self) -> str:
        return ", ".join(f"{r.name} 0x{r.base:08x}-0x{r.end - 1:08x}" for r in sorted(self.board.memory, key=lambda r: r.base))

    def load(self, image: ElfImage) -> None:
        """Copy every loadable segment into the memory it is linked for, or refuse the image.
        A segment may cross adjacent banks; each piece goes to its own bank's storage."""
        for segment in image.segments:
            if segment.data:
                pieces = self._pieces(image, segment, segment.paddr, len(segment.data), "loads at")
                for region, start, end in pieces:
                    storage = self.board.storage_region(region)
                    offset = start - region.base
                    data = segment.data[start - segment.paddr: end - segment.paddr]
                    self.buffers[storage.name][offset: offset + len(data)] = np.frombuffer(data, np.uint8)
                    self.loaded.append((storage.name, offset, offset + len(data)))
            if segment.memsz > len(segment.data) or segment.vaddr != segment.paddr:
                self._pieces(image, segment, segment.vaddr, segment.memsz, "runs at")

    def _pieces(self, image, segment, address: int, length: int, verb: str) -> list:
        pieces = self.board.regions_covering(address, length)
        if pieces is None:
            raise ElfError(
                f"{image.path}: {segment.describe()} {verb} 0x{address:08x}-0x{address + length - 1:08x}, "
                f"which does not fit the memory of board {self.board.name} ({self.regions_text()}); "
                f"is the firmware linked for this board?")
        return pieces

    def is_loaded(self, address: int, length: int) -> bool:
        pieces = self.board.regions_covering(address, length)
        if pieces is None:
            return False
        for region, start, end in pieces:
            storage = self.board.storage_region(region)
            first, last = start - region.base, end - region.base
            if not any(name == storage.name and lo <= first and last <= hi for name, lo, hi in self.loaded):
                return False
        return True

    def read_word(self, address: int) -> int:
        return int.from_bytes(self.read(address, 4), "little")
