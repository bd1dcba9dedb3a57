"""How the native code is compiled and loaded. Every module decorates with this `njit` and
`cfunc`, which do not import numba: a function or hook is taken from the object store
(object_store.py: the machine code of an earlier run, loaded without numba) when it is first
needed, and compiled (or loaded from numba's own cache) by numba only when the store lacks it.
numba is then imported once, set up by load_numba(): its cache stamped with the whole package's
source (a change to layout.py must rebuild the hooks that froze its slots, not only layout.py's
own functions), the numba objects the hooks' source names put in place, and the object code of
what it compiles or loads kept for the store."""
from __future__ import annotations

import functools
import os
import sys

import numpy as np

from .. import numba_cache
from .object_store import STORE

CACHE = numba_cache.choose(__file__)  # (before numba compiles or caches anything)
PACKAGE = os.path.dirname(os.path.abspath(__file__))
STORE.folders  # noqa: B018  (named now, after the source as imported: code compiled from it is saved there)


class _NumbaName:
    """Stands for a numba object (carray, an intrinsic, an external C function) in a module's
    globals until load_numba() puts the object from numba_names.py in its place."""

    def __repr__(self):
        return "<numba object, set by jit.load_numba()>"


NUMBA_NAME = _NumbaName()
_numba = None


def load_numba():
    """numba, imported and set up for this package the first time something must be compiled
    (or found in numba's cache), with the native modules' NUMBA_NAMEs replaced."""
    global _numba
    if _numba is None:
        if CACHE:
            numba_cache.stamp_package(PACKAGE)
        import numba
        from numba.core import codegen
        from numba.extending import typeof_impl

        if numba_cache.command_process:
            numba_cache.load_cached_without_refresh()
        _keep_object_code(codegen.CPUCodeLibrary)
        typeof_impl.register(NativeFunction)(lambda value, context: typeof_impl(value.dispatcher, context))
        _numba = numba
    from . import numba_names

    for name, module in list(sys.modules.items()):
        if name.startswith(__package__ + ".") and module is not None:
            for attribute, value in list(vars(module).items()):
                if value is NUMBA_NAME and attribute != "NUMBA_NAME":
                    setattr(module, attribute, getattr(numba_names, attribute))
    return _numba


def _keep_object_code(library_class) -> None:
    """numba hands a library's object code, loaded from its cache, to LLVM and forgets it: keep
    a copy for the store (a library numba compiles keeps its own until it is saved)."""
    original = library_class._set_compiled_object
    if getattr(original, "keeps", False):
        return

    def keeping(self, value):
        original(self, value)
        self.kept_object_code = value

    keeping.keeps = True
    library_class._set_compiled_object = keeping


def _storable(compiled) -> bool:
    """numba's own test for caching (no addresses of this process baked in: ctypes pointers,
    large global arrays) and no constants in its environment (the store gives it an empty one)."""
    return not compiled.library.has_dynamic_globals and not compiled.environment.consts


def _object_code(library) -> bytes | None:
    return getattr(library, "kept_object_code", None) or getattr(library, "_compiled_object", None)


def _in_package(function) -> bool:
    """Whether `function` is the native package's own: the store is named after its source only."""
    return function.__module__.startswith(__package__ + ".")


_ARRAY = np.ndarray
_LAYOUT_FLAGS = 0x503  # NPY_ARRAY_C_CONTIGUOUS | F_CONTIGUOUS | ALIGNED | WRITEABLE (numpy's ndarraytypes.h)
_F_CONTIGUOUS = 0x2


_SCALARS = (np.integer, np.floating, np.bool_, bool, float)


def _kind(value):
    """What numba's compiled wrapper assumes of an argument: a plain array's dtype, dimensions
    and layout flags, else the scalar's type (0.25 us an array: it is computed at every call);
    None for anything else (a tuple, an array subclass, an int beyond int64, which numba types
    as uint64): never run from the store."""
    kind = type(value)
    if kind is _ARRAY:
        flags = value.flags.num & _LAYOUT_FLAGS
        if flags & 1:  # (C-contiguous: layout 'C' to numba whether or not also F-contiguous, as an
            flags &= ~_F_CONTIGUOUS  # array with no rows or one is: the same compiled code)
        return value.dtype, value.ndim, flags
    if kind is int:
        return kind if -2**63 <= value < 2**63 else None
    return kind if issubclass(kind, _SCALARS) else None


