"""The Cortex-M7 descriptors of the encodings `mcusim prepare` met, kept on disk beside the
register patterns (timing/m7_patterns.py), so that a first run finds such an encoding by its
bytes.

An encoding new to a run costs capstone's cheap text, its register pattern and the renamed
descriptor and encoded row: over ten microseconds of Python each, about half of a first run's
decode on the Cortex-M7 (docs/performance.md, "Twenty-sixth pass"). Compiled code repeats the encodings its
compiler and its libraries use, and prepare decodes the kit's examples and the toolchain's
libraries (code_files). So prepare describes each encoding it met outside an IT block once
more, alone, as the decoder would (m7_descriptors.Descriptors.write_table), and keeps the
encodings (sorted, each its bytes as a little-endian number: below 0xE800 a 16-bit one), each
one's place among the distinct (descriptor, encoded row) pairs, the distinct descriptors and
the distinct encoded rows (m7_schedule's ROW, its reads and writes cut to KEPT_OPERANDS each).
The ITs are kept with them, and apart each encoding met inside an IT block with its condition
(in_it_key: what it is there, whatever the block's other slots), described after an IT of that
condition alone: two thirds of the encodings new to a first run of a program after prepare were
ITs and those inside their blocks (docs/performance.md, "Forty-sixth pass").
Registers are numbered per process (cortex_m7.register_number), so the file names them: each
register in an encoded row and a descriptor's deciding register is its place in the file's
list of names. Left out, as in the Cortex-M4's tables: branches to themselves (rows of their
own), what the machine watches (divides, FP instructions, SEV), encodings capstone cannot
decode, and rows with more operands than are kept. A literal load is kept without its literal
read, which the decoder reads from its bytes as it finds it (literal_loads.literal_read; kept
only where that is what the row held). An encoding the table does not hold is also found by
another of its immediate-free form (timing/immediate_forms.py). A file that cannot be read or does not check out is
ignored: the table only saves time, never changes a result (tests/unit/test_m7_table.py).
"""
from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

from ..files import open_regular, write_whole
from ..machine.native import KIND, KIND_START
from ..machine.native import m7_rows as R
from ..machine.native import m7_schedule as S
from .immediate_forms import FormIndex
from .instruction import AL  # (an IT block's slots have conditions below it: ARMv7-M ARM A7.3)
from .literal_loads import literal_read
from .m7_patterns import FLAG_BITS, MAX_CYCLES
from .thumb16_table import HALFWORDS, aligned

VERSION = 3  # (2: the index by immediate-free form kept; 3: ITs, and the encodings inside IT blocks)
FILE_NAME = "m7-encodings.bin"  # beside m7_patterns' file
MAGIC = b"mcusimE7"
# MAGIC, VERSION, names' JSON size, encodings, pairs, forms, descriptors, encoded rows, encodings inside IT blocks
HEADER = struct.Struct("<8sIIIIIIII")
KEPT_OPERANDS = R.KEPT_OPERANDS  # reads, and writes, an encoded row in the file may have
COMPACT = R.COMPACT  # an encoded row in the file: its head, 3 per read, 2 per write (int16)
MAX_ENTRIES = 1 << 16  # (read no further: not ours)
MAX_BYTES = (1 << 14) + MAX_ENTRIES * (4 + 4 + 8 + 8 + 8 * R.DESCRIPTOR + 2 * COMPACT + 12)
IN_IT = 1 << 36  # in_it_key's mark: above every encoding's number (and its condition's bits, 32 to 35)
CHECKED_ROWS = 512  # encoded rows checked at a time: their temporary arrays stay small, in memory used before

_read: dict[tuple, tuple | None] = {}  # (path, size, modified, numbering) -> read_table's, once per process


def table_file(pattern_file: Path) -> Path:
    """Where the table of the model whose register patterns are in `pattern_file` is kept."""
    return pattern_file.with_name(FILE_NAME)


def in_it_key(code: bytes, condition: int) -> int:
    """The key of encoding `code` inside an IT block, in a slot of `condition` (instruction.slot_condition)."""
    return IN_IT | condition << 32 | int.from_bytes(code, "little")


