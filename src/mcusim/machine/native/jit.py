"""How the native code is compiled: numba's cache is chosen (numba_cache) before anything is
compiled and stamped with the whole package's source (a change to layout.py must rebuild the
hooks that froze its slots, not only layout.py's own functions), every module decorates with
the same `njit`, and hooks are `cfunc`s compiled when first registered, not at import."""
from __future__ import annotations

import os

from .. import numba_cache

CACHE = numba_cache.choose(__file__)  # (before numba compiles or caches anything)
if CACHE:
    numba_cache.stamp_package(os.path.dirname(os.path.abspath(__file__)))

import numba  # noqa: E402
from numba.core.types import unliteral  # noqa: E402

if numba_cache.command_process:
    numba_cache.load_cached_without_refresh()


def njit(function=None, cache=CACHE):
    """numba.njit with the cache chosen above, compiled once per argument type: numba would
    compile a helper again for every constant argument a call site passes (`_range_sum(st, a,
    b, F_CYCLES)`, a copy per field), which made the first compile of a block hook half again
    as long (13.7 s against 8.8). Every helper is `forceinline`: LLVM's `alwaysinline`, so each
    is inlined into the hook that calls it as the hook's module is optimised. Without it LLVM
    inlined none of them (a profile of the block hook showed each helper a call of its own,
    passing the array's seven fields and its reference count); numba's own `inline="always"`,
    which inlines numba's IR before typing, made the first compile take four times as long,
    while LLVM's did not make it longer (docs/performance.md, "Eighth pass"). `cache=False`: compiled
    in every process (tests that look at what was compiled)."""
    if function is None:
        return lambda function: njit(function, cache)
    dispatcher = numba.njit(cache=cache, forceinline=True)(function)
    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        return resolve(tuple(unliteral(a) for a in args), {k: unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


class _Cfunc:
    """A hook compiled (or loaded from numba's cache) when first registered, not at import:
    commands that run no firmware (`mcusim --help`, `mcusim report`) compile nothing."""

    def __init__(self, signature, function):
        self.signature, self.function, self._compiled = signature, function, None

    @property
    def address(self) -> int:
        if self._compiled is None:
            with numba_cache.numba_probes_skipped():
                self._compiled = numba.cfunc(self.signature, cache=CACHE)(self.function)
        return self._compiled.address


def cfunc(signature):
    return lambda function: _Cfunc(signature, function)
