"""The decode store keeps decoded rows from one run of an image to the next: a later run copies
them and computes exactly what a fresh decode gives; a damaged, foreign or unwritable store costs
only the time it would have saved."""
import zlib

import numpy as np
import pytest

import mcusim
from mcusim.machine import native as N
from mcusim.timing import decode_store
from mcusim.timing.decode_store import DecodeStore, _key_digest

from elfgen import program


def _key(n: int) -> tuple:
    return (n.to_bytes(4, "little") + b"\x00\xbf", 4, None if n % 3 else b"\x70\x47")


def _rows(n: int) -> np.ndarray:
    rows = np.zeros((1 + n % 4, N.FIELDS), np.int64)
    rows[:, N.KIND] = N.KIND_START
    rows[:, N.F_CYCLES] = n
    return rows


def _keys_with_a_zero_last_digest_byte(count: int) -> list[int]:
    """Keys whose digest ends in a zero byte among the first `count` (NumPy's bytes dtype would drop it)."""
    found = [n for n in range(4096) if _key_digest(_key(n))[-1] == 0]
    assert found, "no digest ending in a zero byte among 4096 keys"
    return found[:1] + list(range(count))


def test_rows_specials_and_lengths_come_back_in_a_new_store(tmp_path):
    path = tmp_path / "decode" / "stamp" / "image.rows"
    keys = _keys_with_a_zero_last_digest_byte(200)
    store = DecodeStore(path)
    for n in keys:
        store.put(_key(n), _rows(n), [(0, "vadd.f32", "s0, s0, s1")] if n % 5 == 0 else [], 2 * len(_rows(n)))
    store.save()
    again = DecodeStore(path)
    assert len(again) == len(set(keys))
    for n in keys:
        rows, specials, length = again.get(_key(n))
        assert np.array_equal(rows, _rows(n)) and length == 2 * len(_rows(n))
        assert specials == ([(0, "vadd.f32", "s0, s0, s1")] if n % 5 == 0 else [])
    assert again.get((b"\x01\x02", 2, None)) is None


def _file(rows=None, specials=((0, "sdiv", "r0, r1, r2"),), count=3) -> bytes:
    """A store file written by hand: one entry, _key(0)'s, of `count` rows (`rows` as given)."""
    if rows is None:
        rows = np.zeros((3, N.FIELDS), np.int64) + np.eye(1, N.FIELDS, N.KIND, np.int64) * N.KIND_START
    return decode_store.pack([_key_digest(_key(0))], [(rows, [list(s) for s in specials], 6, count)])


def _with_place(packed: bytes, place: int) -> bytes:
    """`packed` (one entry) with its first row's place in the table replaced by `place`."""
    header = list(decode_store.HEADER.unpack_from(packed))
    count, distinct = header[2], header[4]
    payload = bytearray(zlib.decompress(packed[decode_store.HEADER.size:]))
    at = 16 * count + 8 * (count + 1) + 8 * count + 8 * N.FIELDS * distinct
    payload[at: at + 4] = place.to_bytes(4, "little")
    stream = zlib.compress(bytes(payload))
    header[5] = len(stream)
    return decode_store.HEADER.pack(*header) + stream


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong shape", "bad specials", "stream cut",
                                    "bytes after", "bad kind", "fewer rows", "place past the table"])
def test_a_damaged_file_is_an_empty_store(tmp_path, damage):
    """A file is checked whole when read: any damage, and no entry of it is used."""
    path = tmp_path / "image.rows"
    store = DecodeStore(path)
    for n in range(20):
        store.put(_key(n), _rows(n), [], 2)
    store.save()
    rows = np.zeros((3, N.FIELDS), np.int64) + np.eye(1, N.FIELDS, N.KIND, np.int64) * N.KIND_START
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    elif damage == "stream cut":  # (the stream one byte short)
        path.write_bytes(path.read_bytes()[:-1])
    elif damage == "bytes after":
        path.write_bytes(path.read_bytes() + b"\0")
    elif damage == "wrong shape":  # (the header saying one row more than the stream holds)
        packed = _file()
        header = list(decode_store.HEADER.unpack_from(packed))
        header[3] += 1
        path.write_bytes(decode_store.HEADER.pack(*header) + packed[decode_store.HEADER.size:])
    elif damage == "bad kind":
        rows[1, N.KIND] = 9
        path.write_bytes(_file(rows))
    elif damage == "fewer rows":  # (the entry's count one more than its rows)
        path.write_bytes(_file(rows[:2], count=3))
    elif damage == "place past the table":
        path.write_bytes(_with_place(_file(rows), 1))  # (three equal rows: a table of one)
    else:
        path.write_bytes(_file(specials=[(0, "sdiv", 7)]))
    assert len(DecodeStore(path)) == 0