def encoding_sizes(keys: np.ndarray) -> np.ndarray:
    """The bytes of the encodings a table's keys are (a 32-bit one's first halfword is at least 0xE800)."""
    return np.where(keys & 0xFFFF >= HALFWORDS, 4, 2)


def encodings(keys: np.ndarray) -> list[bytes]:
    """The encodings a table's keys (in_it_key's too) are, as bytes."""
    return [int(key & 0xFFFFFFFF).to_bytes(int(size), "little") for key, size in zip(keys, encoding_sizes(keys))]


def write_table(path: Path, keys: list[int], descriptors: np.ndarray, encoded: np.ndarray, names: list[str]) -> None:
    """Keep encodings `keys` (in_it_key's for those inside an IT block) with their descriptor
    rows and their idents' encoded rows (this process's register numbers, `names` naming them),
    but those left out; silently nothing where it cannot be written."""
    write_arrays(path, *table_arrays(keys, descriptors, encoded, names))


def table_arrays(keys: list[int], descriptors: np.ndarray, encoded: np.ndarray, names: list[str]) -> tuple:
    """What write_arrays keeps of write_table's arguments: (the register names the file uses,
    the encodings kept, sorted (those inside an IT block last), each one's pair, the pairs, the
    distinct descriptors and the distinct encoded rows in the file's layout)."""
    keys = np.array(keys, np.int64)
    descriptors, encoded = descriptors.copy(), encoded.copy()
    sizes = encoding_sizes(keys)
    literals = np.array([literal_read(code) for code in encodings(keys)], np.int64)
    kept = ((descriptors[:, R.D_SIZE] == sizes) & (descriptors[:, R.D_LITERAL] == literals)
            & (descriptors[:, R.D_SELF_LOOP] == 0) & (descriptors[:, R.D_STATIC + KIND] == KIND_START)
            & (encoded[:, S.C_READS] <= KEPT_OPERANDS) & (encoded[:, S.C_WRITES] <= KEPT_OPERANDS))
    order = np.argsort(keys[kept])
    keys, descriptors, encoded = keys[kept][order], descriptors[kept][order], encoded[kept][order]
    descriptors[:, [R.D_IDENT, R.D_LITERAL]] = 0
    compact = np.concatenate([encoded[:, : S.C_READ + 3 * KEPT_OPERANDS],
                              encoded[:, S.C_WRITE: S.C_WRITE + 2 * KEPT_OPERANDS]], axis=1)
    registers = _register_places(compact)
    used = sorted((set(compact[registers].tolist()) | set(descriptors[:, R.D_DECIDED].tolist())) - {-1})
    place = np.full(max(used, default=0) + 2, -1, np.int64)  # (-1, none, stays -1: place's last)
    place[used] = np.arange(len(used))
    compact[registers] = place[compact[registers]]
    descriptors[:, R.D_DECIDED] = place[descriptors[:, R.D_DECIDED]]
    distinct_descriptors, descriptor_of = np.unique(descriptors, axis=0, return_inverse=True)
    distinct_encoded, encoded_of = np.unique(compact, axis=0, return_inverse=True)
    pairs, pair_of = np.unique(np.stack([descriptor_of.reshape(-1), encoded_of.reshape(-1)], axis=1), axis=0,
                               return_inverse=True)
    return ([names[number] for number in used], keys, pair_of.reshape(-1), pairs.reshape(-1, 2), distinct_descriptors,
            distinct_encoded)


def write_arrays(path: Path, names: list, keys: np.ndarray, pair_of: np.ndarray, pairs: np.ndarray,
                 descriptors: np.ndarray, encoded: np.ndarray, forms: FormIndex | None = None) -> None:
    """The file of table_arrays' arrays and of the index by immediate-free form of the keys
    outside IT blocks (`forms`, made here where not given), silently nothing where it cannot be
    written."""
    inside = np.asarray(keys, np.int64) >= IN_IT
    keys, pair_of, it_keys, it_pair_of = keys[~inside], pair_of[~inside], keys[inside], pair_of[inside]
    forms = FormIndex(keys, pair_of) if forms is None else forms
    names_json = json.dumps(names).encode("utf-8")
    header = HEADER.pack(MAGIC, VERSION, len(names_json), len(keys), len(pairs), len(forms.forms),
                         len(descriptors), len(encoded), len(it_keys)) + names_json
    header += bytes(aligned(len(header)) - len(header))
    write_whole(path, lambda out: out.write(
        header + keys.astype("<u4").tobytes() + pair_of.astype("<i4").tobytes() + pairs.astype("<i4").tobytes()
        + forms.forms.astype("<u4").tobytes() + forms.places.astype("<i4").tobytes()
        + descriptors.astype("<i8").tobytes() + encoded.astype("<i2").tobytes()
        + it_keys.astype("<u8").tobytes() + it_pair_of.astype("<i4").tobytes()))


