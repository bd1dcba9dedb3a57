"""The native functions' machine code kept between runs and loaded without importing numba.

Importing numba and setting up its compiler took 0.4 to 0.6 s of every start, although a warm
start only loads machine code numba has compiled before (docs/performance.md, "Tenth pass").
So whenever numba compiles or loads a hook, or a function Python calls, jit.py keeps its object
code here; a later process loads it with llvmlite's MCJIT (as numba itself does), resolves what
it calls (numba's runtime and helper C functions, Python's C API, Unicorn) and hands out the
hook's address or, for a function Python calls, a Python function made from numba's own
wrapper, exactly as numba would. Nothing here imports numba. Only the native package's own
functions are stored (their source is what names the store's folder).

An entry is only used by the process whose code it was compiled from: the store's folder is
named after a hash of the native package's source (numba_cache.package_stamp) and of
everything that makes numba's output differ (numba's and llvmlite's installation, Python, the
host CPU, every NUMBA_* setting). Each entry is a JSON description with the SHA-256 of its
object file, written last: a torn or corrupt entry is not used. Anything that fails here leaves
the function to numba.
"""
from __future__ import annotations

import ctypes
import glob
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

from .. import numba_cache

FORMAT = 1  # (bumped when what an entry holds changes)


def _folder() -> Path | None:
    """Where the store lives: beside numba's cache (NUMBA_CACHE_DIR, else the native package's
    __pycache__, else the user's cache folder), None when none can be written or
    MCUSIM_NATIVE_STORE=off (numba compiles or loads everything, as before the store)."""
    if os.environ.get("MCUSIM_NATIVE_STORE", "").lower() in ("0", "off", "no", "false"):
        return None
    given = os.environ.get("NUMBA_CACHE_DIR")
    here = Path(__file__).resolve().parent
    choices = [Path(given)] if given else []
    choices.append(here / "__pycache__")
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    choices.append(Path(home) / "mcusim")
    for choice in choices:
        if numba_cache._writable(choice):
            return choice / "mcusim-native" / _identity()
    return None


def _installed(package: str, *patterns: str) -> str:
    """The identity of an installed package: where its version file and compiled libraries are,
    their sizes and when they were written (a reinstall changes them)."""
    root = os.path.dirname(importlib.util.find_spec(package).origin)
    marks = []
    for pattern in ("_version.py", "*.so", "*.pyd") + patterns:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            info = os.stat(path)
            marks.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(marks)


def _identity() -> str:
    import llvmlite.binding as ll

    parts = [str(FORMAT), numba_cache.package_stamp(Path(__file__).resolve().parent), sys.version,
             _installed("numba", "core/runtime/*.so"), _installed("llvmlite", "binding/*.so"), ll.get_process_triple(), ll.get_host_cpu_name(),
             ll.get_host_cpu_features().flatten()]
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("NUMBA_"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _entry_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Store:
    """Object code by key, and one MCJIT engine that loads it into this process."""

    def __init__(self):
        self._folder: Path | None | bool = False  # (False: not looked for yet)
        self._engine = None
        self._keep = []  # environments and engines the loaded code refers to

    @property
    def folder(self) -> Path | None:
        if self._folder is False:
            try:
                self._folder = _folder()
            except Exception:  # (a package without the files looked for: no store)
                self._folder = None
        return self._folder

    def save(self, key: str, description: dict, object_code: bytes) -> None:
        """Keep `object_code` under `key` with `description` (its symbol names, argument kinds)."""
        folder = self.folder
        if folder is None:
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            name = _entry_name(key)
            _write(folder / f"{name}.o", object_code)
            entry = dict(description, key=key, sha256=hashlib.sha256(object_code).hexdigest())
            _write(folder / f"{name}.json", json.dumps(entry).encode())
        except OSError:
            pass  # (the store is only a shortcut: numba stays the way)

    def find(self, key: str) -> tuple[dict, bytes] | None:
        folder = self.folder
        if folder is None:
            return None
        name = _entry_name(key)
        try:
            entry = json.loads((folder / f"{name}.json").read_bytes())
            object_code = (folder / f"{name}.o").read_bytes()
        except (OSError, ValueError):
            return None
        if entry.get("key") != key or entry.get("sha256") != hashlib.sha256(object_code).hexdigest():
            return None
        return entry, object_code

    def load(self, key: str):
        """(entry, engine) with the entry's object code loaded, or None when the store lacks it."""
        found = self.find(key)
        if found is None:
            return None
        entry, object_code = found
        import llvmlite.binding as ll

        engine = self._jit()
        engine.add_object_file(ll.ObjectFileRef.from_data(object_code))
        engine.finalize_object()
        return entry, engine

    def function_address(self, key: str) -> int | None:
        """The address of the C function stored under `key` (a hook), or None."""
        loaded = self.load(key)
        if loaded is None:
            return None
        entry, engine = loaded
        return engine.get_function_address(entry["symbol"]) or None

    def python_function(self, key: str, module):
        """The Python function numba made for the function stored under `key` (its own wrapper,
        given an environment as numba gives it), or None."""
        loaded = self.load(key)
        if loaded is None:
            return None
        entry, engine = loaded
        address = engine.get_function_address(entry["symbol"])
        env_at = engine.get_global_value_address(entry["environment"])
        if not address or not env_at:
            return None
        dynfunc = _numba_extension("_dynfunc")
        environment = dynfunc.Environment(module.__dict__)
        self._keep.append(environment)
        ctypes.c_void_p.from_address(env_at).value = id(environment)
        return dynfunc.make_function(module, entry["name"], "", address, environment, (engine, environment))

    def _jit(self):
        """The MCJIT engine, with the symbols numba's code calls made known to LLVM first."""
        if self._engine is None:
            import llvmlite.binding as ll

            ll.initialize_native_target()
            ll.initialize_native_asmprinter()
            for prefix, extension in (("numba_", "_helperlib"), ("NRT_", "core.runtime._nrt_python")):
                for name, address in _numba_extension(extension).c_helpers.items():
                    ll.add_symbol(name if name.startswith("_") else prefix + name, address)
            machine = ll.Target.from_default_triple().create_target_machine()
            self._engine = ll.create_mcjit_compiler(ll.parse_assembly(""), machine)
        return self._engine


def _numba_extension(name: str):
    """One of numba's C extension modules (numba._helperlib, ...), loaded without numba itself:
    the module numba would import (numba does the same when it loads), its C functions the
    compiled code calls."""
    full = f"numba.{name}"
    if full in sys.modules:
        return sys.modules[full]
    root = os.path.dirname(importlib.util.find_spec("numba").origin)
    *folders, leaf = name.split(".")
    (path,) = glob.glob(os.path.join(root, *folders, leaf + ".*so")) or glob.glob(
        os.path.join(root, *folders, leaf + ".*pyd"))
    spec = importlib.util.spec_from_file_location(full, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all (another process may be reading it)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


STORE = Store()