def test_many_entries_come_back_together_as_one_at_a_time(tmp_path):
    """get_many (a run's preload) gives what get gives, entry by entry (a file's entries as
    their places in its table), also for entries used before and ones added in this run; a key
    the file lacks is a miss."""
    path = tmp_path / "image.rows"
    _file_with(path, range(30))
    store = DecodeStore(path)
    assert store.get(_key(4)) is not None  # (its rows made already)
    store.put(_key(40), _rows(40), [], 2 * len(_rows(40)))
    keys = [_key(n) for n in [*range(30), 40]] + [(b"\x01\x02", 2, None)]
    many = store.get_many(keys)
    one_at_a_time = DecodeStore(path)
    assert sum(isinstance(found[0], decode_store.Places) for found in many[:31]) == 29
    for key, found in zip(keys[:30], many):
        expected = one_at_a_time.get(key)
        rows = found[0].rows() if isinstance(found[0], decode_store.Places) else found[0]
        assert np.array_equal(rows, expected[0]) and found[1:] == expected[1:]
    assert np.array_equal(many[30][0], _rows(40)) and many[31] is None


def test_a_file_written_again_holds_every_entry_and_each_distinct_row_once(tmp_path):
    """A run that adds a range to an image's file writes every entry back, the ones it never
    used too, with a row already in its table not added again."""
    path = tmp_path / "image.rows"
    _file_with(path, range(12))
    distinct = decode_store.HEADER.unpack_from(path.read_bytes())[4]
    assert distinct == 12  # (_rows(n): one distinct row per n)
    store = DecodeStore(path)
    store.put(_key(500), np.concatenate([_rows(3), _rows(500)]), [], 2)
    store.save()
    assert decode_store.HEADER.unpack_from(path.read_bytes())[4] == distinct + 1
    again = DecodeStore(path)
    for n in range(12):
        assert np.array_equal(again.get(_key(n))[0], _rows(n))
    assert np.array_equal(again.get(_key(500))[0], np.concatenate([_rows(3), _rows(500)]))


def test_a_well_formed_file_written_by_hand_is_read(tmp_path):
    """(the damaged files above fail for their damage alone)"""
    path = tmp_path / "image.rows"
    path.write_bytes(_file())
    rows, specials, length = DecodeStore(path).get(_key(0))
    assert rows.shape == (3, N.FIELDS) and np.all(rows[:, N.KIND] == N.KIND_START)
    assert specials == [(0, "sdiv", "r0, r1, r2")] and length == 6


def test_a_store_that_cannot_be_written_is_skipped(tmp_path):
    (tmp_path / "a-file").write_bytes(b"")
    store = DecodeStore(tmp_path / "a-file" / "decode" / "image.rows")  # (its folder cannot be made)
    store.put(_key(1), _rows(1), [], 2)
    store.save()
    assert store.get(_key(1)) is not None  # (still used in this run)


def test_off_turns_the_store_off_and_a_folder_chooses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", "off")
    assert DecodeStore.open("image", "model").path is None
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", str(tmp_path))
    path = DecodeStore.open("image", "model").path
    assert path.parent.parent == tmp_path / "decode" and path.name == "image.rows"
    assert DecodeStore.open("image", "another model").path != path