def read_table(path: Path, register_number) -> tuple | None:
    """(the encodings, sorted, as little-endian numbers, and each one's pair, (uint32 and int32);
    the pairs, each its descriptor's and its encoded row's place; the descriptors; the encoded
    rows in the file's layout, which m7_rows makes m7_schedule's as it uses them; the
    encodings' FormIndex; the encodings inside IT blocks, sorted, as in_it_key's, and each one's
    pair (uint64 and int32)), registers numbered by `register_number(name)`; None where the file
    is missing, damaged or foreign, or names a register numbered beyond m7_schedule.REGISTERS.
    Read and checked once per process (searched by bisection)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    key = (str(path), info.st_size, info.st_mtime_ns, register_number)
    if key not in _read:
        if len(_read) >= 16:
            _read.clear()
        _read[key] = _parse(path, register_number)
    return _read[key]


def read_arrays(path: Path) -> list | None:
    """write_arrays' arguments back from the file, unchecked but for its header and size (None:
    not such a file): [names, keys, pair_of, pairs, descriptors, encoded rows, the index by form
    as (forms, places), the keys inside IT blocks, their pair_of]. They are views of one writable
    buffer the file is read into, not copies: a first run pays a page fault for each fresh page it
    writes (docs/performance.md, "Thirty-sixth pass")."""
    try:
        with open_regular(path) as file:
            data = bytearray(min(os.fstat(file.fileno()).st_size, MAX_BYTES + 1))
            if file.readinto(data) != len(data):
                return None
        magic, version, names_size, count, pairs, forms, described, encoded, inside = HEADER.unpack_from(data)
        names = json.loads(data[HEADER.size: HEADER.size + names_size].decode("utf-8"))
    except (OSError, ValueError, TypeError, struct.error):  # (missing, not a file, damaged: nothing)
        return None
    at = aligned(HEADER.size + names_size)
    size = at + 8 * count + 8 * pairs + 8 * forms + 8 * described * R.DESCRIPTOR + 2 * encoded * COMPACT + 12 * inside
    if magic != MAGIC or version != VERSION or max(count, pairs, forms, described, encoded, inside) > MAX_ENTRIES \
            or len(data) != size:
        return None
    keys = np.frombuffer(data, "<u4", count, at)
    pair_of = np.frombuffer(data, "<i4", count, at + 4 * count)
    at += 8 * count
    pair = np.frombuffer(data, "<i4", 2 * pairs, at).reshape(pairs, 2)
    at += 8 * pairs
    index = (np.frombuffer(data, "<u4", forms, at), np.frombuffer(data, "<i4", forms, at + 4 * forms))
    at += 8 * forms
    descriptors = np.frombuffer(data, "<i8", described * R.DESCRIPTOR, at).reshape(described, R.DESCRIPTOR)
    at += 8 * described * R.DESCRIPTOR
    compact = np.frombuffer(data, "<i2", encoded * COMPACT, at).reshape(encoded, COMPACT)
    at += 2 * encoded * COMPACT  # (the rest: Python's alone, so not aligned)
    return [names, keys, pair_of, pair, descriptors, compact, index, np.frombuffer(data, "<u8", inside, at),
            np.frombuffer(data, "<i4", inside, at + 8 * inside)]


def _parse(path: Path, register_number):
    arrays = read_arrays(path)
    if arrays is None:
        return None
    names, keys, pair_of, pair, descriptors, compact, (forms, places), it_keys, it_pair_of = arrays
    if type(names) is not list or len(set(map(str, names))) != len(names) or len(names) > S.REGISTERS:
        return None
    try:
        numbers = np.array([_number(name, register_number) for name in names] + [-1], np.int16)
    except ValueError:
        return None
    if not (_in_order(keys, pair_of, len(pair)) and _pairs_fit(pair, len(descriptors), len(compact))
            and _descriptors_fit(descriptors, len(names)) and _encoded_fit(compact, len(names))):
        return None
    sizes = descriptors[pair[:, 0], R.D_SIZE] if len(pair) else np.zeros(0, np.int64)  # (each pair's)
    if not np.all((sizes == 2) | (sizes == 4)) or not _sizes_fit(keys, pair_of, sizes):
        return None
    index = FormIndex.kept(forms, places, len(pair))
    if index is None or not _sizes_fit(index.forms, index.places, sizes) \
            or not _in_it_fit(it_keys, it_pair_of, sizes):
        return None
    if not np.array_equal(numbers[:-1], np.arange(len(names))):  # (a process that read the table first numbers
        _renumber(compact, numbers)                               # its registers in the file's order)
    descriptors[:, R.D_DECIDED] = numbers[descriptors[:, R.D_DECIDED]]  # (-1, none, stays -1: numbers' last)
    return keys, pair_of, pair, descriptors, compact, index, it_keys, it_pair_of


def _number(name, register_number) -> int:
    if type(name) is not str or not 0 < len(name) < 16:
        raise ValueError("not a register name")
    number = register_number(name)
    if number >= S.REGISTERS:
        raise ValueError("a register numbered beyond m7_schedule's")
    return number


def _in_order(keys: np.ndarray, pair_of: np.ndarray, pairs: int) -> bool:
    """Encodings sorted, each a whole 16- or 32-bit one, each with a pair."""
    if not len(keys):
        return True
    return bool(np.all(keys[1:] > keys[:-1])) and _whole_with_pairs(keys, pair_of, pairs)


def _in_it_fit(keys: np.ndarray, pair_of: np.ndarray, sizes: np.ndarray) -> bool:
    """Keys inside IT blocks sorted, each an in_it_key of a whole 16- or 32-bit encoding and a
    condition below AL, with a pair of its size."""
    if not len(keys):
        return True
    numbers, marks = keys & 0xFFFFFFFF, keys >> 32
    return bool(np.all(keys[1:] > keys[:-1]) and np.all((marks >= IN_IT >> 32) & (marks < (IN_IT >> 32) + AL))) \
        and _whole_with_pairs(numbers, pair_of, len(sizes)) and _sizes_fit(numbers, pair_of, sizes)


def _whole_with_pairs(numbers: np.ndarray, pair_of: np.ndarray, pairs: int) -> bool:
    """Each number a whole 16- or 32-bit encoding (below HALFWORDS, or a 32-bit one's first
    halfword at least HALFWORDS), each with one of the `pairs` pairs."""
    return bool(np.all((numbers < HALFWORDS) | (numbers & 0xFFFF >= HALFWORDS))
                and pair_of.min() >= 0 and pair_of.max() < pairs)


def _sizes_fit(numbers: np.ndarray, pair_of: np.ndarray, sizes: np.ndarray) -> bool:
    """Each encoding's (or immediate-free form's) pair's descriptor (`sizes`: each pair's
    size, 2 or 4 bytes) of the size its number says (the native walk takes an instruction's size
    from it)."""
    return np.array_equal(sizes[pair_of] == 4, numbers & 0xFFFF >= HALFWORDS)


def _pairs_fit(pair: np.ndarray, described: int, encoded: int) -> bool:
    return not len(pair) or bool(pair.min() >= 0 and pair[:, 0].max() < described and pair[:, 1].max() < encoded)


def _descriptors_fit(descriptors: np.ndarray, names: int) -> bool:
    """Rows a table keeps: no literal or self-loop, an instruction's start, flags 0 or 1, a
    deciding register among the names (or -1)."""
    d = descriptors
    return not len(d) or bool(np.all(d[:, [R.D_LITERAL, R.D_SELF_LOOP, R.D_IDENT]] == 0)
                              and np.all(d[:, R.D_STATIC + KIND] == KIND_START)
                              and np.all(d[:, [R.D_BRANCH, R.D_DIRECT]] & ~1 == 0)
                              and np.all((d[:, R.D_DECIDED] >= -1) & (d[:, R.D_DECIDED] < names)))


def _encoded_fit(compact: np.ndarray, names: int) -> bool:
    """Encoded rows m7_schedule can read: counts within KEPT_OPERANDS, registers among the names
    (an index -1: none), small cycles and the bits it has, nothing past the counts."""
    if not len(compact):
        return True
    counts = compact[:, [S.C_READS, S.C_WRITES]]
    if not np.all((counts >= 0) & (counts <= KEPT_OPERANDS)):
        return False
    lowest, highest = _bounds(names)  # (0 lies within them but in the head, whose fields are all used)
    highest = _highest_by_counts(highest)
    for at in range(0, len(compact), CHECKED_ROWS):
        rows, row_counts = compact[at: at + CHECKED_ROWS], counts[at: at + CHECKED_ROWS]
        if np.any(rows < lowest) or np.any(rows > highest[row_counts[:, 0], row_counts[:, 1]]):
            return False
    return True


def _highest_by_counts(highest: np.ndarray) -> np.ndarray:
    """`highest` for a row of each read count and write count (indices): 0 in the fields past
    them (one look-up a row checks a whole table at once)."""
    by_counts = np.repeat(highest[None, None], KEPT_OPERANDS + 1, axis=0).repeat(KEPT_OPERANDS + 1, axis=1)
    for count in range(KEPT_OPERANDS + 1):
        for field in _read_fields(by_counts[count]):
            field[:, count:] = 0
        for field in _write_fields(by_counts[:, count]):
            field[:, count:] = 0
    return by_counts


def _bounds(names: int) -> tuple[np.ndarray, np.ndarray]:
    """Each field's lowest and highest value in an encoded row of the file's layout, where used."""
    lowest = np.zeros(COMPACT, np.int16)
    lowest[S.C_INDEX], lowest[S.C_OCCUPANCY] = -1, 1
    highest = np.zeros(COMPACT, np.int16)
    highest[: S.C_READ] = FLAG_BITS - 1, MAX_CYCLES, MAX_CYCLES, names - 1, KEPT_OPERANDS, KEPT_OPERANDS
    for fields, most in ((_read_fields(highest[None]), (names - 1, S.R_EARLY | S.R_LATE | S.R_FLAGS, MAX_CYCLES)),
                         (_write_fields(highest[None]), (names - 1, S.W_FAST | S.W_FLAGS))):
        for field, value in zip(fields, most):
            field[:] = value
    return lowest, highest


def _read_fields(compact: np.ndarray) -> list[np.ndarray]:
    """Views of encoded rows of the file's layout: each read's register, R_* bits and cycles read
    late (a column per read)."""
    return [compact[:, S.C_READ + field: S.C_READ + 3 * KEPT_OPERANDS: 3] for field in range(3)]


def _write_fields(compact: np.ndarray) -> list[np.ndarray]:
    """... each write's register and W_* bits."""
    at = S.C_READ + 3 * KEPT_OPERANDS
    return [compact[:, at + field: at + 2 * KEPT_OPERANDS: 2] for field in range(2)]


def _register_places(compact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where encoded rows of the file's layout hold a register: their index (-1: none), and each
    read and write their counts use (as an index of rows, columns)."""
    places = np.zeros(compact.shape, bool)
    places[:, S.C_INDEX] = compact[:, S.C_INDEX] >= 0
    for registers, count in ((_read_fields(places)[0], S.C_READS), (_write_fields(places)[0], S.C_WRITES)):
        registers[:] = np.arange(KEPT_OPERANDS) < np.minimum(compact[:, count], KEPT_OPERANDS)[:, None]
    return np.nonzero(places)


def _renumber(compact: np.ndarray, numbers: np.ndarray) -> None:
    """Each register of (checked) encoded rows of the file's layout, a place in the file's names,
    as `numbers` numbers that name (its last: -1, for an index of none)."""
    compact[:, S.C_INDEX] = numbers[compact[:, S.C_INDEX]]
    k = np.arange(KEPT_OPERANDS)
    for registers, count in ((_read_fields(compact)[0], S.C_READS), (_write_fields(compact)[0], S.C_WRITES)):
        registers[:] = np.where(k < compact[:, count, None], numbers[registers], 0)
