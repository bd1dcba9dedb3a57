"""Zeroed NumPy arrays the kernel maps in small pages, for the large buffers a run touches sparsely
(the native state buffer, the Cortex-M7 model's encoded rows, the boards' RAM).

NumPy advises transparent huge pages for every array of 4 MB or more. The first write into each
2 MB of such an array then zeroes a whole huge page, and where the kernel compacts memory to find
one (Linux's `transparent_hugepage/defrag` set to `madvise`, a common default) it can stall for
milliseconds: the run of a small image seen before, which writes a few hundred rows, paid that
in its decode (docs/performance.md, "Thirty-second pass"). An anonymous mapping advised against
huge pages is zeroed 4 KB at a time as it is first written, and costs nothing where it is not.
"""
from __future__ import annotations

import math
import mmap

import numpy as np

_NO_HUGE_PAGES = getattr(mmap, "MADV_NOHUGEPAGE", None)  # (Linux's; elsewhere NumPy's own zeros)


def zeros(shape, dtype) -> np.ndarray:
    """np.zeros(shape, dtype) in a private anonymous mapping of small pages (writable,
    page-aligned; private, as NumPy's memory is, so a forked process's writes stay its own)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if size == 0 or _NO_HUGE_PAGES is None:
        return np.zeros(shape, dtype)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    memory.madvise(_NO_HUGE_PAGES)
    return np.frombuffer(memory, dtype).reshape(shape)


_PAGEMAP = "/proc/self/pagemap"  # (Linux: 8 bytes per virtual page, bit 63 present, bit 62 swapped)
_pagemap_works: bool | None = None  # (whether it marks a page this process wrote: checked once)


def populated(array: np.ndarray) -> list[tuple[int, int]] | None:
    """The [start, end) byte ranges of the contiguous `array`, in private anonymous memory (this
    module's zeros, NumPy's own arrays), that lie on pages the kernel ever gave memory (present,
    or swapped out); the rest has never been touched and reads as zeros, so a scan for written
    bytes can skip it (a board's 16 MB bank is mostly that). None where the kernel does not say:
    not Linux, the page map unreadable, or one that does not mark a page just written."""
    global _pagemap_works
    if _pagemap_works is None:
        probe = zeros(mmap.PAGESIZE, np.uint8)
        probe[0] = 1
        _pagemap_works = bool(_given(probe) == [(0, mmap.PAGESIZE)])
    return _given(array) if _pagemap_works else None


def _given(array: np.ndarray) -> list[tuple[int, int]] | None:
    page = mmap.PAGESIZE
    address, size = array.ctypes.data, array.nbytes
    first, end = address // page, (address + size + page - 1) // page
    try:
        with open(_PAGEMAP, "rb") as pagemap:
            pagemap.seek(8 * first)
            raw = pagemap.read(8 * (end - first))
    except OSError:
        return None
    if len(raw) != 8 * (end - first):
        return None
    given = np.concatenate(([False], (np.frombuffer(raw, "<u8") >> 62) != 0, [False]))
    edges = np.flatnonzero(given[1:] != given[:-1])  # (runs of given pages: [edges[0], edges[1]), ...)
    return [(max(0, (first + a) * page - address), min(size, (first + b) * page - address))
            for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist())]
