"""The table of the 32-bit encodings `mcusim prepare` met (timing/thumb32_table.py) gives a
later first run the rows capstone's detail and the Cortex-M4 model give, found by the
encoding's bytes; a damaged or foreign file is ignored."""
import shutil

import numpy as np
import pytest

from mcusim.machine.native import m4_rows as R
from mcusim.timing import m4_descriptors, thumb32_table
from mcusim.timing.immediate_forms import FormIndex
from mcusim.timing.thumb32_table import read_table, write_table
from test_m4_native_rows import BASE, decoders
from test_register_pattern import _code
from test_thumb16_table import damage_bytes, decoded_alike

SEED = 7  # the code the table is made from, and decoded again with it


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The table of the 32-bit encodings outside IT blocks of _code(SEED), as a process that
    decoded that code makes it, and the folder its file is in."""
    saved = m4_descriptors._shared
    m4_descriptors._shared = {}
    try:
        code = _code(SEED, 2000)
        for at in range(0, len(code), 128):
            fast, _ = decoders(code[at: at + 128])
            fast.decode(BASE, BASE + len(code[at: at + 128]))
        keys, index, distinct = fast._m4.describe_wide()
    finally:
        m4_descriptors._shared = saved
    folder = tmp_path_factory.mktemp("patterns")
    write_table(folder / thumb32_table.FILE_NAME, keys, index, distinct, m4_descriptors.CORE_NAMES)
    return keys, index, distinct, folder


@pytest.fixture
def new_process(monkeypatch):
    """The decoders' shared descriptors forgotten, as in a new process."""
    monkeypatch.setattr(m4_descriptors, "_shared", {})


def test_the_table_keeps_the_32_bit_encodings_met_but_those_left_out(table):
    keys, index, distinct, folder = table
    assert 700 < len(keys) and 50 < len(distinct) < len(keys) and np.all(np.diff(keys) > 0)
    assert np.all(distinct[:, R.D_SIZE] == 4) and not np.any(distinct[:, [R.D_LITERAL, R.D_FP_READS]])
    found = read_table(folder / thumb32_table.FILE_NAME, m4_descriptors.CORE_NAMES)
    assert found is not None and np.array_equal(found[0], keys) and np.array_equal(found[1], index)
    assert np.array_equal(found[2], distinct)
    made = FormIndex(keys, index)  # (kept when written: a process reads it rather than make it)
    assert len(made.forms) > 50 and np.array_equal(found[3].forms, made.forms)
    assert np.array_equal(found[3].places, made.places)


def test_rows_from_the_table_equal_capstones_own(table, new_process, monkeypatch):
    _, _, _, folder = table
    code = _code(SEED, 2000)  # (16- and 32-bit encodings, IT blocks)
    assert decoded_alike(code, folder, "add_wide", monkeypatch) > 500, "32-bit encodings were found in the table"


def test_a_later_prepare_keeps_what_the_table_held(table, tmp_path, new_process, monkeypatch):
    """A process that found encodings in the table (a second `mcusim prepare` copies the examples'
    rows, and finds their encodings there) keeps them again, beside those it met."""
    keys, _, _, folder = table
    shutil.copy(folder / thumb32_table.FILE_NAME, tmp_path / thumb32_table.FILE_NAME)
    assert decoded_alike(_code(SEED + 1, 300), tmp_path, "add_wide", monkeypatch) > 0
    fast, _ = decoders(b"")
    fast._m4.use_file(tmp_path / "m4-patterns.bin")  # (a decoder without a store has none)
    assert set(keys.tolist()) < set(fast._m4.describe_wide()[0].tolist())


DAMAGES = ["not a table", "cut short", "another version", "other register names", "encodings out of order",
           "a 16-bit encoding", "a place out of range", "a row of another size", "an FP register bit",
           "forms out of order", "a form's place out of range", "a 16-bit form"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_or_foreign_file_is_ignored(table, tmp_path, damage, new_process, monkeypatch):
    keys, index, distinct, _ = table
    keys, index, distinct, names = keys.copy(), index.copy(), distinct.copy(), m4_descriptors.CORE_NAMES
    path = tmp_path / thumb32_table.FILE_NAME
    forms = FormIndex(keys, index)
    if damage == "other register names":
        names = names[1:] + names[:1]
    elif damage == "encodings out of order":
        keys[[0, 1]] = keys[[1, 0]]
    elif damage == "a 16-bit encoding":
        keys[0] = 0x0000_4770  # (bx lr, and a halfword after it)
    elif damage == "a place out of range":
        index[7] = len(distinct)
    elif damage == "a row of another size":
        distinct[0, R.D_SIZE] = 2
    elif damage == "an FP register bit":
        distinct[0, R.D_FP_READS] = 1
    elif damage == "forms out of order":
        forms.forms[[0, 1]] = forms.forms[[1, 0]]
    elif damage == "a form's place out of range":
        forms.places[3] = len(distinct)
    elif damage == "a 16-bit form":  # (LDR literal T1's: its row would be a 32-bit one's)
        forms.forms[0] = 0x4800
    write_table(path, keys, index, distinct, names, forms)
    damage_bytes(path, damage, thumb32_table.VERSION)
    assert read_table(path, m4_descriptors.CORE_NAMES) is None
    assert decoded_alike(_code(SEED, 40), tmp_path, "add_wide", monkeypatch) == 0
