"""The Cortex-M7 register patterns kept on disk (timing/m7_patterns.py): a decoder that reads
them renames the encodings of patterns an earlier run described, without capstone's detail,
into the Python model's rows; a damaged or foreign file, or a damaged entry, is ignored."""
import json
import random

import numpy as np
import pytest

from mcusim.machine.native import m7_schedule as S
from mcusim.timing import m7_descriptors as descriptors_module
from mcusim.timing import m7_patterns
from mcusim.timing.m7_patterns import FILE_NAME, read_patterns
from mcusim.timing.pattern_store import read_file, write_file
from test_m4_native_rows import BASE, rows
from test_m4_native_rows import decoders as decoders_for
from test_pattern_store import _pattern_of as m4_pattern_of


def code_of(seed: int, halfwords: int = 6000) -> bytes:
    """Random halfwords, register fields often over r0-r3 (every encoding capstone knows)."""
    rng = random.Random(seed)
    return b"".join((rng.getrandbits(16) & (~0b0000_0100_0010_0100 if rng.random() < 0.5 else 0xFFFF))
                    .to_bytes(2, "little") for _ in range(halfwords))


def decode(code: bytes, path, monkeypatch) -> tuple[int, object]:
    """Decode `code` in ranges with the memoised decoder using the pattern file `path` and the
    plain one; their rows must agree. Returns how many encodings got capstone's detail, and the
    memoised decoder."""
    details = []
    detail_of = descriptors_module.detail_of
    monkeypatch.setattr(descriptors_module, "detail_of", lambda *args: details.append(args) or detail_of(*args))
    fast, plain = decoders_for(code, "cortex-m7")
    fast._m7.use_file(path)
    for decoder in (fast, plain):
        for start in range(0, len(code), 256):
            decoder.decode(BASE + start, BASE + min(len(code), start + 256))
    assert np.array_equal(rows(fast), rows(plain))
    return len(details), fast


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """A pattern file one decoder wrote, and how many details it read."""
    path = tmp_path / FILE_NAME
    described, fast = decode(code_of(1), path, monkeypatch)
    fast.save_store()
    assert path.exists() and len(read_patterns(path)) > 300
    return path, described


def test_a_later_decoder_renames_the_patterns_an_earlier_one_kept(kept, tmp_path, monkeypatch):
    path, _ = kept
    without, _ = decode(code_of(2), tmp_path / "none" / FILE_NAME, monkeypatch)
    with_file, _ = decode(code_of(2), path, monkeypatch)
    assert with_file < without / 2, (with_file, without)


def _pattern_of(key: str) -> tuple:
    """The pattern m7_patterns.key_text keeps as `key`: the Cortex-M4's key text, then the
    shifted-constant flag (None, a bool, or an immediate's text)."""
    m4_key, shifted = key.rsplit("\t", 1)
    return m4_pattern_of(m4_key), {"None": None, "True": True, "False": False}.get(shifted, shifted)


def test_a_pattern_is_found_only_under_its_own_shifted_constant_flag(kept):
    """A modified immediate that is a shifted constant takes the early shifter: two patterns that
    differ only in that flag are timed differently, so the file keeps them apart."""
    path, _ = kept
    patterns = read_patterns(path)
    keys = set(patterns.keys)
    assert all(m7_patterns.key_text(_pattern_of(key)) == key for key in keys)
    by_form: dict = {}
    for key in keys:
        form, shifted = _pattern_of(key)
        by_form.setdefault(form, {})[shifted] = patterns.get((form, shifted))
        assert len({m7_patterns.key_text((form, flag)) for flag in (None, True, False, "#1.5", "#1")}) == 5
    both = [entries for entries in by_form.values() if entries.get(True) and entries.get(False)]
    assert both, "a pattern met with a shifted constant and without"
    for entries in both:  # (the shifted one takes the early shifter: another template)
        assert not np.array_equal(entries[True].template[0], entries[False].template[0])


DAMAGES = ["a place beyond the pattern's registers", "a renameable register named", "not JSON", "a count that disagrees",
           "a flag beyond the schedule's", "a row of another size", "a literal kept", "another version", "cut short"]


def damaged_text(text: str, damage: str) -> str:
    """An entry's template text with `damage` done to it (unchanged where it has nothing to damage)."""
    if damage == "not JSON":
        return text[:-1]
    head, written, decided = json.loads(text)
    if damage == "a place beyond the pattern's registers" and written:
        written[0] = 40
    elif damage == "a renameable register named" and written:
        written[0] = "r7"
    elif damage == "a count that disagrees":
        head[S.C_READS] += 1
    elif damage == "a flag beyond the schedule's":
        head[S.C_FLAGS] = 1 << 20
    return json.dumps([head, written, decided], separators=(",", ":"))


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_entry_or_file_is_ignored(kept, tmp_path, monkeypatch, damage):
    path, _ = kept
    rows_, flags, keys, slots = read_file(path, m7_patterns.MAGIC, m7_patterns.VERSION, m7_patterns.R.DESCRIPTOR)
    rows_ = rows_.copy()
    damaged = tmp_path / "damaged" / FILE_NAME
    damaged.parent.mkdir()
    texts = [damaged_text(text, damage) for text in slots]
    if damage in ("a row of another size", "a literal kept"):
        rows_[:, m7_patterns.R.D_SIZE if damage == "a row of another size" else m7_patterns.R.D_LITERAL] = 0x12345
    elif damage not in ("another version", "cut short"):
        changed = [text for text, was in zip(texts, slots) if text != was]
        assert len(changed) > len(slots) / 4, "the damage is done to most entries"
        assert all(m7_patterns.template_of(text) is None for text in changed) or damage.startswith("a place")
    empty = (np.zeros((0, m7_patterns.R.DESCRIPTOR), np.int64), np.zeros(0, np.uint8), [], [])
    write_file(damaged, empty, zip(keys, rows_, flags.tolist(), texts), m7_patterns.MAGIC,
               m7_patterns.VERSION + (damage == "another version"))
    if damage == "cut short":
        damaged.write_bytes(damaged.read_bytes()[:-16])
    decode(code_of(2), damaged, monkeypatch)  # (the rows the Python model's: checked there)
    if damage in ("another version", "cut short"):
        assert len(read_patterns(damaged)) == 0


def test_an_entry_reads_back_as_it_was_written(kept):
    """Each entry's template text gives back the encoded row's template it was written from."""
    path, _ = kept
    patterns = read_patterns(path)
    for text in patterns.slots:
        (row, at, places), decided_place, decided_number = m7_patterns.template_of(text)
        first = m7_patterns.First(np.zeros(m7_patterns.R.DESCRIPTOR, np.int64), False, False, False, (row, at, places),
                                  decided_place, decided_number)
        assert m7_patterns.template_text(first) == text
