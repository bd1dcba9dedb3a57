"""The native functions' machine code kept between runs and loaded without importing numba.

Importing numba and setting up its compiler took 0.4 to 0.6 s of every start, although a warm
start only loads machine code numba has compiled before (docs/performance.md, "Tenth pass").
So whenever numba compiles or loads a hook, or a function Python calls, jit.py keeps its object
code here; a later process loads it with llvmlite's MCJIT (as numba itself does), resolves what
it calls (numba's runtime and helper C functions, Python's C API, Unicorn) and hands out the
hook's address or, for a function Python calls, a Python function made from numba's own
wrapper, exactly as numba would. Nothing here imports numba. Only the native package's own
functions are stored (their source is what names the store's folder), and the block hook's front,
which llvmlite compiles from its IR (held_front.py).

An entry is only used by the process whose code it was compiled from: the store's folder is
named after a hash of the native package's source (numba_cache.package_stamp) and of
everything that makes numba's output differ (numba's and llvmlite's installation, Python, the
host CPU, every NUMBA_* setting but where numba caches). Each entry is a JSON description with the SHA-256 of its
object file, written last: a torn or corrupt entry is not used. Anything that fails here leaves
the function to numba (the front: to be compiled again, or left out).
"""
from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

from ...files import user_cache_dir
from .. import numba_cache

FORMAT = 1  # (bumped when what an entry holds changes)


def _folders() -> list[Path]:
    """Where the store may be, in the order looked in: MCUSIM_NATIVE_STORE when it names a
    folder (the only one then; "off": none, numba compiles or loads everything), else beside
    numba's cache (NUMBA_CACHE_DIR), the native package's __pycache__ (where `mcusim prepare`
    puts what it compiles) and the user's cache folder. Code is saved in the first that can be
    written."""
    chosen = os.environ.get("MCUSIM_NATIVE_STORE", "")
    if chosen.lower() in ("0", "off", "no", "false"):
        return []
    if chosen:
        places = [Path(chosen)]
    else:
        given = os.environ.get("NUMBA_CACHE_DIR")
        places = ([Path(given)] if given else []) + [Path(__file__).resolve().parent / "__pycache__"]
        places += [folder for folder in [user_cache_dir()] if folder]
    identity = _identity()
    return [place / "mcusim-native" / identity for place in places]


