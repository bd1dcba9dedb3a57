"""ETM-style branch trace (`--branch-trace`): taken branches, exception entries and returns
with their cycle, captured by the native block hook into a bounded table (native._trace), and
written to `branches.bin`. With the ELF, the records give back every instruction that ran
(`instructions()`), the way an ETM decoder rebuilds program flow from branch packets.

File layout, little-endian: a 64-byte header (MAGIC, format version u32, a reserved u32, record
count u64, records dropped u64, clock in Hz u64, then the first 24 bytes of the ELF's SHA-256),
then 16-byte records: u64 (kind << 56 | exception number << 48 | cycle), u32 source, u32 target.

  kind        source                          target
  sync        where the window opened         same
  branch      the taken branch instruction    where it went
  exception   the preempted instruction       the handler (number: the exception)
  return      the instruction that returned   where the preempted code resumed (number: the exception;
                                              0xFFFFFFFF: tail-chained, the next exception record follows)
  loop        a `b .` skipped while idle      how many turns it ran
  end         where the window closed         same
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..machine import native as N

MAGIC = b"MCUSIMBT"
VERSION = 1
HEADER = np.dtype([("magic", "S8"), ("version", "<u4"), ("reserved", "<u4"), ("count", "<u8"), ("dropped", "<u8"),
                   ("clock_hz", "<u8"), ("sha256", "S24")])
RECORD = np.dtype([("word", "<u8"), ("source", "<u4"), ("target", "<u4")])
KINDS = {N.TRACE_SYNC: "sync", N.TRACE_BRANCH: "branch", N.TRACE_EXCEPTION: "exception",
         N.TRACE_RETURN: "return", N.TRACE_LOOP: "loop", N.TRACE_END: "end"}
CYCLE_MASK = (1 << 48) - 1
DEFAULT_LIMIT = 1_000_000  # records (16 MB in the file; memory grows with the records kept)


class MissingSymbol(ValueError):
    """A trace window names a symbol the firmware does not have."""


@dataclass(frozen=True)
class TraceWindow:
    """What to trace: from a function's entry and/or a cycle, to another function's entry
    and/or a cycle, at most `limit` records (the rest are counted as dropped)."""
    limit: int = DEFAULT_LIMIT
    from_symbol: str | None = None
    to_symbol: str | None = None
    from_cycle: int = 0
    to_cycle: int | None = None


class BranchTraceCapture:
    """Sets up the native capture: a table of at most CHUNK records and the window. The hook
    stops emulation when the table is nearly full (native.trace_record) and `make_room()` moves
    the records out, so memory grows with the records kept, up to `limit`, never by the limit."""

    CHUNK = 1 << 16  # records in the native table (1.5 MB)

    def __init__(self, state, limit: int = DEFAULT_LIMIT, from_address: int | None = None,
                 to_address: int | None = None, from_cycle: int = 0, to_cycle: int | None = None):
        if limit < 1:
            raise ValueError("the branch trace needs room for at least one record")
        self.state = state
        self.limit = limit
        self.kept: list[np.ndarray] = []  # the records moved out of the table (RECORD arrays)
        self.moved = 0
        capacity = min(limit, self.CHUNK)
        self.table = state.reserve(N.TRACE_RECORD * capacity)
        state[N.TRACE_TABLE] = self.table
        state[N.TRACE_CAPACITY] = capacity
        state[N.TRACE_FROM] = -1 if from_address is None else from_address & ~1
        state[N.TRACE_TO] = -1 if to_address is None else to_address & ~1
        state[N.TRACE_FROM_CYCLE] = from_cycle
        state[N.TRACE_TO_CYCLE] = (1 << 62) if to_cycle is None else to_cycle
        state[N.TRACE_HELD] = -1

    def make_room(self) -> None:
        """Move the table's records out when it is nearly full and the limit allows more."""
        st = self.state
        count, capacity = st[N.TRACE_COUNT], st[N.TRACE_CAPACITY]
        if count < capacity - N.TRACE_HEADROOM - 1 or self.moved + capacity >= self.limit:
            return
        self.kept.append(self._table_records())
        self.moved += count
        st[N.TRACE_COUNT] = 0
        st[N.TRACE_CAPACITY] = min(capacity, self.limit - self.moved)

    def record(self, kind: int, source: int, target: int, number: int = 0) -> None:
        """A record from Python (exceptions, skipped loops, the end of the run)."""
        self.make_room()
        N.trace_record(self.state.buffer, np.int64(kind), np.int64(source & 0xFFFFFFFF | number << 32),
                       np.int64(target & 0xFFFFFFFF))

    @property
    def recording(self) -> bool:
        return self.state[N.TRACE_STATE] == 1

    @property
    def dropped(self) -> int:
        return int(self.state[N.TRACE_DROPPED])

    def records(self) -> np.ndarray:
        """The records so far, in the file's layout."""
        return np.concatenate([*self.kept, self._table_records()])

    def _table_records(self) -> np.ndarray:
        count = int(self.state[N.TRACE_COUNT])
        raw = self.state.buffer[self.table: self.table + N.TRACE_RECORD * count].reshape(count, N.TRACE_RECORD)
        out = np.zeros(count, RECORD)
        kind, cycle = raw[:, 0] >> 56, raw[:, 0] & CYCLE_MASK
        number = (raw[:, 1] >> 32) & 0xFF
        out["word"] = (kind << 56 | number << 48 | cycle).astype(np.uint64)
        out["source"] = (raw[:, 1] & 0xFFFFFFFF).astype(np.uint32)
        out["target"] = (raw[:, 2] & 0xFFFFFFFF).astype(np.uint32)
        return out


