"""mcusim.pages: the large buffers a run touches sparsely are zeroed arrays in an anonymous
mapping advised against transparent huge pages (a first write into a huge page can stall for
milliseconds where the kernel compacts memory for it)."""
import mmap
import os
import sys

import numpy as np
import pytest

from mcusim import pages
from mcusim.machine.native import NativeState
from mcusim.timing.growing import with_room


def _vm_flags(address: int) -> list[str]:
    """The access (`rw-p`: private) and VmFlags of the mapping of this process that holds
    `address` (/proc/self/smaps)."""
    found = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and not fields[0].endswith(":"):
                start, end = (int(part, 16) for part in fields[0].split("-"))
                found = fields[1] if start <= address < end else None
            elif found is not None and fields[0] == "VmFlags:":
                return [found, *fields[1:]]
    raise AssertionError(f"no mapping holds {address:#x}")


def test_zeros_are_numpys_zeros():
    array = pages.zeros((1000, 3), np.int16)
    assert array.shape == (1000, 3) and array.dtype == np.int16 and not array.any()
    array[999, 2] = -7
    assert array[999, 2] == -7 and array.flags.writeable and array.ctypes.data % 4096 == 0
    assert pages.zeros(5, np.int64).shape == (5,) and pages.zeros((0, 4), np.int64).shape == (0, 4)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmFlags are Linux's")
def test_the_run_buffers_are_advised_against_huge_pages():
    grown = with_room(np.zeros((64, 206), np.int64), 6000)
    for array in (pages.zeros(1 << 20, np.int64), NativeState().buffer, grown):
        flags = _vm_flags(array.ctypes.data)
        assert "nh" in flags and "rw-p" in flags  # (MADV_NOHUGEPAGE; private, as NumPy's memory)
    assert "nh" not in _vm_flags(np.zeros(1 << 20, np.int64).ctypes.data)  # (NumPy's own, for contrast)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmFlags are Linux's")
def test_the_boards_ram_is_advised_against_huge_pages_and_starts_zero():
    """The MPS2 boards' 4 and 16 MB banks: NumPy would advise huge pages for them, and the first
    touches (the image load, the stack) stalled building a Simulator (docs/performance.md,
    "Thirty-sixth pass")."""
    from unicorn import UC_ARCH_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc

    from mcusim.config import load_board
    from mcusim.machine.memory import MemoryMap

    board = load_board("mps2-an386")
    memory = MemoryMap(Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS), board)
    banks = {board.storage_region(r).name for r in board.memory if board.storage_region(r).kind == "ram"}
    large = [memory.buffers[name] for name in banks if len(memory.buffers[name]) >= 4 << 20]
    assert large, "the MPS2 board has banks of 4 MB and more"
    for buffer in large:
        assert "nh" in _vm_flags(buffer.ctypes.data) and not buffer[:: 1 << 16].any()


def _pagemap_readable() -> bool:
    return sys.platform.startswith("linux") and os.access("/proc/self/pagemap", os.R_OK)


@pytest.mark.skipif(not _pagemap_readable(), reason="no readable /proc/self/pagemap (Linux's)")
def test_populated_ranges_hold_every_page_touched_and_not_the_others():
    page = mmap.PAGESIZE
    array = pages.zeros(64 * page, np.uint8)
    for k in (3, 4, 20):
        array[k * page + 17] = 1
    covered = {k for start, end in pages.populated(array) for k in range(start // page, -(-end // page))}
    assert {3, 4, 20} <= covered and len(covered) < 8
    assert pages.populated(array[3 * page + 100:])[0] == (0, 2 * page - 100)  # (a view from inside a page)


class _NoSegments:
    segments = ()


@pytest.mark.parametrize("pagemap", ["kernel's", "unreadable"])
def test_changed_bytes_read_only_touched_pages_and_count_every_written_word(monkeypatch, pagemap):
    """run.json's changed bytes of a bank: counted over the pages the kernel gave memory where it
    says which (a 16 MB bank is mostly untouched), over all of it where it does not."""
    from mcusim.analysis.memory import changed_bytes

    monkeypatch.setattr(pages, "_pagemap_works", None)  # (checked again, and put back after)
    if pagemap == "unreadable":
        monkeypatch.setattr(pages, "_PAGEMAP", "/nonexistent/pagemap")
        assert pages.populated(np.zeros(8, np.uint8)) is None
    elif _pagemap_readable():
        assert pages.populated(np.zeros(8, np.uint8)) is not None
    storage = pages.zeros(1 << 20, np.uint8)
    words = storage.view("<u4")
    words[[0, 1, 1023, 1024, 70000, (1 << 18) - 1]] = [5, 6, 7, 8, 9, 10]  # (page edges, the last word)
    _ = storage[500000]  # (read, never written: the kernel's zero page)
    bank = {"base": 0x20000000, "size_bytes": len(storage)}
    assert changed_bytes(storage, _NoSegments(), bank) == 4 * 6
