"""The Cortex-M7 schedule (timing/cortex_m7.py) in native code: `issue`, one instruction after
a pipeline, which m7_rows runs in sequence over a decoded range, and the block-start schedule
(CortexM7Timing.start_adjustments): for every instruction of a decoded run, the schedule of
the block's first instructions from an empty pipeline, compared with the in-sequence one. The
Python model is the reference (CortexM7Timing(memoise=False)); this follows its _issue,
_operands_ready and _pairs step by step, on instructions encoded as rows of integers
(CortexM7Timing._encode) and registers numbered per process, so the pipeline's register state
is arrays indexed by them (one int64 array: PIPELINE below)."""
from __future__ import annotations

import numpy as np

from .jit import njit

REGISTERS = 128  # register numbers a run's instructions may use (a run with more is scheduled in Python)
MAX_OPERANDS = 40  # reads, and writes, an encoded instruction may have (VLDM of 32 registers and its base)

# An encoded instruction, one int64 row: what the scheduling rules read of an _Insn.
C_FLAGS, C_LATENCY, C_OCCUPANCY, C_INDEX, C_READS, C_WRITES = range(6)
C_READ = 6                                   # reads: (register, R_* bits, cycles read late) each
C_WRITE = C_READ + 3 * MAX_OPERANDS          # writes: (register, W_* bits) each, "pc" left out
ROW = C_WRITE + 2 * MAX_OPERANDS
# An encoded row's values (registers, bits, cycles) are small: int16 keeps a row in 412 bytes, so
# the few hundred rows a first run makes touch a quarter of the memory (each fresh page costs a
# first run about 2 us: docs/performance.md, "Forty-fifth pass"). CortexM7Timing._row makes no
# row with a value beyond ROW_LIMIT (a timing table's cycles could be: Python schedules those).
ROW_TYPE = np.int16
ROW_LIMIT = 1 << 15
# C_FLAGS bits
SINGLE, FIRST_ONLY, STORE, MAC, BRANCH, FP, SHIFTER, EARLY_STAGE, EARLY_ALU, WORD_LOAD, DIVIDE, STOPS_WINDOW = \
    (1 << bit for bit in range(12))
# a read's bits: read early (_Insn.early), read late (a key of _Insn.late), the condition flags
R_EARLY, R_LATE, R_FLAGS = 1, 2, 4
# a write's bits: written back by the address unit (_Insn.fast), the condition flags
W_FAST, W_FLAGS = 1, 2

ABSENT = -(1 << 62)  # a register no instruction wrote (no entry in the Python dicts)

# A pipeline (_Pipeline), one int64 array PIPELINE long: the last issue cycle, the first cycle
# the next instruction may issue alone, how many issued in the last cycle and the encoded rows
# of the older and younger of them (-1: none), then per register: the first cycle a normal read
# sees it, the first an early read does where that is not the first + early_operand, whether a
# word load wrote it last, and the cycle it was last written in.
P_CYCLE, P_FREE, P_ISSUED, P_OLDER, P_YOUNGER = range(5)
P_READY = 5
P_EARLY = P_READY + REGISTERS
P_WORD_LOADED = P_EARLY + REGISTERS
P_WRITTEN_AT = P_WORD_LOADED + REGISTERS
PIPELINE = P_WRITTEN_AT + REGISTERS


def _empty() -> np.ndarray:
    p = np.empty(PIPELINE, np.int64)
    p[P_CYCLE], p[P_FREE], p[P_ISSUED], p[P_OLDER], p[P_YOUNGER] = 0, 1, 0, -1, -1
    p[P_READY: P_WORD_LOADED] = ABSENT
    p[P_WORD_LOADED: P_WRITTEN_AT] = 0
    p[P_WRITTEN_AT:] = ABSENT
    p.flags.writeable = False
    return p


# An empty pipeline (_Pipeline()), made in NumPy: Python copies it without loading a native
# function (a few hundred microseconds a process), and native code copies it (frozen in).
EMPTY_PIPELINE = _empty()


@njit
def empty_pipeline(p):
    """Make `p` an empty pipeline (_Pipeline())."""
    p[:] = EMPTY_PIPELINE


@njit
def _operands_ready(encoded, row, p, early_operand, word_load_no_bypass):
    """First cycle the operands of instruction `row` allow it to issue (_operands_ready)."""
    flags = encoded[row, C_FLAGS]
    index = encoded[row, C_INDEX]
    earliest = 0
    for k in range(encoded[row, C_READS]):
        register = encoded[row, C_READ + 3 * k]
        bits = encoded[row, C_READ + 3 * k + 1]
        at = p[P_READY + register]
        if at == ABSENT:
            continue
        if bits & R_EARLY:
            at = p[P_EARLY + register] if p[P_EARLY + register] != ABSENT else at + early_operand
        if p[P_WORD_LOADED + register] != 0 and (register == index or flags & (MAC | DIVIDE | EARLY_STAGE) != 0
                                                 and bits & (R_EARLY | R_LATE) == 0):
            at += word_load_no_bypass
        at -= encoded[row, C_READ + 3 * k + 2]
        earliest = max(earliest, at)
    return earliest


@njit
def _pairs(encoded, row, p):
    """Can instruction `row` issue in the cycle of the one issued alone last (_pairs)?"""
    flags = encoded[row, C_FLAGS]
    if p[P_ISSUED] != 1 or flags & (SINGLE | FIRST_ONLY):
        return False
    older = p[P_OLDER]
    held = encoded[older, C_FLAGS]
    if held & SINGLE or p[P_FREE] > p[P_CYCLE] + 1 or encoded[older, C_OCCUPANCY] > 1:
        return False
    if held & flags & (STORE | MAC | BRANCH | FP | SHIFTER):
        return False
    return not (held & MAC and flags & STORE or held & STORE and flags & MAC)


