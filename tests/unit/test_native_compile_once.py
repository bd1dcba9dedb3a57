"""A native helper called with different constant arguments is compiled once (numba would
specialise it on each literal: nine compiles of _range_sum made the first run's compile of a
block hook half again as long), and LLVM inlines the helpers into the hooks."""
import functools
import re

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


def test_the_helpers_are_inlined_into_the_hook_that_calls_them():
    """LLVM inlines the native helpers into the hooks (the njit wrapper's forceinline): without it
    the MMIO read of a flash data page called three helpers on every read, each call passing the
    array's fields and its reference counts. Only a helper made with inline=False (held repeats'
    release, called when a hold ends) is a call of its own."""
    import numba

    from mcusim.machine.native import hooks

    compiled = numba.cfunc(hooks.MMIO_READ_SIGNATURE, cache=False)(hooks.flash_data_page_read.function)
    called = {name for line in compiled._library.get_llvm_str().splitlines() if " call " in line
              for name in re.findall(r"@(_ZN6mcusim\w+)", line)}
    called = {name for name in called if "release_held" not in name}  # (njit(inline=False): a call of its own)
    assert len(called) == 1 and "flash_data_page_read" in called.pop()  # (the cfunc wrapper's call of the hook)


def test_a_call_site_of_the_same_kinds_works_them_out_once(monkeypatch):
    """SameKinds (the decoder's per-range native calls) runs the first call's compiled code from
    the second call on, without working out its arguments' kinds, and computes what a plain
    call does."""
    from mcusim.machine.native import jit

    site = jit.SameKinds(_scaled)
    kinds = []
    kind = jit._kind
    monkeypatch.setattr(jit, "_kind", lambda value: kinds.append(value) or kind(value))
    results = [site(np.arange(4), factor) for factor in range(5)]
    assert len(kinds) == 2 * 2  # (the first call's two arguments, in the call and in SameKinds)
    assert all(np.array_equal(result, np.arange(4) * factor) for factor, result in enumerate(results))
