"""The Cortex-M4 register patterns' descriptors kept on disk from one run to the next, whatever
the image.

Describing an encoding whose register pattern is new (timing/register_pattern.py) costs capstone's
detail and the Python model's analysis, over a hundred microseconds; one met before is renamed in a
few. Compiled code of any program uses mostly the same patterns (after large-startup's, the kit's
other programs and a public CoreMark build bring a few dozen to a few hundred new ones each), so
the patterns one run describes serve the first run of any other image. They depend only on the
Cortex-M4 model and its timing table, so they live beside the decode store's files of that model
(decode_store.DecodeStore.pattern_file: the folder's stamp covers the timing sources and table), in
one file (`pack`: a header with a CRC-32, then the entries' arrays and texts, no pickle and not
compressed, which a first run reads quicker than it inflated them), read when a run first meets an
encoding it does not know (each pattern's entry is checked and made when the run first needs it,
so a file of thousands costs a run a dictionary of their texts) and written whole (merged with
what another run wrote meanwhile: files.write_whole) after a run that described new ones. A file
that cannot be read or does not check out is ignored and one that cannot be written is skipped:
the file only saves time, never changes a result. As for the decode store, the folder must be
writable by its user alone: what is read from it is trusted once checked for form.
"""
from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np

from ..files import open_regular, write_whole
from ..machine.native import KIND, KIND_START
from ..machine.native import m4_rows as R
from .register_pattern import RENAMEABLE

MAGIC, VERSION = b"mcusimRP", 3  # (3: not compressed)
# MAGIC, VERSION, patterns, the keys' and the slots' text sizes, the CRC-32 of all that follows
# (a damaged byte is not used: the entries' own checks would pass many), 4 bytes of padding
HEADER = struct.Struct("<8sIIIII4x")
FILE_NAME = "m4-patterns.bin"  # in the decode store's folder of the model (decode_store.DecodeStore.pattern_file)
MAX_PATTERNS = 1 << 15  # kept in the file (far more than compiled code uses: a few thousand)
MAX_TEXT = 1 << 24  # bytes of the keys' or the slots' text
LITERAL, WATCHED, WIDE = 1, 2, 4  # an entry's flag bits (WIDE: a 32-bit encoding's)


def key_text(pattern: tuple) -> str:
    """A pattern (register_pattern's first item: form, mnemonic, numbered text) as the file keeps it."""
    form, mnemonic, text = pattern
    return f"{form[0]},{form[1]}\t{mnemonic}\t{text}" if type(form) is tuple else f"{form}\t{mnemonic}\t{text}"


class Patterns:
    """A pattern file's entries, each made (as m4_descriptors.Descriptors keeps them: descriptor
    values, read-only; may read a literal; watched; slots) when first asked for: a run uses a
    few hundred of the file's patterns, which may be thousands."""

    def __init__(self, rows: np.ndarray, flags: np.ndarray, keys: list[str], slots: list[str]):
        self.rows, self.flags, self.keys, self.slots = rows, flags, keys, slots
        self._places = dict(zip(keys, range(len(keys))))
        self._flags = flags.tolist()
        self._slots: dict[str, tuple | None] = {}  # a slots text -> its slots, None if it does not check out

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, pattern: tuple) -> tuple | None:
        """The entry of `pattern`, or None where the file has none (or one that does not check out)."""
        place = self._places.get(key_text(pattern))
        if place is None:
            return None
        flags = self._flags[place]
        if bool(flags & WIDE) != (type(pattern[0]) is tuple):  # (a 32-bit encoding's form is a pair)
            return None
        text = self.slots[place]
        slots = self._slots.get(text, False)
        if slots is False:  # (few distinct texts: most patterns read one of a few registers)
            slots = self._slots[text] = _slots(text)
        if slots is None:
            return None
        return self.rows[place], bool(flags & LITERAL), bool(flags & WATCHED), slots


def _slots(text: str) -> tuple | None:
    """An entry's slots from its text: four lists, each of places in the pattern's registers
    (0 to 63) and names of registers the pattern keeps; None if it is not that."""
    try:
        slots = json.loads(text)
    except ValueError:
        return None
    if not (type(slots) is list and len(slots) == 4 and all(type(field) is list and all(
            (type(x) is int and 0 <= x < 64) or (type(x) is str and len(x) < 16 and not RENAMEABLE.fullmatch(x))
            for x in field) for field in slots)):
        return None
    return tuple(map(tuple, slots))


EMPTY = Patterns(np.zeros((0, R.DESCRIPTOR), np.int64), np.zeros(0, np.uint8), [], [])