def _installed(package: str, *patterns: str) -> str:
    """The identity of an installed package: where its version file and compiled libraries are,
    their sizes and when they were written (a reinstall changes them)."""
    root = _package_root(package)
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
    parts += sorted(f"{k}={v}" for k, v in os.environ.items()
                    if k.startswith("NUMBA_") and k not in ("NUMBA_CACHE_DIR", "NUMBA_DEBUG_CACHE"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _entry_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Store:
    """Object code by key, and one MCJIT engine that loads it into this process."""

    def __init__(self):
        self._folders: list[Path] | None = None  # (None: not looked for yet)
        self._engine = None
        self._keep = []  # environments the loaded code refers to
        self._resolved: set[str] = set()  # symbols LLVM was found to resolve (each looked up once a process)
        self.saved_in: Path | None = None  # where code was last saved

    @property
    def folders(self) -> list[Path]:
        if self._folders is None:
            try:
                self._folders = _folders()
            except Exception:  # (a numba or llvmlite without the files looked for: no store)
                self._folders = []
        return self._folders

    def save(self, key: str, description: dict, object_code: bytes) -> None:
        """Keep `object_code` under `key` with `description` (its symbol names) and the symbols
        it calls, in the first folder that can be written."""
        undefined = _undefined_symbols(object_code)
        if undefined is None:
            return
        name = _entry_name(key)
        entry = dict(description, key=key, undefined=undefined, sha256=hashlib.sha256(object_code).hexdigest())
        for folder in self.folders:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _write(folder / f"{name}.o", object_code)
                _write(folder / f"{name}.json", json.dumps(entry).encode())  # (last: the entry is whole)
                self.saved_in = folder
                return
            except OSError:
                continue  # (the store is only a shortcut: numba stays the way)

    def find(self, key: str) -> tuple[dict, bytes] | None:
        """The description and object code kept under `key`, from the first folder holding a
        whole entry for it."""
        name = _entry_name(key)
        for folder in self.folders:
            try:
                entry = json.loads((folder / f"{name}.json").read_bytes())
                object_code = (folder / f"{name}.o").read_bytes()
            except (OSError, ValueError):
                continue
            if entry.get("key") == key and entry.get("sha256") == hashlib.sha256(object_code).hexdigest():
                return entry, object_code
        return None

    def load(self, key: str):
        """(entry, engine) with the entry's object code loaded, or None when the store lacks it."""
        found = self.find(key)
        if found is None:
            return None
        entry, object_code = found
        import llvmlite.binding as ll

        engine = self._jit()
        for symbol in entry["undefined"]:  # (each look-up searches every library loaded)
            if symbol not in self._resolved:
                if ll.address_of_symbol(symbol) is None:
                    return None  # (LLVM would abort the process on a call it cannot resolve)
                self._resolved.add(symbol)
        self._add(engine, object_code)
        return entry, engine

    def load_object(self, object_code: bytes, symbol: str) -> int:
        """The address of `symbol` in object code loaded into this process only, not stored (code
        that calls nothing outside itself, where the store is off or cannot be written)."""
        engine = self._jit()
        self._add(engine, object_code)
        return engine.get_function_address(symbol)

    @staticmethod
    def _add(engine, object_code: bytes) -> None:
        import llvmlite.binding as ll

        engine.add_object_file(ll.ObjectFileRef.from_data(object_code))
        engine.finalize_object()

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
        """The MCJIT engine, with the symbols numba's code calls made known to LLVM first. It
        holds no module: an engine is made with one, which the first finalize_object would
        compile (LLVM's code generator set up for an empty module: docs/performance.md, "Thirty-seventh
        pass"), and it only loads object code."""
        if self._engine is None:
            import llvmlite.binding as ll

            ll.initialize_native_target()
            ll.initialize_native_asmprinter()
            for prefix, extension in (("numba_", "_helperlib"), ("NRT_", "core.runtime._nrt_python")):
                for name, address in _numba_extension(extension).c_helpers.items():
                    ll.add_symbol(name if name.startswith("_") else prefix + name, address)
            machine = ll.Target.from_default_triple().create_target_machine()
            empty = ll.parse_assembly("")
            self._engine = ll.create_mcjit_compiler(empty, machine)
            self._engine.remove_module(empty)
        return self._engine


def _undefined_symbols(object_code: bytes) -> list[str] | None:
    """The names an ELF object file calls or reads but does not define (None: not ELF, not
    stored: nothing else could be checked before loading)."""
    import io

    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        table = ELFFile(io.BytesIO(object_code)).get_section_by_name(".symtab")
    except ELFError:
        return None
    if table is None:
        return None
    return sorted({symbol.name for symbol in table.iter_symbols()
                   if symbol.name and symbol["st_shndx"] == "SHN_UNDEF"})


@functools.cache
def _package_root(package: str) -> str:
    """The folder of an installed package, found once a process."""
    return os.path.dirname(importlib.util.find_spec(package).origin)


def _numba_extension(name: str):
    """One of numba's C extension modules (numba._helperlib, ...), loaded without numba itself:
    the module numba would import (numba does the same when it loads), its C functions the
    compiled code calls."""
    full = f"numba.{name}"
    if full in sys.modules:
        return sys.modules[full]
    *folders, leaf = name.split(".")
    base = os.path.join(_package_root("numba"), *folders, leaf)
    # (the names Python gives extension modules, looked for one by one, not a glob of numba's
    # folder and a search for numba for each of the three a process loads)
    path = next((base + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES if os.path.isfile(base + suffix)),
                None)
    if path is None:
        raise ImportError(f"numba's {name} extension module is not installed")
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
        os.chmod(temporary, 0o644)  # (mkstemp's 0600 would hide a store `mcusim prepare` made from other users)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


STORE = Store()
