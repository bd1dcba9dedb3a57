"""The table of every 16-bit encoding `mcusim prepare` keeps (timing/thumb16_table.py) gives a
first run the rows capstone's detail and the Cortex-M4 model give, found by halfword; a
damaged or foreign file is ignored."""
import numpy as np
import pytest

from mcusim.machine.native import m4_rows as R
from mcusim.timing import decoder as decoder_module, m4_descriptors, thumb16_table
from mcusim.machine.native.table_walk import UNRESOLVED
from mcusim.timing.literal_loads import literal_read
from mcusim.timing.thumb16_table import HALFWORDS, read_table, write_table
from test_m4_native_rows import BASE, decoders, rows
from test_register_pattern import _code


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The table, described in a process state of its own, and the folder its file is in."""
    saved = m4_descriptors._shared
    m4_descriptors._shared = {}
    try:
        fast, _ = decoders(b"")
        index, distinct = fast._m4.describe_short()
    finally:
        m4_descriptors._shared = saved
    folder = tmp_path_factory.mktemp("patterns")
    write_table(folder / thumb16_table.FILE_NAME, index, distinct, m4_descriptors.CORE_NAMES)
    return index, distinct, folder


@pytest.fixture
def new_process(monkeypatch):
    """The decoders' shared descriptors forgotten, as in a new process."""
    monkeypatch.setattr(m4_descriptors, "_shared", {})


def test_the_table_covers_the_16_bit_encodings_but_those_it_leaves_out(table):
    index, distinct, folder = table
    kept = index >= 0
    assert 55_000 < kept.sum() < HALFWORDS and 1_000 < len(distinct) < 10_000
    left_out = {halfword for halfword in range(HALFWORDS) if not kept[halfword]}
    assert 0xBF40 in left_out, "SEV, which the machine watches"
    assert 0xE7FE in left_out, "a branch to itself"
    assert not set(range(0x4800, 0x5000)) & left_out, "literal loads, their read left to the decoder"
    assert not np.any(distinct[:, R.D_LITERAL])
    found = read_table(folder / thumb16_table.FILE_NAME, m4_descriptors.CORE_NAMES)
    assert found is not None and np.array_equal(found[0], index) and np.array_equal(found[1], distinct)


def decoded_alike(code: bytes, folder, method: str, monkeypatch) -> int:
    """Decode `code`, in ranges of 128 bytes, with the tables in `folder` (no patterns there) and
    with capstone's detail and the Python model alone: the same rows and the same instructions
    watched. Returns how many encodings `method` (add_short, add_wide) found in a table, or the
    native walk of the encodings the tables hold (table_walk) found there (16- or 32-bit)."""
    found = []
    original = getattr(m4_descriptors.Descriptors, method)
    monkeypatch.setattr(m4_descriptors.Descriptors, method,
                        lambda self, *args: found.append(original(self, *args)) or found[-1])
    count_walked(monkeypatch, found, 2 if method == "add_short" else 4)
    for at in range(0, len(code), 128):
        piece = code[at: at + 128]
        fast, plain = decoders(piece)
        fast._m4.use_file(folder / "m4-patterns.bin")
        for decoder in (fast, plain):
            decoder.decode(BASE, BASE + len(piece))
        assert np.array_equal(rows(fast), rows(plain)), piece.hex()
        assert (fast.divides, fast.fp_instruction_addresses) == (plain.divides, plain.fp_instruction_addresses)
    return sum(entry is not None for entry in found)


def count_walked(monkeypatch, found: list, size: int | None = None) -> None:
    """Have the decoder's native walk (table_walk) add a True to `found` for each encoding (of
    `size` bytes, or any) it found in the tables."""
    walk = decoder_module.table_walk

    def counted(code, tables, at, rows):
        count = walk(code, tables, at, rows)
        found.extend(True for row, offset in zip(*rows[:, :count]) if row != UNRESOLVED
                     and (size is None or (4 if code[offset + 1] >= 0xE8 else 2) == size))
        return count
    monkeypatch.setattr(decoder_module, "table_walk", counted)


def damage_bytes(path, damage: str, version: int) -> None:
    """The damages to a table file's bytes: "not a table", "cut short", "another version"."""
    data = path.read_bytes()
    if damage == "not a table":
        data = b"PK\x03\x04" + bytes(range(200))
    elif damage == "cut short":
        data = data[:-8]
    elif damage == "another version":
        data = data[:8] + (version + 1).to_bytes(4, "little") + data[12:]
    path.write_bytes(data)


@pytest.mark.parametrize("seed", [3, 4])
def test_rows_from_the_table_equal_capstones_own(table, seed, new_process, monkeypatch):
    _, _, folder = table
    code = _code(seed, 3000)  # (16- and 32-bit encodings, IT blocks)
    assert decoded_alike(code, folder, "add_short", monkeypatch) > 1000, "16-bit encodings were found in the table"


def test_literal_loads_from_the_table_read_their_own_literal(table, new_process, monkeypatch):
    """Every LDR (literal) T1 is found in the table, its row shared but for the read its
    offset makes, which the decoder adds: the rows capstone's detail and the model give."""
    _, _, folder = table
    code = b"".join(halfword.to_bytes(2, "little") for halfword in range(0x4800, 0x5000))
    assert decoded_alike(code, folder, "add_short", monkeypatch) == 0x800


def test_a_row_whose_literal_read_is_not_its_encodings_is_left_out(new_process):
    """A table keeps a row only where the decoder, adding literal_read's of the bytes, makes it again."""
    fast, _ = decoders(b"")
    descriptors, load = fast._m4, b"\x01\x48"  # ldr r0, [pc, #4]
    row = descriptors._append()
    assert not descriptors._literal_left(row, load)
    descriptors.table[row, R.D_LITERAL] = literal_read(load)
    assert descriptors._literal_left(row, load) and descriptors.table[row, R.D_LITERAL] == 0


DAMAGES = ["not a table", "cut short", "another version", "other register names", "a place out of range",
           "a row of another size", "an FP register bit"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_or_foreign_file_is_ignored(table, tmp_path, damage, new_process, monkeypatch):
    index, distinct, folder = table
    index, distinct, names = index.copy(), distinct.copy(), m4_descriptors.CORE_NAMES
    path = tmp_path / thumb16_table.FILE_NAME
    if damage == "other register names":
        names = names[1:] + names[:1]
    elif damage == "a place out of range":
        index[7] = len(distinct)
    elif damage == "a row of another size":
        distinct[0, R.D_SIZE] = 4
    elif damage == "an FP register bit":
        distinct[0, R.D_FP_READS] = 1
    write_table(path, index, distinct, names)
    damage_bytes(path, damage, thumb16_table.VERSION)
    assert read_table(path, m4_descriptors.CORE_NAMES) is None
    assert decoded_alike(_code(5, 40), tmp_path, "add_short", monkeypatch) == 0