def read_patterns(path: Path) -> Patterns:
    """The file's patterns; none where the file is missing, damaged or foreign."""
    found = read_file(path, MAGIC, VERSION, R.DESCRIPTOR)
    if found is None:
        return EMPTY
    rows, flags, keys, slots = found
    # a row that says another size than its flags (get checks those against the pattern's form)
    # could make the native rows overrun
    if not (np.all(rows[:, R.D_DECODABLE] == 1) and np.all(rows[:, R.D_SIZE] == np.where(flags & WIDE, 4, 2))
            and np.all(rows[:, [R.D_LITERAL, R.D_SELF_LOOP, *R.D_MASKS]] == 0)
            and np.all(rows[:, R.D_STATIC + KIND] == KIND_START) and np.all(flags <= LITERAL | WATCHED | WIDE)):
        return EMPTY
    return Patterns(rows, flags, keys, slots)


def read_file(path: Path, magic: bytes, version: int, width: int) -> tuple | None:
    """A pattern file's (rows of `width` int64, flags, keys, slots' texts), its header `magic`
    and `version`; None where it is missing, damaged or foreign (the entries' own checks are
    the model's)."""
    try:
        with open_regular(path) as file:
            data = file.read()
        found, found_version, count, keys_size, slots_size, crc = HEADER.unpack_from(data)
        if found != magic or found_version != version or count > MAX_PATTERNS or max(keys_size, slots_size) > MAX_TEXT:
            return None
        sizes = [HEADER.size, 8 * width * count, count, keys_size, slots_size]
        if len(data) != sum(sizes) or zlib.crc32(memoryview(data)[HEADER.size:]) != crc:
            return None
        ends = np.cumsum(sizes).tolist()
        rows = np.frombuffer(data, "<i8", width * count, ends[0]).reshape(count, width)
        flags = np.frombuffer(data, np.uint8, count, ends[1])
        keys = data[ends[2]: ends[3]].decode("utf-8").split("\n") if count else []
        slots = data[ends[3]: ends[4]].decode("utf-8").split("\n") if count else []
    except (OSError, ValueError, struct.error):  # (missing, damaged or foreign: nothing)
        return None
    if len(keys) != count or len(slots) != count or len(set(keys)) != count:
        return None
    return rows, flags, keys, slots


def pack(rows: np.ndarray, flags: np.ndarray, keys: list[str], slots: list[str], magic: bytes = MAGIC,
         version: int = VERSION) -> bytes:
    """A pattern file: HEADER, then the rows (int64 each, as many a row as the model's
    descriptor), the flags (a byte each), and the keys' and the slots' texts (a line each, the
    slots as JSON)."""
    keys_text, slots_text = "\n".join(keys).encode("utf-8"), "\n".join(slots).encode("utf-8")
    body = b"".join([np.ascontiguousarray(rows, "<i8").tobytes(), np.asarray(flags, np.uint8).tobytes(), keys_text,
                     slots_text])
    return HEADER.pack(magic, version, len(keys), len(keys_text), len(slots_text), zlib.crc32(body)) + body


def write_patterns(path: Path, patterns: dict[tuple, tuple]) -> None:
    """Write `patterns` with those already in the file (another run's), MAX_PATTERNS at most;
    silently nothing where it cannot be written."""
    found = read_patterns(path)
    write_file(path, (found.rows, found.flags, found.keys, found.slots),
               ((key_text(pattern), values, LITERAL * literal | WATCHED * watched | WIDE * (type(pattern[0]) is tuple),
                 json.dumps([list(field) for field in pattern_slots], separators=(",", ":")))
                for pattern, (values, literal, watched, pattern_slots) in patterns.items()), MAGIC, VERSION)


def write_file(path: Path, found: tuple, entries, magic: bytes, version: int) -> None:
    """Write the file's entries `found` (rows, flags, keys, slots' texts, as read_file gives
    them) and `entries` ((key, row, flags, slots' text) each, those whose key it has left out),
    MAX_PATTERNS at most; silently nothing where it cannot be written."""
    rows, flags, keys, slots = [found[0]], [found[1]], list(found[2]), list(found[3])
    known = set(keys)
    for key, values, flag, text in entries:
        if len(keys) >= MAX_PATTERNS:
            break
        if key in known or "\n" in key or "\n" in text:
            continue
        known.add(key)
        keys.append(key)
        slots.append(text)
        rows.append(np.asarray(values, np.int64).reshape(1, -1))
        flags.append(np.array([flag], np.uint8))
    packed = pack(np.concatenate(rows), np.concatenate(flags), keys, slots, magic, version)
    write_whole(path, lambda out: out.write(packed))