@dataclass
class BranchTrace:
    records: np.ndarray  # RECORD
    dropped: int
    clock_hz: int
    sha256_prefix: bytes

    @property
    def kinds(self) -> np.ndarray:
        return (self.records["word"] >> np.uint64(56)).astype(np.int64)

    @property
    def cycles(self) -> np.ndarray:
        return (self.records["word"] & np.uint64(CYCLE_MASK)).astype(np.int64)

    @property
    def numbers(self) -> np.ndarray:
        return ((self.records["word"] >> np.uint64(48)) & np.uint64(0xFF)).astype(np.int64)

    def events(self) -> list[dict]:
        """The records as dicts: cycle, kind, source, target (and exception for exceptions)."""
        out = []
        for kind, cycle, number, source, target in zip(self.kinds, self.cycles, self.numbers,
                                                       self.records["source"], self.records["target"]):
            event = {"cycle": int(cycle), "kind": KINDS.get(int(kind), str(kind)), "source": int(source),
                     "target": int(target)}
            if kind in (N.TRACE_EXCEPTION, N.TRACE_RETURN):
                event["exception"] = int(number)
            out.append(event)
        return out


def write(path: Path, records: np.ndarray, dropped: int, clock_hz: int, sha256: str) -> None:
    header = np.zeros(1, HEADER)
    header[0] = (MAGIC, VERSION, 0, len(records), dropped, clock_hz, bytes.fromhex(sha256)[:24])
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(records.tobytes())


def read(path: str | Path) -> BranchTrace:
    """Load a `branches.bin`; ValueError (BundleError) when it is not one. Only a regular file
    is read (bundle.open_regular), and only once its size is the header's record count times
    the record size: a FIFO, /dev/zero or a huge file is refused before its records are read."""
    from .bundle import open_regular

    with open_regular(path, "a branch trace") as f:
        head = f.read(HEADER.itemsize)
        if len(head) < HEADER.itemsize or head[:8] != MAGIC:
            raise ValueError(f"{path}: not an mcusim branch trace (no {MAGIC.decode()} header)")
        header = np.frombuffer(head, HEADER)[0]
        if header["version"] != VERSION:
            raise ValueError(f"{path}: branch trace format {header['version']}, this mcusim reads {VERSION}")
        count = int(header["count"])
        size = os.fstat(f.fileno()).st_size - HEADER.itemsize
        if size < count * RECORD.itemsize:
            raise ValueError(f"{path}: truncated: {count:,} records announced, {size // RECORD.itemsize:,} present")
        if size > count * RECORD.itemsize:
            raise ValueError(f"{path}: {count:,} records announced, but {size:,} bytes follow the header, "
                             f"not {count * RECORD.itemsize:,}")
        body = f.read(size)
    if len(body) != size:
        raise ValueError(f"{path}: truncated while it was read")
    return BranchTrace(np.frombuffer(body, RECORD).copy(), int(header["dropped"]), int(header["clock_hz"]),
                       bytes(header["sha256"]).ljust(24, b"\0"))  # (numpy drops trailing NUL bytes)


