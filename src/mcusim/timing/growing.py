"""Arrays the decoder appends rows to, one at a time or in blocks (the descriptor tables, the
Cortex-M7's encoded rows): grown by doubling, so appending stays cheap however many rows come,
in small pages (mcusim.pages: the Cortex-M7 table's idents reserve thousands of rows that a run
writes a few hundred of)."""
from __future__ import annotations

import numpy as np

from .. import pages


def with_room(array: np.ndarray, rows: int) -> np.ndarray:
    """`array` if it has at least `rows` rows, else a copy of it with zero rows after it: twice
    as many, or more for a block (one copy however many are asked for)."""
    if rows <= len(array):
        return array
    grown = pages.zeros((max(2 * len(array), 1 << (rows - 1).bit_length()), *array.shape[1:]), array.dtype)
    grown[: len(array)] = array
    return grown
