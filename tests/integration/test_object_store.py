"""The object store (native/object_store.py): a run whose native code numba (or llvmlite) compiled or loaded
before takes it from the store without importing numba, and computes exactly what numba's code
computes; an entry that is torn, corrupt or for another key is not used."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mcusim.machine.native import jit
from mcusim.machine.native.object_store import Store

PROGRAM = """
import json, sys
import mcusim
from mcusim.machine.native.held_front import HELD_FRONT
result = mcusim.run({elf!r}, {board!r}, **{options!r})
print(json.dumps(dict(
    figures=[result.exit_code, result.cycles, result.instructions, result.stdout, result.uart, result.dwt,
             result.stalls, result.energy, result.functions],
    numba="numba" in sys.modules, front_compiled=HELD_FRONT.compiled_here)))
"""


def _run(elf, board, options, **environment):
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(elf=str(elf), board=board, options=options)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **environment})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("board, program, options", [
    ("mcu-d", "bench", {"profile": True}),             # captures, power and fetch; the data cache's hook
    ("mcu-m", "printf-uart", {}),                      # the console page's native callbacks
    ("mps2-an386", "coremark-like", {"power": False}),  # the smallest hook variant
])
def test_a_second_run_loads_the_store_without_numba_and_computes_the_same(firmware_build, board, program, options):
    elf = firmware_build / board / f"{program}.elf"
    by_numba = _run(elf, board, options, MCUSIM_NATIVE_STORE="off")
    assert by_numba["numba"] and by_numba["front_compiled"]
    _run(elf, board, options)  # (keeps whatever the store still lacked)
    from_store = _run(elf, board, options)
    assert not from_store["numba"] and not from_store["front_compiled"]  # (no LLVM code generation either)
    assert from_store["figures"] == by_numba["figures"]


def _object(ir: str) -> bytes:
    import llvmlite.binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    return ll.Target.from_default_triple().create_target_machine().emit_object(ll.parse_assembly(ir))


TWICE = "define i64 @mcusim_twice(i64 %x) {\n  %y = mul i64 %x, 2\n  ret i64 %y\n}\n"
CALLS_MISSING = ("declare i64 @mcusim_no_such_function(i64)\n"
                 "define i64 @mcusim_calls(i64 %x) {\n  %y = call i64 @mcusim_no_such_function(i64 %x)\n"
                 "  ret i64 %y\n}\n")


def _store(folders):
    store = Store()
    store._folders = folders
    return store


def test_stored_code_is_loaded_and_called(tmp_path):
    _store([tmp_path]).save("twice", {"symbol": "mcusim_twice"}, _object(TWICE))
    loading = _store([tmp_path])  # (another process: a new store; its engine holds the code)
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(loading.function_address("twice"))(21) == 42


def test_code_calling_what_this_process_lacks_is_not_loaded(tmp_path):
    """(LLVM would abort the whole process at a call it cannot resolve.)"""
    _store([tmp_path]).save("calls", {"symbol": "mcusim_calls"}, _object(CALLS_MISSING))
    entry, _ = _store([tmp_path]).find("calls")
    assert entry["undefined"] == ["mcusim_no_such_function"]
    assert _store([tmp_path]).function_address("calls") is None


def test_an_entry_is_used_only_whole_and_for_its_own_key(tmp_path):
    store = _store([tmp_path])
    code = _object(TWICE)
    store.save("f(int64)", {"symbol": "mcusim_twice"}, code)
    entry, found = store.find("f(int64)")
    assert found == code and entry["symbol"] == "mcusim_twice"
    assert store.find("f(int32)") is None
    (object_file,) = tmp_path.glob("*.o")
    object_file.write_bytes(code[:-1] + bytes([code[-1] ^ 1]))  # (corrupt, or written by another version half-way)
    assert store.find("f(int64)") is None
    object_file.write_bytes(code)
    (description,) = tmp_path.glob("*.json")
    description.write_text(json.dumps(dict(json.loads(description.read_text()), key="f(int32)")))
    assert store.find("f(int64)") is None


def test_what_is_not_an_elf_object_is_not_stored(tmp_path):
    _store([tmp_path]).save("f(int64)", {"symbol": "f"}, b"not an object file")
    assert not list(tmp_path.iterdir())


def test_a_folder_that_cannot_be_written_is_passed_over(tmp_path):
    store = _store([tmp_path / "file", tmp_path / "folder"])
    (tmp_path / "file").write_text("")  # (a file where the folder should be)
    store.save("twice", {"symbol": "mcusim_twice"}, _object(TWICE))
    assert store.find("twice") is not None and list((tmp_path / "folder").glob("*.o"))


def test_the_stored_code_is_chosen_by_what_numba_would_compile_for():
    """numba's wrapper assumes the types it was compiled for: an argument of another dtype,
    dimension, layout or writability, or another scalar type, must not reach it."""
    kinds = {jit._kind(value) for value in (
        np.zeros(4, np.int64), np.zeros(4, np.int32), np.zeros((2, 2), np.int64), np.zeros(8, np.int64)[::2],
        np.zeros(4, np.int64).view(), 1, np.int64(1), np.int32(1), 1.0, True)}
    readonly = np.zeros(4, np.int64)
    readonly.flags.writeable = False
    kinds.add(jit._kind(readonly))
    assert len(kinds) == 10  # (the view is the array's own kind)
    # C-contiguous is numba's layout C whether or not also F-contiguous (no rows, one row or column)
    assert jit._kind(np.zeros((0, 4), np.int16)) == jit._kind(np.zeros((1, 4), np.int16)) \
        == jit._kind(np.zeros((3, 4), np.int16)) != jit._kind(np.zeros((3, 4), np.int16).T)


def test_what_the_kinds_cannot_tell_apart_never_runs_stored_code():
    """An int beyond int64 (numba: uint64), a tuple (its items' types), an array subclass: the
    type alone does not say what numba compiles for, so such calls always go to numba."""
    class Subclass(np.ndarray):
        pass

    for value in (2**63, -2**63 - 1, (1, 2), (1.0, 2.0, 3.0), np.zeros(4, np.int32).view(Subclass), "text"):
        assert jit._kind(value) is None
    assert jit._kind(2**63 - 1) is int and jit._kind(np.int32(1)) is np.int32


def test_only_the_native_package_is_stored():
    """The store's folder is named after the native package's source: a function elsewhere
    (whose source that name does not cover) is left to numba."""
    def double(x):
        return 2 * x

    elsewhere = jit.njit(double)
    assert not elsewhere.stored and elsewhere(np.int64(21)) == 42
    from mcusim.machine.native import tables

    assert tables.resum_window.stored


def test_after_mcusim_prepare_a_first_run_imports_no_numba(tmp_path, firmware_build):
    """`mcusim prepare` (scripts/setup.sh) fills the store ahead of the first run: a run of another
    program than it ran, with captures, on a fresh numba cache, loads everything from the store.
    Also where the decode store held the examples' rows already (here from an earlier prepare
    into another native store, as after the native store's folder changed): the examples still
    decode, so the native code decoding calls is stored too. And a program no example is
    (coremark-like: its code decoded with the encoding tables prepare wrote, which no run of
    prepare's own has; the store keys an empty table as numba types it, as a full one)."""
    decode_store = {"MCUSIM_DECODE_CACHE": str(tmp_path / "decode")}
    for store in ("earlier", "store"):
        environment = {**os.environ, **decode_store, "MCUSIM_NATIVE_STORE": str(tmp_path / store)}
        done = subprocess.run([sys.executable, "-m", "mcusim", "prepare"], capture_output=True, text=True,
                              timeout=1200, env=environment)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "block hook (captures, power, fetch)" in done.stderr and str(tmp_path / store) in done.stderr
        assert "register patterns of" in done.stderr  # (the bundled examples' code described for first runs)
        assert "libc.a" in done.stderr and "the tables of encodings met" in done.stderr  # (and the libraries')
    from mcusim import examples

    for board in ("mcu-d", "mps2-an386"):
        run = _run(examples.path("dwt", board), board, {"profile": True, "pc_sample_cycles": 500},
                   MCUSIM_NATIVE_STORE=str(tmp_path / "store"), NUMBA_CACHE_DIR=str(tmp_path / "numba"), **decode_store)
        assert run["figures"][0] == 0 and not run["numba"] and not run["front_compiled"], board
        run = _run(firmware_build / board / "coremark-like.elf", board, {}, MCUSIM_NATIVE_STORE=str(tmp_path / "store"),
                   NUMBA_CACHE_DIR=str(tmp_path / "numba"), **decode_store)
        assert run["figures"][0] == 0 and not run["numba"], f"coremark-like on {board}"


def test_no_home_means_no_store_in_the_working_folder(monkeypatch):
    from mcusim.machine.native import object_store

    for name in ("MCUSIM_NATIVE_STORE", "NUMBA_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert all(folder.is_absolute() for folder in object_store._folders())
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert object_store._folders()[-1].parents[1] == object_store.Path("/somewhere/cache/mcusim")
