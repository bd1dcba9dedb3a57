"""The register patterns one run describes serve the next run's first decode of any image
(timing/pattern_store.py): it renames them without capstone's detail, and gets the rows the
Python model gives. A damaged or foreign file is ignored."""
import json

import numpy as np
import pytest

from mcusim.config.loader import core_timing_table, load_core
from mcusim.machine import native as N
from mcusim.machine.native import m4_rows as R
from mcusim.timing import m4_descriptors, m7_patterns, m7_table, pattern_store
from mcusim.timing.cortex_m4 import CortexM4Timing
from mcusim.timing.cortex_m7 import register_number
from mcusim.timing.decode_store import DecodeStore
from mcusim.timing.decoder import Decoder
from mcusim.timing.pattern_store import read_patterns, write_patterns
from mcusim.timing.thumb16_table import read_table, table_file

BASE = 0x1000
# ldr r0, [r1]; adds r2, r0, r3; vadd.f32 s0, s1, s2; ldr.w r3, [r1, #4]; str r2, [r0, r1]; bx lr
FIRST = "0868" + "c218" + "30ee810a" + "d1f80430" + "4250" + "7047"
# the same operations on other registers, at other offsets
SECOND = "1a68" + "5019" + "72ee821a" + "d4f80c70" + "8d50" + "7047"


def decoder(code: bytes, root, memoise: bool = True) -> Decoder:
    core = load_core("cortex-m4")
    timing = CortexM4Timing(core_timing_table(core))
    store = DecodeStore.open(code.hex()[:32], "test-model", root=root) if memoise else None

    def read(address, size):
        offset = address - BASE
        if offset < 0 or offset + size > len(code):
            raise ValueError("unmapped")
        return code[offset: offset + size]

    return Decoder(N.NativeState(), read, core.default_instruction_cycles, timing=timing, memoise=memoise,
                   store=store)


def decoded_rows(code: bytes, root, memoise: bool = True) -> np.ndarray:
    d = decoder(code, root, memoise)
    d.decode(BASE, BASE + len(code))
    d.save_store()
    return np.concatenate([d.state.rows(0), d._costs[0]])


@pytest.fixture
def new_process(monkeypatch):
    """Each call: the decoders' shared descriptors forgotten, as in a new process."""
    def forget():
        monkeypatch.setattr(m4_descriptors, "_shared", {})
    forget()
    return forget


def test_a_later_run_renames_the_patterns_an_earlier_one_described(tmp_path, new_process, monkeypatch):
    decoded_rows(bytes.fromhex(FIRST), tmp_path)
    files = list(tmp_path.glob("decode/*/m4-patterns.bin"))
    assert len(files) == 1 and len(read_patterns(files[0])) >= 5
    new_process()
    details = []
    detail = m4_descriptors.detail_of
    monkeypatch.setattr(m4_descriptors, "detail_of", lambda *a, **k: details.append(a) or detail(*a, **k))
    code = bytes.fromhex(SECOND)
    assert np.array_equal(decoded_rows(code, tmp_path), decoded_rows(code, tmp_path, memoise=False))
    assert not details, "every encoding was renamed from the file, none read from capstone's detail"


def test_without_the_file_the_patterns_are_described_again(tmp_path, new_process, monkeypatch):
    decoded_rows(bytes.fromhex(FIRST), tmp_path)
    for path in tmp_path.glob("decode/*/m4-patterns.bin"):
        path.unlink()
    new_process()
    details = []
    detail = m4_descriptors.detail_of
    monkeypatch.setattr(m4_descriptors, "detail_of", lambda *a, **k: details.append(a) or detail(*a, **k))
    decoded_rows(bytes.fromhex(SECOND), tmp_path)
    assert details


@pytest.mark.parametrize("damage", ["not a file of patterns", "foreign version", "a row of another size",
                                    "a size of another form", "a register out of place", "a register beyond 63",
                                    "cut short", "a row's cycles changed"])
def test_a_damaged_or_foreign_file_is_ignored(tmp_path, new_process, damage):
    decoded_rows(bytes.fromhex(FIRST), tmp_path)
    path = next(tmp_path.glob("decode/*/m4-patterns.bin"))
    found = read_patterns(path)
    rows, flags, keys, slots = found.rows.copy(), found.flags, found.keys, found.slots
    packed = pattern_store.pack(rows, flags, keys, slots)
    assert len(keys) >= 5 and all(found.get(_pattern_of(key)) is not None for key in keys)  # (before the damage)
    if damage == "not a file of patterns":
        packed = b"PK\x03\x04" + bytes(range(200))
    elif damage == "foreign version":
        packed = packed[:8] + (0).to_bytes(4, "little") + packed[12:]
    elif damage == "cut short":
        packed = packed[:-1]
    elif damage == "a row's cycles changed":  # (a value the entries' own checks accept: the CRC-32 catches it)
        packed = bytearray(packed)
        packed[pattern_store.HEADER.size + 8 * (R.D_STATIC + N.F_CYCLES)] += 1
        packed = bytes(packed)
    else:
        if damage == "a row of another size":
            rows[:, R.D_SIZE] = 6 - rows[:, R.D_SIZE]
        elif damage == "a size of another form":  # (the rows and their flags agree, their patterns do not)
            rows[:, R.D_SIZE] = 6 - rows[:, R.D_SIZE]
            flags = flags ^ pattern_store.WIDE
        else:  # a renameable register named as if it were fixed, or a register's place no mask holds
            slots = [json.dumps([["r3" if damage == "a register out of place" else 64], *json.loads(s)[1:]])
                     for s in slots]
        packed = pattern_store.pack(rows, flags, keys, slots)
    path.write_bytes(packed)
    patterns = read_patterns(path)
    assert all(patterns.get(_pattern_of(key)) is None for key in keys)
    new_process()
    code = bytes.fromhex(SECOND)
    assert np.array_equal(decoded_rows(code, tmp_path), decoded_rows(code, tmp_path, memoise=False))


