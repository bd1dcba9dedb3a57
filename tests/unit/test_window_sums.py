"""A window's prefix sums (native tables.resum_window, what the block hook subtracts to cost a
block) cover every decoded instruction, however its ranges were decoded: out of order, with
gaps between them, over earlier decodes, and after the code in a writable window changed.
The decoder re-sums only up to the last decoded row (nothing reads past it), so these check
each decoded row's sums against a sum of the instructions' own rows."""
import random

import numpy as np
import pytest

from mcusim.machine import native as N
from test_m4_native_rows import BASE, decoders
from test_register_pattern import _code


def assert_sums_cover_the_decoded_rows(decoder) -> None:
    for index in decoder._costs:
        costs, tables = decoder._costs[index], decoder.state.rows(index)
        decoded = np.flatnonzero(costs[:, N.KIND] != 0)
        if not len(decoded):
            continue
        last = decoded[-1] + 1
        for field in N.SUMMED_FIELDS:
            expected = np.concatenate([[0], np.cumsum(costs[:last, field])])
            assert np.array_equal(tables[: last + 1, field], expected), (index, field)


@pytest.mark.parametrize("seed", range(4))
def test_sums_cover_ranges_decoded_out_of_order_with_gaps(seed):
    rng = random.Random(seed)
    code = _code(seed, 3000)
    fast, _ = decoders(code)
    cuts = sorted(set(rng.randrange(0, len(code) // 2) * 2 for _ in range(60))) + [len(code)]
    pieces = list(zip([0] + cuts[:-1], cuts))
    rng.shuffle(pieces)
    for start, end in pieces[: len(pieces) * 2 // 3]:  # (a third never decoded: gaps)
        fast.decode(BASE + start, BASE + end)
        assert_sums_cover_the_decoded_rows(fast)
    for start, end in pieces[: len(pieces) // 3]:  # decoded again over rows summed before
        fast.decode(BASE + start, BASE + end)
    assert_sums_cover_the_decoded_rows(fast)


def test_sums_after_changed_code_is_forgotten():
    code = bytearray(_code(9, 1000))
    fast, _ = decoders(bytes(code))
    fast.is_writable = lambda address: True
    fast.decode(BASE + 1000, BASE + 1600)
    fast.read_memory = lambda address, size: bytes(code[address - BASE: address - BASE + size])
    code[1000:1002] = b"\x00\xbf"  # (a NOP over the first instruction)
    assert fast.forget_changed_code()
    fast.decode(BASE + 200, BASE + 400)
    assert_sums_cover_the_decoded_rows(fast)
    fast.decode(BASE + 1000, BASE + 1200)
    assert_sums_cover_the_decoded_rows(fast)
