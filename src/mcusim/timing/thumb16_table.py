"""Every 16-bit Thumb encoding's Cortex-M4 descriptor, kept on disk beside the register
patterns, so that a first run finds a 16-bit encoding new to it by its halfword.

A first run of new firmware meets a few thousand encodings it does not know, more than half of
them 16-bit. Each cost capstone's cheap text, its register pattern and the renamed descriptor
(timing/m4_descriptors.py): over ten microseconds of Python (docs/performance.md, "Twentieth
pass"). There are only 59,392 16-bit encodings (halfwords below 0xE800; the rest begin a 32-bit
one), so `mcusim prepare` describes every one of them once, outside an IT block, as the decoder
would (m4_descriptors.Descriptors.describe_short), and keeps the distinct descriptors and each
halfword's place among them. The
masks name registers by the bits m4_descriptors.CORE_NAMES fixes, which every Descriptors
gives them first, so the rows are used as read. A literal load's row is kept without its
literal read, which the decoder makes from the bytes (literal_loads.literal_read) and adds in a
row of its own. Left out (the decoder then describes them as before): encodings in an IT block
(their condition changes the text), a branch to itself (a row of its own), SEV (the machine
watches it) and any whose masks name another register. A file that cannot be read or does not check out is ignored: the table only
saves time, never changes a result (tests/unit/test_thumb16_table.py holds its rows to the
decoder's).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from ..files import open_regular, write_whole
from ..machine.native import KIND, KIND_START
from ..machine.native import m4_rows as R

VERSION = 2  # (2: literal loads kept, their read left to the decoder)
FILE_NAME = "m4-thumb16.bin"  # beside pattern_store's file (the decode store's own files are <image>.rows)
HALFWORDS = 0xE800  # a halfword below it is a whole 16-bit instruction (instruction.thumb_length)
MAGIC = b"mcusim16"
HEADER = struct.Struct("<8sIII")  # MAGIC, VERSION, the names' JSON size, rows; then the names, 8-aligned
MAX_BYTES = (1 << 12) + 4 * HALFWORDS + 8 * HALFWORDS * R.DESCRIPTOR  # (read no further: not ours)


def table_file(pattern_file: Path) -> Path:
    """Where the table of the model whose register patterns are in `pattern_file` is kept."""
    return pattern_file.with_name(FILE_NAME)


def read_table(path: Path, core_names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """(each halfword's row among the distinct rows or -1, the distinct rows), or None where the
    file is missing, damaged, foreign or names its registers' bits otherwise than `core_names`.
    The file is its header and the two arrays' bytes, read whole and viewed in place (a run reads
    it when it first meets a 16-bit encoding it does not know: NumPy's zip format cost a few
    milliseconds here)."""
    try:
        with open_regular(path) as file:
            data = file.read(MAX_BYTES + 1)
        magic, version, names_size, count = HEADER.unpack_from(data)
        names = tuple(json.loads(data[HEADER.size: HEADER.size + names_size].decode("utf-8")))
    except (OSError, ValueError, TypeError, struct.error):  # (missing, not a file, damaged: nothing)
        return None
    at = aligned(HEADER.size + names_size)
    if magic != MAGIC or version != VERSION or names != core_names or count > HALFWORDS \
            or len(data) != at + 4 * HALFWORDS + 8 * count * R.DESCRIPTOR:
        return None
    index = np.frombuffer(data, "<i4", HALFWORDS, at)
    rows = np.frombuffer(data, "<i8", count * R.DESCRIPTOR, at + 4 * HALFWORDS).reshape(count, R.DESCRIPTOR)
    if index.min() < -1 or index.max() >= count or not rows_fit(rows, len(names)):
        return None
    return index, rows


def write_table(path: Path, index: np.ndarray, rows: np.ndarray, core_names: tuple[str, ...]) -> None:
    """Keep the table (silently nothing where it cannot be written)."""
    names = json.dumps(list(core_names)).encode("utf-8")
    header = HEADER.pack(MAGIC, VERSION, len(names), len(rows)) + names
    header += bytes(aligned(len(header)) - len(header))
    write_whole(path, lambda out: out.write(header + index.astype("<i4").tobytes() + rows.astype("<i8").tobytes()))


def aligned(size: int) -> int:
    return (size + 7) & ~7


def rows_fit(rows: np.ndarray, names: int, size: int = 2) -> bool:
    """Rows a 16-bit encoding (or one of `size` bytes) outside an IT block can have: that size;
    no literal, self-loop or FP register bits; core register bits among the `names` fixed ones;
    a decodable row starting an instruction (an undecodable one is all zeros but its size)."""
    if not len(rows):
        return True
    decodable = rows[:, R.D_DECODABLE] == 1
    core = rows[:, R.D_ADDRESS] | rows[:, R.D_WRITES]
    undecodable = rows[~decodable]
    return bool(np.all(rows[:, R.D_SIZE] == size) and np.all(rows[:, [R.D_LITERAL, R.D_SELF_LOOP, R.D_FP_READS,
                                                                    R.D_FP_WRITES]] == 0)
                and np.all((core >= 0) & (core >> names == 0))
                and np.all(rows[decodable, R.D_STATIC + KIND] == KIND_START)
                and np.all(rows[~decodable, R.D_DECODABLE] == 0)
                and np.all(np.delete(undecodable, R.D_SIZE, axis=1) == 0))
