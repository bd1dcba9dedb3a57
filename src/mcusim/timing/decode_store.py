"""Finished decode rows kept on disk from one run of an image to the next.

Decoding code first seen costs tens of microseconds an instruction in Python, and a large image
(TFLM, an RTOS, a vendor HAL) spends most of a short run on it. The rows a code range decodes
to depend only on its bytes, the instruction before it and the core's timing table (a code
range is decoded as entered afresh: no instruction before it, and on the Cortex-M7 an empty
schedule), so a later run of the same image, on any board with the same core model, can copy
them (the decoder's `_decode_code` keys its in-process copies the same way). Nothing in the rows
depends on where the code is, so a range missing from the image's own file is also looked for
in the SIBLINGS most recently used files of other images under the same model (the same
library code in another build, or the same program built for another board), read on the
first miss; what is found there is kept in the image's own file.

One file per image and model, `<root>/decode/<stamp>/<image>.rows` (`pack`: a header and one
zlib stream of the index, the file's distinct rows, each range's rows as places among them, and
the watched instructions' JSON; no pickle), written whole (a temporary file renamed over it)
after a run that decoded something new, and checked whole when read. The root is
`MCUSIM_DECODE_CACHE` (`off` or `0`: no store), else `$XDG_CACHE_HOME/mcusim` or
`~/.cache/mcusim`. The stamp covers the timing and native sources and the timing table, so a
changed mcusim or core table starts afresh. A file that cannot be read is ignored and one that
cannot be written is skipped: the store only saves time, never changes a result. The oldest
files go once the store passes MAX_BYTES. Like numba's cache, the folder must be writable by its
user alone: rows read from it are trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from ..machine.native import FIELDS, KIND
from ..files import open_regular, user_cache_dir, write_whole
from ..machine.numba_cache import package_stamp
from .pattern_store import FILE_NAME as PATTERN_FILE

SIBLINGS = 3  # other images' files of the same model (the most recently used) a range is looked for in
MAX_BYTES = 256 << 20  # the whole store (files of other images and older mcusim versions included)
LEVEL = 3  # zlib's: quicker than its default (6) to write a large image's file, for a somewhat larger one
MAX_ROWS = 1 << 19      # rows (halfwords) one image keeps, 64 MB in memory: code generated at run
#                         time (firmware running away through RAM, a JIT) must not grow it without end
MAX_TEXT = 1 << 26  # bytes of a file's specials' JSON
SUFFIX = ".rows"
MAGIC, VERSION = b"mcusimDS", 4
# MAGIC, VERSION, entries, rows, distinct rows, the stream's size, the specials' JSON size
HEADER = struct.Struct("<8sIIIIII")
_ROW = np.dtype((np.void, 8 * FIELDS))  # a row as one value (its bytes), to find the distinct ones
_SOURCES = (Path(__file__).parent, Path(__file__).parents[1] / "machine" / "native")


def store_root() -> Path | None:
    """Where the store lives, or None when MCUSIM_DECODE_CACHE turns it off."""
    given = os.environ.get("MCUSIM_DECODE_CACHE", "")
    if given.lower() in ("off", "0"):
        return None
    if given:
        return Path(given)
    return user_cache_dir()


def store_for(segments, timing, instruction_cycles: int) -> "DecodeStore":
    """The store of the image loaded from `segments` under this timing model (its class and
    table; the fixed cost's cycles)."""
    model = f"{type(timing).__name__}:{json.dumps(getattr(timing, 't', None), sort_keys=True)}:{instruction_cycles}"
    return DecodeStore.open(image_digest(segments), model)


def image_digest(segments) -> str:
    """The identity of an image's loaded contents (addresses and bytes)."""
    digest = hashlib.sha256()
    for segment in segments:
        digest.update(f"{segment.vaddr:x}:{len(segment.data)}:".encode())
        digest.update(segment.data)
    return digest.hexdigest()[:32]


def _key_digest(key: tuple) -> bytes:
    code, length, previous = key
    digest = hashlib.blake2b(digest_size=16)
    digest.update(len(code).to_bytes(4, "little") + length.to_bytes(4, "little") + code)
    digest.update(b"-" if previous is None else b"+" + previous)
    return digest.digest()


class DecodeStore:
    """The rows of one image's code ranges under one timing model: get() and put() by the
    decoder's chunk key, save() at the end of a run."""

    def __init__(self, path: Path | None, siblings: list[Path] = ()):
        """`siblings`: other images' files a range missing from this one is looked for in (read
        on the first miss; what is found there is kept in this image's file too)."""
        self.path = path
        # rows (or a file's Places of them), specials, length, row count
        self._entries: dict[bytes, tuple] = {}
        self._rows = 0  # in _entries
        self._added = False
        self._siblings = list(siblings)
        self._sibling_entries: dict | None = None
        self._last_key, self._last_digest = None, b""
        if path is not None:
            entries = _read(path)
            if entries:
                self._entries = entries
                self._rows = sum(entry[3] for entry in entries.values())
                try:
                    os.utime(path)  # (recently used: pruned last)
                except OSError:
                    pass

    @classmethod
    def open(cls, image: str, model: str, root: Path | None = None) -> "DecodeStore":
        """The store for image digest `image` under timing model `model` (its name and table)."""
        root = store_root() if root is None else root
        if root is None:
            return cls(None)
        stamp = hashlib.sha256("\0".join([package_stamp(d) for d in _SOURCES] + [model]).encode()).hexdigest()[:24]
        path = root / "decode" / stamp / f"{image}{SUFFIX}"
        return cls(path, _recent_siblings(path))

    @property
    def pattern_file(self) -> Path | None:
        """Where the Cortex-M4 register patterns of this model are kept (pattern_store), if
        anywhere; the Cortex-M7's are beside it (m7_patterns.FILE_NAME)."""
        return self.path.parent / PATTERN_FILE if self.path is not None else None

    def get(self, key: tuple, siblings: bool = True):
        """(rows, specials, length), or None.
        Rows do not depend on where the code is (see the module's docstring), so another image's
        copy (the same library code, another board's build or the last build) serves as well
        (`siblings`: looked for there too)."""
        digest = self._digest(key)
        found = self._entries.get(digest)
        if found is not None and isinstance(found[0], Places):  # (a file's entry: its rows made on first use)
            found = self._entries[digest] = (found[0].rows(), *found[1:])
        if found is None and siblings and self._siblings:
            if self._sibling_entries is None:
                self._sibling_entries = _read_siblings(self._siblings)
            found = self._sibling_entries.get(digest)
            if found is not None:
                found = (found[0].rows(), *found[1:])
                self._add(digest, found)
        return None if found is None else found[:3]

    def get_many(self, keys: list[tuple]) -> list:
        """get() of each key, in this image's file alone (Decoder.preload's), with a file entry's
        rows left as its Places: the caller gathers a large image's rows from the table straight
        into its own tables (one copy of them, not three)."""
        found = [self._entries.get(_key_digest(key)) for key in keys]
        return [None if entry is None else entry[:3] for entry in found]

    def put(self, key: tuple, rows: np.ndarray, specials: list, length: int) -> None:
        self._add(self._digest(key), (rows, list(specials), length, len(rows)))

    def _digest(self, key: tuple) -> bytes:
        """_key_digest(key), made once for a get and the put that follows its miss."""
        if self._last_key is not key:
            self._last_key, self._last_digest = key, _key_digest(key)
        return self._last_digest

    def _add(self, digest: bytes, entry: tuple) -> None:
        """`entry`: (rows, or a file's Places of them; specials; length; row count)."""
        if self._rows + entry[3] > MAX_ROWS:
            return
        self._entries[digest] = entry
        self._rows += entry[3]
        self._added = True

    def __len__(self) -> int:
        return len(self._entries)

    def save(self) -> None:
        """Write the file if this run added rows; silently nothing where it cannot be written."""
        if self.path is None or not self._added:
            return
        self._added = False
        packed = pack(list(self._entries), list(self._entries.values()))
        if not write_whole(self.path, lambda out: out.write(packed)):
            return
        _prune(self.path.parents[1], keep=self.path)


class Places:
    """A file's entry before its first use: its rows' places in the file's table of distinct rows
    (a large image's rows are a few hundred distinct ones, so a file and its read are small)."""
    __slots__ = ("places", "table")

    def __init__(self, places: np.ndarray, table: np.ndarray):
        self.places = places  # (uint32, one per row)
        self.table = table    # (the file's distinct rows: int64, FIELDS columns)

    def __len__(self) -> int:
        return len(self.places)

    def rows(self) -> np.ndarray:
        return self.table[self.places]


def pack(digests: list[bytes], entries: list[tuple]) -> bytes:
    """A store file of `entries` (DecodeStore's: rows, an array of FIELDS columns or a file's
    Places; specials; length; row count): HEADER, then one zlib stream of the digests (16 bytes
    each), each entry's first row (one more than the entries), the lengths, the distinct rows
    (int64 little-endian), each row's place among them (uint32) and the specials' JSON. The
    table a file was read with is kept and grown, so writing it again after a run that added a
    few ranges looks up only their rows."""
    tables = [rows.table for rows, *_ in entries if isinstance(rows, Places)]
    kept = tables[0] if tables else np.zeros((0, FIELDS), np.int64)
    place_of = {}
    for at, row in enumerate(np.ascontiguousarray(kept, "<i8").view(_ROW).ravel().tolist()):
        place_of.setdefault(row, at)
    added = []  # (the rows new to the table, as bytes)
    places = []
    for rows, *_ in entries:
        if isinstance(rows, Places) and rows.table is kept:
            places.append(rows.places)
            continue
        rows = rows.rows() if isinstance(rows, Places) else rows
        row_places = []
        for row in np.ascontiguousarray(rows, "<i8").view(_ROW).ravel().tolist():
            at = place_of.get(row)
            if at is None:
                at = place_of[row] = len(kept) + len(added)
                added.append(row)
            row_places.append(at)
        places.append(np.array(row_places, "<u4"))
    new_rows = np.frombuffer(b"".join(added), "<i8").reshape(-1, FIELDS)
    table = np.concatenate([np.ascontiguousarray(kept, "<i8"), new_rows])
    firsts = np.zeros(len(entries) + 1, "<i8")
    firsts[1:] = np.cumsum([entry[3] for entry in entries])
    specials = json.dumps([entry[1] for entry in entries]).encode("utf-8")
    lengths = np.array([entry[2] for entry in entries], "<i8")
    all_places = np.concatenate([np.zeros(0, "<u4"), *places]).astype("<u4")
    stream = zlib.compress(b"".join([b"".join(digests), firsts.tobytes(), lengths.tobytes(), table.tobytes(),
                                     all_places.tobytes(), specials]), LEVEL)
    return HEADER.pack(MAGIC, VERSION, len(digests), int(firsts[-1]), len(table), len(stream), len(specials)) + stream


def _read(path: Path) -> dict | None:
    """A store file's entries by digest, each (Places, specials, length, rows), or None where
    the file is missing, damaged or foreign (every place in the table, every row's kind one)."""
    try:
        with open_regular(path) as file:
            data = file.read()
        magic, version, count, total, distinct, stream_size, specials_size = HEADER.unpack_from(data)
        if magic != MAGIC or version != VERSION or max(count, total) > MAX_ROWS or distinct > total \
                or specials_size > MAX_TEXT:
            return None
        sizes = [16 * count, 8 * (count + 1), 8 * count, 8 * FIELDS * distinct, 4 * total, specials_size]
        inflate = zlib.decompressobj()
        payload = inflate.decompress(data[HEADER.size:], sum(sizes) + 1)
        if len(payload) != sum(sizes) or not inflate.eof or inflate.unconsumed_tail or inflate.unused_data \
                or len(data) != HEADER.size + stream_size:
            return None
        ends = np.cumsum(sizes).tolist()
        digests = payload[: ends[0]]
        firsts = np.frombuffer(payload, "<i8", count + 1, ends[0])
        lengths = np.frombuffer(payload, "<i8", count, ends[1])
        table = np.frombuffer(payload, "<i8", FIELDS * distinct, ends[2]).reshape(distinct, FIELDS).astype(np.int64)
        places = np.frombuffer(payload, "<u4", total, ends[3])
        specials = json.loads(payload[ends[4]: ends[5]].decode("utf-8"))
        valid = (firsts[0] == 0 and firsts[-1] == total and bool(np.all(np.diff(firsts) > 0))
                 and (total == 0 or int(places.max()) < distinct)
                 and int(np.bitwise_or.reduce(table[:, KIND], initial=0)) & ~3 == 0
                 and isinstance(specials, list) and len(specials) == count
                 and all(_specials_valid(entry) for entry in specials))
    except (OSError, ValueError, struct.error, zlib.error):  # (missing, damaged or foreign: no rows)
        return None
    if not valid:
        return None
    bounds, code_lengths = firsts.tolist(), lengths.tolist()
    entries = {}
    for i in range(count):
        entries[digests[16 * i: 16 * i + 16]] = (Places(places[bounds[i]: bounds[i + 1]], table),
                                                 [tuple(s) for s in specials[i]], code_lengths[i],
                                                 bounds[i + 1] - bounds[i])
    return entries


def _recent_siblings(path: Path) -> list[Path]:
    """The most recently used files of other images beside `path` (the same model and mcusim)."""
    try:
        found = [(other.stat().st_mtime, other) for other in path.parent.glob(f"*{SUFFIX}") if other != path]
    except OSError:
        return []
    return [other for _, other in sorted(found, reverse=True)[:SIBLINGS]]


def _read_siblings(paths: list[Path]) -> dict:
    """The entries of `paths`, the first file's first, MAX_ROWS at most."""
    entries, rows = {}, 0
    for path in paths:
        found = _read(path) or {}
        size = sum(entry[3] for entry in found.values())
        if rows + size > MAX_ROWS:
            break
        for digest, entry in found.items():
            entries.setdefault(digest, entry)
        rows += size
    return entries


def _specials_valid(entry) -> bool:
    """A decode's watched instructions as the decoder notes them: [[offset, mnemonic, operands], ...]."""
    return isinstance(entry, list) and all(
        isinstance(s, list) and len(s) == 3 and isinstance(s[0], int) and s[0] >= 0
        and isinstance(s[1], str) and isinstance(s[2], str) for s in entry)


def _prune(root: Path, keep: Path) -> None:
    """Delete the least recently used files until the store holds MAX_BYTES or less."""
    files = []
    try:
        for path in [*root.glob(f"*/*{SUFFIX}"), *root.glob("*/*.npz")]:  # (.npz: older mcusim versions' files)
            if path != keep:
                info = path.stat()
                files.append((info.st_mtime, info.st_size, path))
    except OSError:
        return
    total = sum(size for _, size, _ in files) + (keep.stat().st_size if keep.exists() else 0)
    for _, size, path in sorted(files, key=lambda f: f[0]):
        if total <= MAX_BYTES:
            break
        try:
            path.unlink()
            total -= size
        except OSError:
            pass