def _code_reader(image, aliases=()):
    """Halfword reader over the ELF's loaded segments (code as linked, at its run address), and
    through `aliases`: (base, size, where it reads) of memory seen at two addresses."""
    segments = [(s.vaddr, s.data) for s in image.segments if s.data]

    def halfword(address: int) -> int:
        for base, size, target in aliases:
            if base <= address < base + size:
                address = target + address - base
                break
        for base, data in segments:
            if base <= address and address + 2 <= base + len(data):
                return int.from_bytes(data[address - base: address - base + 2], "little")
        raise ValueError(f"the trace leads to 0x{address:08x}, which holds no code in the ELF")

    return halfword


def disassembler(image, aliases=()):
    """address -> the Thumb instruction there as text (capstone's library, over the ELF's code as
    _code_reader reads it)."""
    from ..timing.lazy_capstone import thumb

    engine = thumb()
    halfword = _code_reader(image, aliases)

    def text(address: int) -> str:
        code = b""
        for offset in (0, 2):  # (at the end of the code the second halfword may not be there)
            try:
                code += halfword(address + offset).to_bytes(2, "little")
            except ValueError:
                break
        found = next(engine.disasm_lite(code, address, 1), None)
        return "(not code)" if found is None else f"{found[2]} {found[3]}".strip()
    return text


def board_aliases(board) -> list[tuple[int, int, int]]:
    """A board's memory aliases (e.g. the STM32F7's flash through ITCM at 0x00200000)."""
    return [(r.base, r.size_bytes, board.storage_region(r).base) for r in board.memory if r.alias_of]


def instructions(trace: BranchTrace, image, aliases=(), cycles: bool = False):
    """Every instruction address that ran in the trace's window, in order, rebuilt from the
    records and the ELF's code (`aliases`: board_aliases()): straight-line code between
    records, the branch or preemption point at each. Code that changes at run time is not
    followed. With `cycles`, (address, cycle) pairs: the cycle of the record an instruction
    makes (a taken branch, the last turn of a loop), None for the straight-line code between."""
    halfword = _code_reader(image, aliases)

    def size(address: int) -> int:
        return 4 if (halfword(address) >> 11) in (0b11101, 0b11110, 0b11111) else 2

    def ran(address: int, cycle=None):
        return (address, cycle) if cycles else address

    pc = None
    for kind, cycle, source, target in zip(trace.kinds, trace.cycles, trace.records["source"], trace.records["target"]):
        source, target, cycle = int(source), int(target), int(cycle)
        if kind == N.TRACE_SYNC:
            pc = target
            continue
        if pc is None:
            continue
        # straight on up to the record's source: up to and including a branch, up to but not
        # including a preempted instruction or the end
        # (a fault's preempted instruction is its faulting one, which did not complete)
        stop_before = kind in (N.TRACE_EXCEPTION, N.TRACE_END)
        if not (kind == N.TRACE_EXCEPTION and source == 0xFFFFFFFF):  # (tail-chained: no code between)
            steps = 0
            while pc != source:
                yield ran(pc)
                pc += size(pc)
                steps += 1
                if steps > 1 << 24:
                    raise ValueError(f"the trace does not reach 0x{source:08x} from straight-line code")
            if not stop_before:
                yield ran(pc, None if kind == N.TRACE_LOOP else cycle)
        if kind == N.TRACE_LOOP:
            for turn in range(target - 1):
                yield ran(source, cycle if turn == target - 2 else None)
            pc = source  # still there: what follows leaves from the loop
        elif kind == N.TRACE_END:
            return
        else:
            pc = target
