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
