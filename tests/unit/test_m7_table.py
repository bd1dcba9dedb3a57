"""The table of the encodings `mcusim prepare` met on the Cortex-M7 (timing/m7_table.py) gives a
later first run the rows capstone's detail and the Python schedule give, found by the
encoding's bytes, with its registers numbered as this process numbers them; a damaged or
foreign file is ignored."""
import shutil

import numpy as np
import pytest

from mcusim.machine.native import m7_rows as R
from mcusim.machine.native import m7_schedule as S
from mcusim.timing import m7_descriptors, m7_patterns, m7_table
from mcusim.timing.cortex_m7 import register_number
from mcusim.timing.immediate_forms import FormIndex
from mcusim.timing.instruction import slot_condition
from mcusim.timing.literal_loads import literal_read
from mcusim.timing.m7_table import FILE_NAME, read_arrays, read_table, table_arrays, write_arrays
from test_m4_native_rows import BASE, decoders, rows
from test_register_pattern import _code
from test_thumb16_table import count_walked, damage_bytes

SEED = 11  # the code the table is made from, and decoded again with it


def decode(code: bytes, folder, monkeypatch) -> tuple[int, object]:
    """Decode `code` in ranges of 256 bytes (the schedule carried from one to the next) with the
    table in `folder` (no register patterns there) and with capstone's detail and the Python
    model alone: the same rows and the same instructions watched. Returns how many encodings
    were found in the table (or by the native walk of the encodings it holds), and the memoised
    decoder."""
    found = []
    for name in ("add_wide", "add_in_it"):
        original = getattr(m7_descriptors.Descriptors, name)
        monkeypatch.setattr(m7_descriptors.Descriptors, name,
                            lambda self, key, original=original: found.append(original(self, key)) or found[-1])
    count_walked(monkeypatch, found)
    fast, plain = decoders(code, "cortex-m7")
    fast._m7.use_file(folder / m7_patterns.FILE_NAME)
    for decoder in (fast, plain):
        for at in range(0, len(code), 256):
            decoder.decode(BASE + at, BASE + min(len(code), at + 256))
    assert np.array_equal(rows(fast), rows(plain))
    assert (fast.divides, fast.fp_instruction_addresses) == (plain.divides, plain.fp_instruction_addresses)
    return sum(entry is not None for entry in found), fast


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The folder of the table a process that decoded _code(SEED) makes (and no patterns)."""
    folder = tmp_path_factory.mktemp("m7")
    met = (m7_descriptors._met, m7_descriptors._met_in_it)
    saved = [set(each) for each in met]
    for each in met:
        each.clear()
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            _, fast = decode(_code(SEED, 2000), folder / "none", monkeypatch)
        fast._m7.use_file(folder / m7_patterns.FILE_NAME)
        fast._m7.write_table()
    finally:
        for each, before in zip(met, saved):
            each.clear()
            each.update(before)
    return folder


def test_the_table_keeps_the_encodings_met_but_those_left_out(table):
    found = read_table(table / FILE_NAME, register_number)
    assert found is not None
    keys, pair_of, pairs, descriptors, encoded, forms, _, _ = found
    sizes = m7_table.encoding_sizes(np.array(keys))
    assert len(keys) > 1000 and np.all(np.diff(keys) > 0) and 2 in sizes and 4 in sizes
    assert len(pairs) < len(keys) and len(descriptors) < len(pairs), "shared descriptors and rows"
    assert not np.any(descriptors[:, [R.D_LITERAL, R.D_SELF_LOOP]]), "a literal read is the decoder's to read"
    literals = [literal_read(key.to_bytes(int(size), "little")) for key, size in zip(keys.tolist(), sizes)]
    assert sum(map(bool, literals)) > 20, "literal loads are kept"
    assert np.array_equal(descriptors[[pairs[p][0] for p in pair_of], R.D_SIZE], sizes)
    made = FormIndex(keys, pair_of)  # (kept when written: a process reads it rather than make it)
    assert len(made.forms) > 100 and np.array_equal(forms.forms, made.forms) and np.array_equal(forms.places, made.places)


@pytest.mark.parametrize("seed", [SEED, SEED + 1])
def test_rows_from_the_table_equal_capstones_own(table, seed, monkeypatch):
    found, _ = decode(_code(seed, 2000), table, monkeypatch)
    assert found > (1200 if seed == SEED else 20), "encodings were found in the table"


def test_a_run_makes_only_the_table_rows_it_uses(table, monkeypatch):
    """The table's encoded rows become the timing model's as instructions first use them: a
    little code leaves most of them unmade (each costs memory writes), and the rows it uses
    are those of the file."""
    found, fast = decode(_code(SEED, 40), table, monkeypatch)
    descriptors = fast._m7
    compact, first, _, _ = descriptors.table_rows()
    assert found and len(compact) > 500
    made = fast.timing.encoded[first: first + len(compact), S.C_OCCUPANCY] != 0
    assert 0 < made.sum() < len(compact) / 10
    rows = fast.timing.encoded[first: first + len(compact)][made]
    head = S.C_READ + 3 * m7_table.KEPT_OPERANDS
    assert np.array_equal(rows[:, :head], compact[made, :head])
    assert np.array_equal(rows[:, S.C_WRITE: S.C_WRITE + 2 * m7_table.KEPT_OPERANDS], compact[made, head:])


def test_a_later_prepare_keeps_what_the_table_held(table, tmp_path, monkeypatch):
    """A process that found encodings in the table (a second `mcusim prepare` copies the examples'
    rows, and finds their encodings there) writes them again, beside those it met."""
    shutil.copy(table / FILE_NAME, tmp_path / FILE_NAME)
    monkeypatch.setattr(m7_descriptors, "_met", set())
    found, fast = decode(_code(SEED + 1, 300), tmp_path, monkeypatch)
    fast._m7.write_table()
    before, after = (set(read_table(folder / FILE_NAME, register_number)[0]) for folder in (table, tmp_path))
    assert found and before < after


def test_encodings_inside_it_blocks_are_kept_by_condition(table, monkeypatch):
    """The ITs met are kept with the other encodings, and those met inside IT blocks apart by
    their bytes and condition: a decode of the same code finds them there, with the rows
    capstone's detail gives (decode compares them)."""
    keys, _, pairs, descriptors, _, _, inside, inside_pairs = read_table(table / FILE_NAME, register_number)
    its = [key for key in keys.tolist() if key >> 8 == 0xBF and key & 15]
    assert len(its) > 50 and len(inside) > 100 and np.all(np.diff(inside.astype(np.int64)) > 0)
    conditions = set((inside >> 32 & 15).tolist())
    assert conditions <= set(range(14)) and len(conditions) > 10
    assert np.array_equal(descriptors[pairs[inside_pairs, 0], R.D_SIZE],
                          m7_table.encoding_sizes(inside & 0xFFFFFFFF))
    looked_up = []
    original = m7_descriptors.Descriptors.add_in_it
    monkeypatch.setattr(m7_descriptors.Descriptors, "add_in_it",
                        lambda self, key: looked_up.append(original(self, key)) or looked_up[-1])
    decode(_code(SEED, 2000), table, monkeypatch)
    assert sum(entry is not None for entry in looked_up) > 100


