"""The Cortex-M4 register patterns' descriptors kept on disk from one run to the next, whatever
the image.

Describing an encoding whose register pattern is new (timing/register_pattern.py) costs
capstone's detail and the Python model's analysis, over a hundred microseconds; one met before
is renamed in a few. Compiled code of any program uses mostly the same patterns (after
large-startup's, the kit's other programs and a public CoreMark build bring a few dozen to a
few hundred new ones each), so the patterns one run describes serve the first run of any
other image. They depend only on the Cortex-M4 model and its timing table, so they live beside
the decode store's files of that model (decode_store.DecodeStore.pattern_file: the folder's
stamp covers the timing sources and table), in one file (NumPy's, read without pickle), read
when a run first meets an encoding it does not know and written whole (merged with what
another run wrote meanwhile: files.write_whole) after a run that described new ones. A file that cannot be read
or does not check out is ignored and one that cannot be written is skipped: the file only saves
time, never changes a result. As for the decode store, the folder must be writable by its
user alone: what is read from it is trusted once checked for form.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..files import write_whole
from ..machine.native import KIND, KIND_START
from ..machine.native import m4_rows as R
from .register_pattern import RENAMEABLE

VERSION = 1
MAX_PATTERNS = 1 << 15  # kept in the file (far more than compiled code uses: a few thousand)


def read_patterns(path: Path) -> dict[tuple, tuple]:
    """The file's patterns: pattern -> (descriptor values, may read a literal, watched, slots), as
    m4_descriptors.Descriptors keeps them; {} where the file is missing, damaged or foreign."""
    try:
        with np.load(path, allow_pickle=False) as data:
            version, rows = int(data["version"]), data["rows"]
            items = json.loads(bytes(data["patterns"]).decode("utf-8"))
        if version != VERSION or rows.dtype != np.int64 or rows.ndim != 2 or rows.shape[1] != R.DESCRIPTOR \
                or not isinstance(items, list) or len(items) != len(rows) or len(rows) > MAX_PATTERNS:
            return {}
        wide = np.array([isinstance(item, list) and isinstance(item[0], list) and isinstance(item[0][0], list)
                         for item in items], bool)
        # a row that says another size than its pattern's form could make the native rows overrun
        if len(rows) and not (np.all(rows[:, R.D_DECODABLE] == 1) and np.all(rows[:, R.D_SIZE] == np.where(wide, 4, 2))
                              and np.all(rows[:, [R.D_LITERAL, R.D_SELF_LOOP, *R.D_MASKS]] == 0)
                              and np.all(rows[:, R.D_STATIC + KIND] == KIND_START)):
            return {}
        slots = [x for item in items for field in item[3] for x in field]  # (register places and names)
        places = [x for x in slots if type(x) is int]
        names = {x for x in slots if type(x) is not int}
        if places and not 0 <= min(places) <= max(places) < 64 \
                or any(type(x) is not str or len(x) >= 16 or RENAMEABLE.fullmatch(x) for x in names):
            return {}
        return {_pattern(item[0]): (row, item[1], item[2], tuple(map(tuple, item[3]))) for item, row in zip(items, rows)
                if type(item[1]) is bool and type(item[2]) is bool and len(item[3]) == 4}
    except Exception:  # (missing, damaged or foreign: whatever NumPy, zipfile or json raise, nothing)
        return {}


def write_patterns(path: Path, patterns: dict[tuple, tuple]) -> None:
    """Write `patterns` with those already in the file (another run's), MAX_PATTERNS at most;
    silently nothing where it cannot be written."""
    merged = read_patterns(path)
    for pattern, entry in patterns.items():
        if len(merged) >= MAX_PATTERNS:
            break
        merged.setdefault(pattern, entry)
    items = [[[form, mnemonic, text], literal, watched, [list(s) for s in slots]]
             for (form, mnemonic, text), (_, literal, watched, slots) in merged.items()]
    rows = np.array([entry[0] for entry in merged.values()], np.int64).reshape(-1, R.DESCRIPTOR)
    write_whole(path, lambda out: np.savez(out, version=np.int64(VERSION), rows=rows, patterns=np.frombuffer(
        json.dumps(items, separators=(",", ":")).encode("utf-8"), np.uint8)))


def _pattern(key) -> tuple:
    """A file entry's pattern as register_pattern gives it; ValueError if it is not one."""
    form, mnemonic, text = key
    if type(form) is list and len(form) == 2 and type(form[0]) is type(form[1]) is int:
        form = tuple(form)
    if not (type(form) in (int, tuple) and type(mnemonic) is str and type(text) is str):
        raise ValueError("not a pattern")
    return form, mnemonic, text
