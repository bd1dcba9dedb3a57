"""A native helper called with different constant arguments is compiled once (numba would
specialise it on each literal: nine compiles of _range_sum made the first run's compile of a
block hook half again as long)."""
import functools

import numpy as np

from mcusim.machine.native.jit import njit

njit = functools.partial(njit, cache=False)  # (compiled in each run: a cached _caller would not compile _scaled)


@njit
def _scaled(x, factor):
    return x * factor


@njit
def _caller(x):
    return _scaled(x, 3) + _scaled(x, 5) + _scaled(x, 7)


def test_a_helper_called_with_three_constants_is_compiled_once():
    assert _caller(np.int64(2)) == 30
    assert len(_scaled.signatures) == 1
    assert "Literal" not in str(_scaled.signatures[0])