def test_the_least_recently_used_files_go_when_the_store_is_full(tmp_path, monkeypatch):
    paths = [tmp_path / "decode" / "stamp" / f"image{i}.rows" for i in range(4)]
    for i, path in enumerate(paths):
        store = DecodeStore(path)
        for n in range(100):
            store.put(_key(n + 1000 * i), _rows(n), [], 2)
        store.save()
    sizes = [path.stat().st_size for path in paths]
    monkeypatch.setattr(decode_store, "MAX_BYTES", sizes[2] + sizes[3] + min(sizes) // 2)  # (+ the entry added)
    store = DecodeStore(paths[3])
    store.put(_key(99999), _rows(1), [], 2)
    store.save()
    assert [path.exists() for path in paths] == [False, False, True, True]


def _run(elf, board, store, monkeypatch):
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", store)
    simulator = mcusim.Simulator(elf, board=board, max_cycles=20_000)
    result = simulator.run()
    state = simulator.machine.decoder.state
    tables = {base: state.rows(index).copy() for index, (base, _, _) in enumerate(state.windows)}
    return result, tables, simulator.machine.decoder


@pytest.mark.parametrize("board", ["mcu-m", "mps2-an386"])
def test_a_second_run_copies_the_rows_and_computes_the_same(tmp_path, monkeypatch, board):
    elf = tmp_path / "wfi.elf"
    elf.write_bytes(program("wfi", flash_base=0x08000000 if board == "mcu-m" else 0))
    fresh, fresh_tables, fresh_decoder = _run(elf, board, "off", monkeypatch)
    first, _, first_decoder = _run(elf, board, str(tmp_path / "store"), monkeypatch)
    second, second_tables, second_decoder = _run(elf, board, str(tmp_path / "store"), monkeypatch)
    assert first_decoder.instructions_copied == 0 and fresh_decoder.instructions_copied == 0
    assert second_decoder.instructions_copied == second_decoder.instructions_decoded > 0
    assert second_decoder.instructions_decoded == fresh_decoder.instructions_decoded
    for result in (first, second):
        assert (result.exit_code, result.instructions, result.cycles) == \
            (fresh.exit_code, fresh.instructions, fresh.cycles)
    assert fresh_tables.keys() == second_tables.keys()
    for base in fresh_tables:
        assert np.array_equal(fresh_tables[base], second_tables[base]), hex(base)


def test_no_home_means_no_store_rather_than_one_in_the_working_folder(monkeypatch):
    monkeypatch.delenv("MCUSIM_DECODE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert decode_store.store_root() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert decode_store.store_root() == decode_store.Path("/somewhere/cache/mcusim")


def test_a_store_keeps_at_most_max_rows(tmp_path, monkeypatch):
    """Code made at run time (firmware running away through RAM) cannot grow it without end."""
    monkeypatch.setattr(decode_store, "MAX_ROWS", 10)
    store = DecodeStore(tmp_path / "image.rows")
    for n in range(20):
        store.put(_key(n), np.zeros((3, N.FIELDS), np.int64) + N.KIND_START, [], 6)
    assert len(store) == 3
    store.save()
    assert len(DecodeStore(tmp_path / "image.rows")) == 3


def _file_with(path, numbers):
    store = DecodeStore(path)
    for n in numbers:
        store.put(_key(n), _rows(n), [], 2 * len(_rows(n)))
    store.save()


def test_a_range_missing_here_is_copied_from_another_image_and_kept_here(tmp_path):
    """Rows do not depend on addresses: the same code in another image (another build, another
    board) serves, and the copy is saved with this image so it does not need the other next time."""
    folder = tmp_path / "decode" / "stamp"
    _file_with(folder / "other.rows", [1, 2, 3])
    store = DecodeStore(folder / "this.rows", decode_store._recent_siblings(folder / "this.rows"))
    rows, _, length = store.get(_key(2))
    assert np.array_equal(rows, _rows(2)) and length == 2 * len(_rows(2))
    assert store.get(_key(7)) is None
    store.save()
    (folder / "other.rows").unlink()
    again = DecodeStore(folder / "this.rows")
    assert len(again) == 1 and np.array_equal(again.get(_key(2))[0], _rows(2))


def test_other_images_are_read_only_on_a_miss_and_only_the_most_recent(tmp_path, monkeypatch):
    folder = tmp_path / "decode" / "stamp"
    for i in range(decode_store.SIBLINGS + 2):
        _file_with(folder / f"image{i}.rows", [100 + i])
        os_time = 1_000_000 + i  # (image0 oldest)
        decode_store.os.utime(folder / f"image{i}.rows", (os_time, os_time))
    _file_with(folder / "this.rows", [5])
    siblings = decode_store._recent_siblings(folder / "this.rows")
    assert [p.name for p in siblings] == [f"image{i}.rows" for i in range(decode_store.SIBLINGS + 1, 1, -1)]
    reads = []
    monkeypatch.setattr(decode_store, "_read", lambda path, read=decode_store._read: reads.append(path) or read(path))
    store = DecodeStore(folder / "this.rows", siblings)
    assert store.get(_key(5)) is not None and reads == [folder / "this.rows"]
    assert store.get(_key(100)) is None  # (image0: not among the most recent)
    assert store.get(_key(100 + decode_store.SIBLINGS + 1)) is not None
    assert reads[1:] == siblings


def test_a_range_from_another_image_is_given_but_not_kept_in_a_full_store(tmp_path, monkeypatch):
    """A store at MAX_ROWS still gives what another image's file holds, and keeps no more."""
    folder = tmp_path / "decode" / "stamp"
    _file_with(folder / "other.rows", [7])
    monkeypatch.setattr(decode_store, "MAX_ROWS", 6)
    store = DecodeStore(folder / "this.rows", decode_store._recent_siblings(folder / "this.rows"))
    for n in (1, 5):  # (2 and 2 rows)
        store.put(_key(n), _rows(n), [], 2)
    rows, *_ = store.get(_key(7))  # (4 rows: more than the room left)
    assert np.array_equal(rows, _rows(7)) and len(store) == 2


def test_copied_rows_are_gathered_from_one_table_or_joined(tmp_path):
    """The preload's copies (Decoder._write_copies) come as one table and places in it: the
    file's own table when they are all its entries, else their rows joined; either way each
    range's rows in order."""
    from mcusim.timing.decoder import _table_and_places

    path = tmp_path / "image.rows"
    _file_with(path, range(6))
    found = [entry[0] for entry in DecodeStore(path).get_many([_key(n) for n in range(6)])]
    expected = np.concatenate([_rows(n) for n in range(6)])
    table, places = _table_and_places(found)
    assert table is found[0].table and np.array_equal(table[places], expected)
    table, places = _table_and_places([*found[:3], _rows(3), *found[4:]])
    assert np.array_equal(table[places], expected)
