"""The Cortex-M4 descriptors of the 32-bit encodings `mcusim prepare` met, kept on disk beside
the table of every 16-bit one (timing/thumb16_table.py), so that a first run finds such an
encoding by its bytes.

A 32-bit encoding new to a run costs capstone's cheap text, its register pattern and the
renamed descriptor: over ten microseconds of Python (docs/performance.md, "Twenty-fourth
pass"). There are far too many 32-bit encodings to describe them all, but compiled code repeats
the ones its compiler and its libraries use, and prepare decodes the kit's examples and the
toolchain's libraries (code_files). So prepare describes each 32-bit encoding it met once more,
alone and outside an IT block, as the decoder would (m4_descriptors.Descriptors.describe_wide),
and keeps the encodings (sorted), each one's place among the distinct descriptors, and those
descriptors. A literal load is kept as in the 16-bit table, without its literal read. An
encoding the table does not hold is also found by another of its immediate-free form
(timing/immediate_forms.py: MOVW, ADD.W with another constant, BL with another offset). Left
out as in the 16-bit table: branches to themselves (rows of their own), what the machine
watches (divides, FP instructions), and any whose masks name another register than
m4_descriptors.CORE_NAMES. A file that cannot be read or does not check out is ignored: the
table only saves time, never changes a result (tests/unit/test_thumb32_table.py).
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from ..files import open_regular, write_whole
from ..machine.native import m4_rows as R
from .immediate_forms import FormIndex
from .thumb16_table import HALFWORDS, aligned, rows_fit

VERSION = 3  # (2: literal loads kept, their read left to the decoder; 3: the index by immediate-free form kept)
FILE_NAME = "m4-thumb32.bin"  # beside thumb16_table's file
MAGIC = b"mcusim32"
# MAGIC, VERSION, the names' JSON size, encodings, forms, rows; then the names, 8-aligned
HEADER = struct.Struct("<8sIIIII")
MAX_ENCODINGS = 1 << 16  # (read no further: not ours)
MAX_BYTES = (1 << 12) + MAX_ENCODINGS * (8 + 8 + 8 * R.DESCRIPTOR)


def table_file(pattern_file: Path) -> Path:
    """Where the table of the model whose register patterns are in `pattern_file` is kept."""
    return pattern_file.with_name(FILE_NAME)


def read_table(path: Path, core_names: tuple[str, ...]) -> tuple | None:
    """(the encodings, sorted, each its 4 bytes as a little-endian number; each one's row among
    the distinct rows; the distinct rows), int64 arrays, and the encodings' FormIndex; or None
    where the file is missing, damaged, foreign or names its registers' bits otherwise than
    `core_names`. Searched by bisection (no dictionary to build when the file is read)."""
    try:
        with open_regular(path) as file:
            data = file.read(MAX_BYTES + 1)
        magic, version, names_size, count, forms, distinct = HEADER.unpack_from(data)
        names = tuple(json.loads(data[HEADER.size: HEADER.size + names_size].decode("utf-8")))
    except (OSError, ValueError, TypeError, struct.error):  # (missing, not a file, damaged: nothing)
        return None
    at = aligned(HEADER.size + names_size)
    if magic != MAGIC or version != VERSION or names != core_names or max(count, forms, distinct) > MAX_ENCODINGS \
            or len(data) != at + 8 * count + 8 * forms + 8 * distinct * R.DESCRIPTOR:
        return None
    keys = np.frombuffer(data, "<u4", count, at)
    index = np.frombuffer(data, "<i4", count, at + 4 * count)
    at += 8 * count
    by_form = FormIndex.kept(np.frombuffer(data, "<u4", forms, at), np.frombuffer(data, "<i4", forms, at + 4 * forms),
                             distinct)
    rows = np.frombuffer(data, "<i8", distinct * R.DESCRIPTOR, at + 8 * forms).reshape(distinct, R.DESCRIPTOR)
    if count and (np.any(np.diff(keys.astype(np.int64)) <= 0) or np.any((keys & 0xFFFF) < HALFWORDS)
                  or index.min() < 0 or index.max() >= distinct) or not rows_fit(rows, len(names), size=4) \
            or by_form is None or np.any((by_form.forms & 0xFFFF) < HALFWORDS):  # (its rows are 32-bit ones')
        return None
    return keys.astype(np.int64), index.astype(np.int64), rows, by_form


def write_table(path: Path, keys: np.ndarray, index: np.ndarray, rows: np.ndarray,
                core_names: tuple[str, ...], forms: FormIndex | None = None) -> None:
    """Keep the table and the keys' index by immediate-free form (`forms`, made here where not
    given), silently nothing where it cannot be written; `keys` sorted."""
    forms = FormIndex(keys, index) if forms is None else forms
    names = json.dumps(list(core_names)).encode("utf-8")
    header = HEADER.pack(MAGIC, VERSION, len(names), len(keys), len(forms.forms), len(rows)) + names
    header += bytes(aligned(len(header)) - len(header))
    write_whole(path, lambda out: out.write(header + keys.astype("<u4").tobytes() + index.astype("<i4").tobytes()
                                            + forms.forms.astype("<u4").tobytes() + forms.places.astype("<i4").tobytes()
                                            + rows.astype("<i8").tobytes()))
