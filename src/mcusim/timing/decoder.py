"""Static Thumb decoder: fills a code window's per-halfword tables from the bytes in memory.

Each instruction start gets its kind and base cost; prefix sums over the window turn a
block's cost into one subtraction in the native hook.
"""
from __future__ import annotations

import numpy as np
from capstone import CS_ARCH_ARM, CS_MODE_MCLASS, CS_MODE_THUMB, Cs

from ..machine.native import (F_CYCLES, F_FP, F_INSTRUCTIONS, F_UNMASK, FIELDS, KIND, KIND_CONTINUATION,
                              KIND_SELF_LOOP, KIND_START, KIND_UNKNOWN)

_capstone = Cs(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS)


def thumb_length(halfword: int) -> int:
    """Byte length of the Thumb instruction whose first halfword is `halfword`."""
    return 4 if (halfword >> 11) in (0b11101, 0b11110, 0b11111) else 2


class Decoder:
    """Decodes code ranges into the tables of a NativeState's windows."""

    def __init__(self, state, read_memory, instruction_cycles: int = 1):
        self.state = state
        self.read_memory = read_memory  # (address, size) -> bytes
        self.instruction_cycles = instruction_cycles
        self.fp_instruction_addresses: set[int] = set()
        self.divides: dict[int, str] = {}  # address -> divisor register name (for CCR.DIV_0_TRP)
        self.on_new_divides = None
        self._costs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def ensure_window(self, address: int) -> int:
        index = self.state.window_for(address)
        if index is None:
            if self.state.full:  # start over: windows are a cache of decoded code
                self.state.clear_windows()
                self._costs.clear()
            size = self.state.WINDOW_BYTES
            index = self.state.add_window(address - address % size, size)
        return index

    def decode(self, start: int, end: int) -> None:
        """Decode [start, end) as Thumb code and refresh the prefix sums."""
        self.decode_ranges([(start, end)])

    def decode_ranges(self, ranges: list[tuple[int, int]]) -> None:
        dirty = set()
        for start, end in ranges:
            address = start
            while address < end:
                index = self.ensure_window(address)
                base, size, _ = self.state.windows[index]
                chunk_end = min(end, base + size)
                self._decode_in_window(index, address, chunk_end)
                dirty.add(index)
                address = chunk_end
        for index in dirty:
            tables = self.state.tables(index)
            costs = self._costs[index]
            for field in range(1, FIELDS):
                tables[field][1:] = np.cumsum(costs[field])

    def _decode_in_window(self, index: int, start: int, end: int) -> None:
        base, size, _ = self.state.windows[index]
        kind = self.state.tables(index)[KIND]
        h = size >> 1
        if index not in self._costs:
            self._costs[index] = [None] + [np.zeros(h, np.int64) for _ in range(1, FIELDS)]
        costs = self._costs[index]
        cycles, instructions, fp, unmask = (costs[F_CYCLES], costs[F_INSTRUCTIONS], costs[F_FP], costs[F_UNMASK])
        code = self.read_memory(start, min(end - start + 2, base + size - start))
        address = start
        while address < end:
            offset = address - start
            if offset + 2 > len(code):
                break
            first = int.from_bytes(code[offset: offset + 2], "little")
            length = thumb_length(first)
            insn = next(_capstone.disasm_lite(code[offset: offset + length], address, 1), None)
            i = (address - base) >> 1
            if insn is None or length > len(code) - offset:
                kind[i] = KIND_UNKNOWN
                address += 2
                continue
            _, _, mnemonic, operands = insn
            self_loop = mnemonic in ("b", "b.w") and operands == f"#{address:#x}"
            kind[i] = KIND_SELF_LOOP if self_loop else KIND_START
            cycles[i] = self.instruction_cycles
            instructions[i] = 1
            is_fp = mnemonic.startswith("v")
            fp[i] = 1 if is_fp else 0
            unmask[i] = 1 if _may_unmask(mnemonic, operands) else 0
            if is_fp:
                self.fp_instruction_addresses.add(address)
            if mnemonic in ("sdiv", "udiv") and address not in self.divides:
                self.divides[address] = operands.split(",")[-1].strip()
                if self.on_new_divides:
                    self.on_new_divides([address])
            if length == 4 and i + 1 < h:
                kind[i + 1] = KIND_CONTINUATION
                cycles[i + 1] = instructions[i + 1] = fp[i + 1] = unmask[i + 1] = 0
            address += length


def _may_unmask(mnemonic: str, operands: str) -> bool:
    """CPSIE, or MSR to a priority mask: a pending interrupt may become takeable after it."""
    if mnemonic.startswith("cpsie"):
        return True
    return mnemonic.startswith("msr") and operands.split(",")[0].strip() in (
        "primask", "basepri", "basepri_max", "faultmask")


def code_ranges(segments, mapping_symbols) -> list[tuple[int, int]]:
    """Thumb code ranges of the executable segments, split at ARM mapping symbols ($t/$d)."""
    ranges = []
    for segment in segments:
        if not segment.executable or not segment.data or segment.vaddr != segment.paddr:
            continue
        start, end = segment.vaddr, segment.vaddr + len(segment.data)
        marks = [(a, k) for a, k in mapping_symbols if start <= a < end]
        if not marks:
            continue  # stripped image: blocks are decoded when they first execute
        for (address, kind), nxt in zip(marks, marks[1:] + [(end, "$d")]):
            if kind == "$t" and nxt[0] > address:
                ranges.append((address, nxt[0]))
    return ranges