def _pattern_of(key: str) -> tuple:
    """The pattern pattern_store.key_text keeps as `key`."""
    form, mnemonic, text = key.split("\t")
    return tuple(map(int, form.split(","))) if "," in form else int(form), mnemonic, text


def test_writing_keeps_what_another_run_wrote(tmp_path):
    path = tmp_path / "patterns.bin"
    values = np.zeros(R.DESCRIPTOR, np.int64)
    values[R.D_DECODABLE], values[R.D_SIZE], values[R.D_STATIC + N.KIND] = 1, 2, N.KIND_START
    one = {(13, "ldr", "%r, [%r]"): (values, True, False, ((1,), (0,), (), ()))}
    wide = values.copy()
    wide[R.D_SIZE] = 4
    two = {(6, "adds", "%r, #"): (values, False, False, ((), (0,), (), ())),
           ((30, 8), "bl", "#"): (wide, False, True, ((), ("lr",), (), ()))}
    write_patterns(path, one)
    write_patterns(path, two)
    found = read_patterns(path)
    assert len(found) == 3 and [_pattern_of(key) for key in found.keys] == [*one, *two]
    for pattern, entry in {**one, **two}.items():
        values_found, *rest = found.get(pattern)
        assert np.array_equal(values_found, entry[0]) and rest == list(entry[1:])
    assert found.get((6, "adds", "%r, %r")) is None and found.get(((30, 9), "bl", "#")) is None


def test_prepare_describes_the_examples_patterns_for_any_first_run(tmp_path, new_process, monkeypatch):
    """`mcusim prepare` decodes bundled examples' code (here two) once per core model keeping
    patterns: a first run of another program then renames most of its new encodings."""
    from mcusim import examples
    from mcusim.api import Simulator
    from mcusim.prepare import describe_patterns

    monkeypatch.setenv("MCUSIM_DECODE_CACHE", str(tmp_path))
    said = []
    assert describe_patterns(said.append, programs=["bench", "hello"], toolchain=False) == 4
    assert len(said) == 4  # (patterns and tables: Cortex-M4, Cortex-M7)
    assert len(m7_patterns.read_patterns(next(tmp_path.glob(f"decode/*/{m7_patterns.FILE_NAME}")))) > 100
    m7_encodings = m7_table.read_table(next(tmp_path.glob(f"decode/*/{m7_table.FILE_NAME}")), register_number)
    assert m7_encodings is not None and len(m7_encodings[0]) > 300, "the encodings met on the Cortex-M7"
    patterns = next(tmp_path.glob("decode/*/m4-patterns.bin"))
    assert len(read_patterns(patterns)) > 100
    assert read_table(table_file(patterns), m4_descriptors.CORE_NAMES) is not None, "every 16-bit encoding"
    new_process()
    calls = {"renamed": 0, "described": 0, "16-bit table": 0}
    add, add_renamed, add_short = (m4_descriptors.Descriptors.add, m4_descriptors.Descriptors.add_renamed,
                                   m4_descriptors.Descriptors.add_short)

    def renamed(self, *args):
        entry = add_renamed(self, *args)
        calls["renamed"] += entry is not None
        return entry

    def short(self, *args):
        entry = add_short(self, *args)
        calls["16-bit table"] += entry is not None
        return entry

    def described(self, *args):
        calls["described"] += 1
        return add(self, *args)

    monkeypatch.setattr(m4_descriptors.Descriptors, "add_renamed", renamed)
    monkeypatch.setattr(m4_descriptors.Descriptors, "add", described)
    monkeypatch.setattr(m4_descriptors.Descriptors, "add_short", short)
    assert Simulator(examples.path("isa", "mcu-m"), "mcu-m").run().exit_code == 0
    assert calls["16-bit table"] > 0 and calls["renamed"] > 0
    assert calls["renamed"] + calls["16-bit table"] > 10 * calls["described"] > 0  # (without the files: about 5x)
    assert Simulator(examples.path("isa", "mcu-d"), "mcu-d").machine.decoder.pattern_file.name == m7_patterns.FILE_NAME