@njit
def issue(encoded, row, p, early_operand, base_update_latency, alu_latency, word_load_no_bypass):
    """Issue instruction `row` after pipeline `p` (updated), as _issue: (cycles since the
    previous issue, of which waiting for operands)."""
    operands = _operands_ready(encoded, row, p, early_operand, word_load_no_bypass)
    cycle = p[P_CYCLE]
    if operands <= cycle and _pairs(encoded, row, p):
        p[P_ISSUED], p[P_YOUNGER] = 2, row
        when, wait, alone = cycle, 0, False
    else:
        first = max(cycle + 1, p[P_FREE])
        when = max(first, operands)
        wait = when - first
        p[P_ISSUED], p[P_OLDER], p[P_YOUNGER] = 1, row, -1
        alone = True
    p[P_CYCLE] = when
    p[P_FREE] = max(p[P_FREE], when + encoded[row, C_OCCUPANCY])
    # the early ALU: only as the older instruction, its sources there early
    early_alu = encoded[row, C_FLAGS] & EARLY_ALU != 0 and alone
    for k in range(encoded[row, C_READS]):
        if not early_alu:
            break
        register = encoded[row, C_READ + 3 * k]
        if p[P_READY + register] == ABSENT or encoded[row, C_READ + 3 * k + 1] & R_FLAGS:
            continue
        seen = p[P_EARLY + register] if p[P_EARLY + register] != ABSENT else p[P_READY + register] + early_operand
        early_alu = seen <= when
    word_load = encoded[row, C_FLAGS] & WORD_LOAD != 0
    for k in range(encoded[row, C_WRITES]):
        register = encoded[row, C_WRITE + 2 * k]
        bits = encoded[row, C_WRITE + 2 * k + 1]
        p[P_WRITTEN_AT + register] = when
        p[P_EARLY + register] = ABSENT
        if bits & W_FAST:
            p[P_READY + register] = when + base_update_latency
            p[P_EARLY + register] = when + base_update_latency + early_operand
        elif early_alu and not bits & W_FLAGS:
            p[P_READY + register] = when
            p[P_EARLY + register] = when + alu_latency
        else:
            p[P_READY + register] = when + encoded[row, C_LATENCY]
        p[P_WORD_LOADED + register] = 1 if word_load and not bits & W_FAST else 0
    return when - cycle, wait


@njit
def fresh_sums(encoded, idents, start, stop, p, early_operand, base_update_latency, alu_latency,
               word_load_no_bypass):
    """(cycles, waiting cycles, dual issues) of the instructions `encoded` rows idents[start:
    stop] scheduled from an empty pipeline (CortexM7Timing._fresh_sums), in `p`."""
    empty_pipeline(p)
    return _sums(encoded, idents, start, stop, p, early_operand, base_update_latency, alu_latency, word_load_no_bypass)


@njit
def _sums(encoded, idents, start, stop, p, early_operand, base_update_latency, alu_latency, word_load_no_bypass):
    """fresh_sums' schedule, after pipeline `p` as it is."""
    cycles = waited = pairs = 0
    for i in range(start, stop):
        delta, wait = issue(encoded, idents[i], p, early_operand, base_update_latency, alu_latency, word_load_no_bypass)
        cycles += delta
        waited += wait
        pairs += delta == 0
    return cycles, waited, pairs


@njit
def _empty_again(encoded, idents, start, stop, p):
    """Make `p` empty again after idents[start: stop] were issued from an empty pipeline:
    `issue` changes the head and the registers an instruction writes alone, so only they are
    put back (copying all PIPELINE slots from the empty pipeline was half of start_adjustments'
    time: docs/performance.md, "Forty-fifth pass")."""
    p[:P_READY] = EMPTY_PIPELINE[:P_READY]
    for i in range(start, stop):
        row = idents[i]
        for k in range(encoded[row, C_WRITES]):
            register = encoded[row, C_WRITE + 2 * k]
            for slot in (P_READY, P_EARLY, P_WORD_LOADED, P_WRITTEN_AT):
                p[slot + register] = EMPTY_PIPELINE[slot + register]


@njit
def start_adjustments(encoded, idents, sequence, adjustments, early_operand, base_update_latency, alu_latency,
                      word_load_no_bypass, start_window):
    """Into `adjustments` (one row (cycles, interlock taken back, dual issues lost) per
    instruction): CortexM7Timing.start_adjustments for the run whose instructions are the
    `encoded` rows `idents`, costed in sequence as `sequence` ((cycles, waited) each)."""
    p = np.empty(PIPELINE, np.int64)
    empty_pipeline(p)
    count = idents.shape[0]
    for start in range(count):
        stop = start
        while True:  # the window: up to `start_window` instructions, ending at a branch
            flags = encoded[idents[stop], C_FLAGS]
            stop += 1
            if stop - start == start_window or stop == count or flags & (BRANCH | STOPS_WINDOW):
                break
        cycles, waited, pairs = _sums(encoded, idents, start, stop, p, early_operand, base_update_latency,
                                      alu_latency, word_load_no_bypass)  # (fresh_sums: `p` is kept empty)
        _empty_again(encoded, idents, start, stop, p)
        sequence_cycles = sequence_waited = sequence_pairs = 0
        for i in range(start, stop):
            sequence_cycles += sequence[i, 0]
            sequence_waited += sequence[i, 1]
            sequence_pairs += sequence[i, 0] == 0
        adjustments[start, 0] = cycles - sequence_cycles
        adjustments[start, 1] = min(15, max(0, sequence_waited - waited))
        adjustments[start, 2] = max(-8, min(7, sequence_pairs - pairs))
