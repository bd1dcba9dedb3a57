"""The scans run.json's stack and heap peaks are made of (analysis/memory.py), against their plain
definitions: a fill value is one held by more than half of an area, and the runs and first and
last written words are where the flags say."""
import random
from collections import Counter

import numpy as np
import pytest

from mcusim.analysis.memory import _first_touched, _last_touched, _longest_run, majority


def plain_majority(values):
    counts = Counter(values.tolist())
    value, count = max(counts.items(), key=lambda item: item[1], default=(None, 0))
    return value if 2 * count > len(values) else None


def plain_longest_run(flags):
    best, start = (0, 0), None
    for i, flag in enumerate(list(flags) + [False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    return best


def areas(seed=11, count=4000):
    """Word areas of every shape a scan meets: constant, a fill with words written here and
    there, a value on every k-th word (never or barely a majority), odd and even lengths."""
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randrange(0, 41)
        shape = rng.randrange(4)
        if shape == 0:
            values = [rng.randrange(3) for _ in range(n)]
        elif shape == 1:
            values = [0xDEADBEEF if rng.random() < rng.random() else rng.randrange(5) for _ in range(n)]
        elif shape == 2:
            k = rng.randrange(2, 5)
            values = [7 if i % k else 1 for i in range(n)]
        else:
            half = n // 2 + rng.randrange(-1, 2)
            values = [9] * max(half, 0) + [rng.randrange(4) for _ in range(n - max(half, 0))]
            rng.shuffle(values)
        yield np.array(values, np.uint32)


def test_the_fill_value_is_the_one_more_than_half_of_an_area_holds():
    found = Counter()
    for values in areas():
        expected = plain_majority(values)
        assert majority(values) == expected, values
        found[expected is None] += 1
    assert found[True] > 500 and found[False] > 500  # (areas with a fill and without)


def test_a_fill_value_barely_more_than_half_of_a_large_area_is_found():
    rng = np.random.default_rng(4)
    for holders in (2**19 + 1, 2**19):  # (of 2**20 words: more than half, exactly half)
        values = rng.integers(0, 1000, 2**20).astype(np.uint32)
        values[:holders] = 0xA5A5A5A5
        rng.shuffle(values)
        assert majority(values) == (0xA5A5A5A5 if holders > 2**19 else None)
        values[:] = rng.integers(0, 1000, 2**20)  # (the fill at both ends: the middle word is not it)
        values[:holders // 2] = values[2**20 - (holders - holders // 2):] = 0xA5A5A5A5
        assert majority(values) == (0xA5A5A5A5 if holders > 2**19 else None)


@pytest.mark.parametrize("values, expected", [
    ([5, 1, 5], 5),            # the odd one out is the fill
    ([1, 5, 5, 2, 5], 5),
    ([5, 5, 1, 2], None),      # exactly half is no fill
    ([3, 1, 3, 1, 3, 1, 3], 3),
    ([], None),
])
def test_fill_value_edge_cases(values, expected):
    assert majority(np.array(values, np.uint32)) == expected


def test_runs_and_first_and_last_written_words_are_where_the_flags_say():
    for values in areas(seed=12):
        flags = values % 2 == 1
        assert _longest_run(flags) == plain_longest_run(flags), flags
        written = [i for i, flag in enumerate(flags) if not flag]
        assert _first_touched(flags) == (written[0] if written else len(flags))
        assert _last_touched(flags) == (written[-1] if written else -1)