def test_an_encoding_inside_an_it_block_is_found_in_each_slot_of_its_condition_alone(table, monkeypatch):
    """Each slot of an ITTT of its condition finds it, with the rows capstone's detail gives it
    there (decode compares them); under the opposite condition (an ITE's else slot) the table
    has none for it, unless it met it so."""
    inside = read_table(table / FILE_NAME, register_number)[6]
    kept = set(inside.tolist())
    pieces, opposite = [], 0
    for key in inside[:: max(1, len(inside) // 150)].tolist():
        number, condition = key & 0xFFFFFFFF, key >> 32 & 15
        code = number.to_bytes(4 if number & 0xFFFF >= m7_table.HALFWORDS else 2, "little")
        then = condition & 1
        ittt = 0xBF00 | condition << 4 | then << 3 | then << 2 | 0b10
        ite = 0xBF00 | condition << 4 | (then ^ 1) << 3 | 0b100
        pieces.append(ittt.to_bytes(2, "little") + code * 3)
        if m7_table.in_it_key(code, condition ^ 1) not in kept:
            pieces.append(ite.to_bytes(2, "little") + code * 2)
            opposite += 1
    looked_up = []
    original = m7_descriptors.Descriptors.add_in_it
    monkeypatch.setattr(m7_descriptors.Descriptors, "add_in_it",
                        lambda self, key: looked_up.append((key, original(self, key))) or looked_up[-1][1])
    decode(b"".join(pieces), table, monkeypatch)
    found = [key for key, entry in looked_up if entry is not None]
    assert len(found) > 0.9 * (len(pieces) - opposite) * 3 and opposite > 50
    assert all(m7_table.in_it_key(key[0], slot_condition(key[1])) in kept for key in found)
    assert any(m7_table.in_it_key(key[0], slot_condition(key[1])) not in kept for key, entry in looked_up)


def test_the_half_of_a_32_bit_encoding_is_not_found_as_a_16_bit_one(table, tmp_path):
    """A 32-bit encoding whose second halfword is 0 has the number of its first halfword alone:
    cut short at a range's end, that halfword is no encoding of the table."""
    names, keys, pair_of, pairs, descriptors, compact = [list(a) if type(a) is list else a.copy()
                                                         for a in read_arrays(table / FILE_NAME)[:6]]
    wide = int(np.flatnonzero(m7_table.encoding_sizes(keys) == 4)[0])  # (the first: keys before it are 16-bit)
    keys[wide] = 0xE800  # (00e8 0000, the lowest a 32-bit encoding's number can be)
    write_arrays(tmp_path / FILE_NAME, names, keys, pair_of, pairs, descriptors, compact)
    fast, _ = decoders(b"", "cortex-m7")
    fast._m7.use_file(tmp_path / m7_patterns.FILE_NAME)
    assert fast._m7.add_wide((b"\x00\xe8\x00\x00", None)) is not None
    assert fast._m7.add_short((b"\x00\xe8", None), 0xE800) is None


def test_registers_are_numbered_as_this_process_numbers_them(table):
    """The file names its registers: read with another numbering, each register of an encoded row
    and each deciding register is that numbering's."""
    ours = read_table(table / FILE_NAME, register_number)
    shifted = read_table(table / FILE_NAME, lambda name: register_number(name) + 1)
    places = m7_table._register_places(ours[4])
    assert len(places[0]) > 1000
    assert np.array_equal(shifted[4][places], ours[4][places] + 1)
    others = np.ones(ours[4].shape, bool)
    others[places] = False
    assert np.array_equal(shifted[4][others], ours[4][others])
    decided = ours[3][:, R.D_DECIDED]
    assert np.any(decided >= 0) and np.array_equal(shifted[3][:, R.D_DECIDED], np.where(decided >= 0, decided + 1, -1))


def test_the_file_keeps_table_arrays_as_given(table, tmp_path):
    names, keys, pair_of, pairs, descriptors, compact, _, inside, inside_pairs = read_arrays(table / FILE_NAME)
    write_arrays(tmp_path / FILE_NAME, names, np.concatenate([keys, inside]).astype(np.int64),
                 np.concatenate([pair_of, inside_pairs]), pairs, descriptors, compact)
    assert (tmp_path / FILE_NAME).read_bytes() == (table / FILE_NAME).read_bytes()
    assert len(names) == len(set(names)) and len(keys) == len(pair_of) and pairs.shape[1] == 2
    empty = table_arrays([], np.zeros((0, R.DESCRIPTOR), np.int64), np.zeros((0, S.ROW), np.int64), [])
    write_arrays(tmp_path / "empty.bin", *empty)
    found = read_table(tmp_path / "empty.bin", register_number)
    assert found is not None and all(part.size == 0 for part in found[:5]) and found[5].forms.size == 0


DAMAGES = ["not a table", "cut short", "another version", "encodings out of order", "a 16-bit encoding and a halfword",
           "a pair out of range", "a register beyond the names", "a read count beyond those kept",
           "a field past its count", "a literal kept", "a row of another size", "a flag beyond the schedule's",
           "a name that is no register", "a name twice", "a register numbered beyond the schedule's",
           "forms out of order", "a form's pair out of range", "a 16-bit size that wraps in a byte",
           "a form's pair of the other size", "encodings inside IT blocks out of order",
           "an IT block's slot of the condition always", "a pair inside an IT block of the other size"]


def _first_read(compact: np.ndarray) -> int:
    return int(np.flatnonzero(compact[:, S.C_READS] > 0)[0])


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_or_foreign_file_is_ignored(table, tmp_path, damage, monkeypatch):
    names, keys, pair_of, pairs, descriptors, compact, _, inside, inside_pairs = [
        list(a) if type(a) is list else a if type(a) is tuple else a.copy() for a in read_arrays(table / FILE_NAME)]
    numbering = register_number
    forms = FormIndex(keys, pair_of)
    if damage == "encodings inside IT blocks out of order":
        inside[[0, 1]] = inside[[1, 0]]
    elif damage == "an IT block's slot of the condition always":  # (the last still: above every other condition)
        inside[-1] = m7_table.in_it_key((int(inside[-1]) & 0xFFFFFFFF).to_bytes(4, "little"), m7_table.AL)
    elif damage == "a pair inside an IT block of the other size":
        sizes = descriptors[pairs[:, 0], R.D_SIZE]
        inside_pairs[0] = int(np.flatnonzero(sizes != sizes[inside_pairs[0]])[0])
    if damage == "forms out of order":
        forms.forms[[0, 1]] = forms.forms[[1, 0]]
    elif damage == "a form's pair out of range":
        forms.places[3] = len(pairs)
    elif damage == "a form's pair of the other size":  # (the walk would take a 16-bit size for a 32-bit form)
        wide = int(np.flatnonzero(forms.forms & 0xFFFF >= m7_table.HALFWORDS)[0])
        forms.places[wide] = int(np.flatnonzero(descriptors[pairs[:, 0], R.D_SIZE] == 2)[0])
    if damage == "encodings out of order":
        keys[[0, 1]] = keys[[1, 0]]
    elif damage == "a 16-bit encoding and a halfword":
        keys[-1] = 0xFFFF_4770  # (bx lr: its key would be 0x4770)
    elif damage == "a pair out of range":
        pair_of[7] = len(pairs)
    elif damage == "a register beyond the names":
        compact[_first_read(compact), S.C_READ] = len(names)
    elif damage == "a read count beyond those kept":
        compact[0, S.C_READS] = m7_table.KEPT_OPERANDS + 1
    elif damage == "a field past its count":
        row = _first_read(compact)
        compact[row, S.C_READ + 3 * int(compact[row, S.C_READS])] = 1
    elif damage == "a literal kept":
        descriptors[0, R.D_LITERAL] = 0x1234
    elif damage == "a row of another size":
        descriptors[:, R.D_SIZE] = 6 - descriptors[:, R.D_SIZE]
    elif damage == "a 16-bit size that wraps in a byte":
        descriptors[descriptors[:, R.D_SIZE] == 2, R.D_SIZE] = 258
    elif damage == "a flag beyond the schedule's":
        compact[0, S.C_FLAGS] = m7_table.FLAG_BITS
    elif damage == "a name that is no register":
        names[0] = 7
    elif damage == "a name twice":
        names[1] = names[0]
    elif damage == "a register numbered beyond the schedule's":
        numbering = lambda name: S.REGISTERS + register_number(name)  # noqa: E731  (a process that numbered many)
    write_arrays(tmp_path / FILE_NAME, names, np.concatenate([keys, inside]).astype(np.int64),
                 np.concatenate([pair_of, inside_pairs]), pairs, descriptors, compact, forms)
    damage_bytes(tmp_path / FILE_NAME, damage, m7_table.VERSION)
    assert read_table(tmp_path / FILE_NAME, numbering) is None
    if numbering is register_number:
        found, fast = decode(_code(SEED, 300), tmp_path, monkeypatch)
        assert found == 0
        fast._m7.write_table()  # (a later prepare writes a whole table in its place)
        assert read_table(tmp_path / FILE_NAME, register_number) is not None