class NativeFunction:
    """An @njit function. Called from Python it runs numba's compiled code for the kinds of its
    arguments, from the store when it has it, else through numba's dispatcher (whose code then
    goes to the store); called from other native code numba compiles it in (as
    numba.njit(forceinline=True), see `dispatcher`)."""

    def __init__(self, function, cache, inline=True):
        functools.update_wrapper(self, function)
        self.function, self.cache, self.inline = function, cache, inline
        self.stored = cache and _in_package(function)
        self._dispatcher = None
        self._by_kinds = {}

    def __call__(self, *args):
        kinds = tuple(map(_kind, args))
        run = self._by_kinds.get(kinds)
        if run is None and None in kinds:
            return self.dispatcher(*args)
        if run is None:
            run = self._stored(kinds)
            if run is None:
                result = self.dispatcher(*args)
                try:
                    self._store(kinds, args)
                except Exception:  # (numba's internals changed: nothing stored, the run goes on)
                    pass
                self._by_kinds[kinds] = self.dispatcher
                return result
            self._by_kinds[kinds] = run
        return run(*args)

    def __reduce__(self):
        """Pickled by name (and, for a closure, its cells' values: the constants that make one
        variant's code), as numba's cache key of a closure that calls this one pickles it; its
        compiled functions, which cannot be pickled, are not part of it."""
        cells = tuple(cell.cell_contents for cell in self.function.__closure__ or ())
        return _native_function, (self.function.__module__, self.function.__qualname__, cells)

    def _key(self, kinds) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}{kinds}"

    def _stored(self, kinds):
        if not self.stored:
            return None
        try:
            return STORE.python_function(self._key(kinds), sys.modules[self.function.__module__])
        except Exception:  # (anything amiss: numba's way)
            return None

    def _store(self, kinds, args) -> None:
        """Keep the compiled overload `args` ran (its wrapper and environment names), unless its
        environment holds constants (the store gives it an empty one) or it returns an array
        (numba's wrapper unpickles the array's type, importing numba)."""
        if not self.stored:
            return
        numba = load_numba()
        compiled = self.dispatcher.overloads.get(tuple(numba.typeof(a) for a in args))
        if compiled is None or not _storable(compiled):
            return
        returned = compiled.signature.return_type
        if any(isinstance(t, numba.types.Array) for t in (returned, *getattr(returned, "types", ()))):
            return
        code = _object_code(compiled.library)
        if code:
            STORE.save(self._key(kinds), dict(symbol=compiled.fndesc.llvm_cpython_wrapper_name,
                                              environment=compiled.fndesc.env_name,
                                              name=self.function.__name__), code)

    @property
    def dispatcher(self):
        """numba.njit with this module's cache, compiled once per argument type: numba would
        compile a helper again for every constant argument a call site passes (`_range_sum(st,
        a, b, F_CYCLES)`, a copy per field), which made the first compile of a block hook half
        again as long (13.7 s against 8.8). Every helper is `forceinline`: LLVM's
        `alwaysinline`, so each is inlined into the hook that calls it as the hook's module is
        optimised. Without it LLVM inlined none of them (a profile of the block hook showed each
        helper a call of its own, passing the array's seven fields and its reference count);
        numba's own `inline="always"`, which inlines numba's IR before typing, made the first
        compile take four times as long, while LLVM's did not make it longer
        (docs/performance.md, "Eighth pass")."""
        if self._dispatcher is None:
            numba = load_numba()
            from numba.core.types import unliteral

            dispatcher = numba.njit(cache=self.cache, forceinline=self.inline)(self.function)
            resolve = dispatcher.get_call_template

            def get_call_template(args, kws):
                return resolve(tuple(unliteral(a) for a in args), {k: unliteral(v) for k, v in kws.items()})

            dispatcher.get_call_template = get_call_template
            self._dispatcher = dispatcher
        return self._dispatcher

    def __getattr__(self, name):  # (the dispatcher's public attributes: signatures, overloads, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)


class SameKinds:
    """A call site of NativeFunction `function` whose arguments always have the kinds its first
    call's have (the decoder's per-range calls): from the second call on it runs the compiled
    code that call ran directly, without working out the arguments' kinds (a microsecond or
    two a call: most of a small call's time)."""

    def __init__(self, function: NativeFunction):
        self.function, self._run = function, None
        functools.update_wrapper(self, function.function)

    def __call__(self, *args):
        if self._run is None:
            result = self.function(*args)
            self._run = self.function._by_kinds.get(tuple(map(_kind, args))) or self.function
            return result
        return self._run(*args)


def _native_function(module: str, qualname: str, cells: tuple):
    """The module-level NativeFunction a pickle names (a closure's cannot be found by name)."""
    return getattr(sys.modules[module], qualname)


def njit(function=None, cache=CACHE, inline=True):
    """An @njit function (NativeFunction). `cache=False`: compiled in every process by numba,
    never stored (tests that look at what was compiled). `inline=False`: a call of its own from
    native code, for a function the hot path calls rarely, whose inlined code would crowd it."""
    if function is None:
        return lambda function: njit(function, cache, inline)
    return NativeFunction(function, cache, inline)


class _Cfunc:
    """A hook: its address from the store, or compiled (or loaded from numba's cache) by numba
    when first registered, not at import: commands that run no firmware (`mcusim --help`,
    `mcusim report`) load nothing. `key` names it in the store (a closure's variant)."""

    def __init__(self, signature: str, function, key: str | None = None):
        self.signature, self.function = signature, function
        self.key = f"{key or function.__module__ + '.' + function.__qualname__} {signature}"
        self.stored = CACHE and _in_package(function)
        self._address = None

    @property
    def address(self) -> int:
        if self._address is None:
            self._address = self._stored() or self._compile()
        return self._address

    def _stored(self) -> int | None:
        if not self.stored:
            return None
        try:
            return STORE.function_address(self.key)
        except Exception:  # (anything amiss: numba's way)
            return None

    def _compile(self) -> int:
        numba = load_numba()
        with numba_cache.numba_probes_skipped():
            compiled = numba.cfunc(self.signature, cache=CACHE)(self.function)
        self.compiled = compiled  # (benchmarks/hook_profile.py reads its library's symbols)
        try:
            code = None if compiled._library.has_dynamic_globals else _object_code(compiled._library)
            if self.stored and code:
                STORE.save(self.key, dict(symbol=compiled._wrapper_name), code)
        except Exception:  # (numba's internals changed: nothing stored, the hook is numba's)
            pass
        return compiled.address


def cfunc(signature: str, key: str | None = None):
    """A hook with numba signature `signature` (a string, so defining it needs no numba)."""
    return lambda function: _Cfunc(signature, function, key)
