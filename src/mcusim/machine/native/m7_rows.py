"""The Cortex-M7 decode rows of a code range in one native call: each instruction scheduled in
sequence after the pipeline the range starts in (m7_schedule.issue, as CortexM7Timing.cost
does), its row made from its descriptor (timing/m7_descriptors.py: the static row and what the
cost adds to it) and the schedule, and every block-start correction (m7_schedule.start_adjustments).
Python then describes each encoding once (renamed, or from capstone's detail), and schedules nothing.
start_prefix schedules a block's first instructions up to a mid-block stop from the idents
m7_rows kept of the range (Decoder.start_prefix).
"""
from __future__ import annotations

import numpy as np

from .encoding import KIND_CONTINUATION, KIND_SELF_LOOP, KIND_START, LANE
from .jit import njit
from .layout import (F_COUNTS, F_CYCLES, F_INSTRUCTIONS, F_LITERAL, F_REFILL, F_STALLS, F_START_ADJUST,
                     F_START_FLAGS, FIELDS, KIND)
from .m7_schedule import (ABSENT, C_OCCUPANCY, C_READ, C_WRITE, P_CYCLE, P_WRITTEN_AT, PIPELINE, fresh_sums, issue,
                          start_adjustments)

# A descriptor's fields (one int64 row per encoding described: a shape, or a renamed encoding, and
# each literal read and branch to itself of one).
D_IDENT = 0      # its m7_schedule encoded row (CortexM7Timing's ident)
D_SIZE = 1       # bytes
D_BRANCH = 2     # a branch: a wrong prediction's cost goes into F_REFILL
D_DIRECT = 3     # a branch to an address in the instruction (resolved early when decided early enough)
D_DECIDED = 4    # the register whose write decides a conditional branch (m7_schedule's number), -1: none
D_REFILL = 5     # F_REFILL's bits besides the static row's and the wrong prediction's cycles
D_LITERAL = 6    # F_LITERAL, 0: none
D_SELF_LOOP = 7  # a B to itself
D_STATIC = 8     # .. D_STATIC + FIELDS: the static row (decoder._static_row)
DESCRIPTOR = D_STATIC + FIELDS
UNDECODABLE_2, UNDECODABLE_4 = -1, -2  # an instruction capstone cannot decode, of 2 or 4 bytes
# m7_rows' `starts`, one per halfword: the ident of the instruction starting there, or one of these
NO_START = -1   # no instruction starts here (a 32-bit one's second halfword)
NOT_NATIVE = -2  # an undecodable one (its block-start schedule is Python's)
# Descriptor rows from here on are m7_table's (descriptor, encoded row) pairs, read in the file's
# arrays (m7_rows' `pairs` and `described`), not copied into a Descriptors' table: 6,000 rows of
# 200 bytes, of which a run uses a few hundred. Above any row a table holds.
PAIR_ROWS = 1 << 32

# The timing table's values the rows read (CortexM7Timing.constants gives them in this order).
K_EARLY_OPERAND, K_BASE_UPDATE_LATENCY, K_ALU_LATENCY, K_WORD_LOAD_NO_BYPASS, K_START_WINDOW = range(5)
K_EARLY_RESOLVE = 5      # branch_early_resolve_cycles
K_MISPREDICT_EARLY = 6   # a wrong prediction resolved early (at most REFILL_CYCLES_MASK)
K_MISPREDICT = 7         # ... and late
K_INSTRUCTION_CYCLES = 8  # an undecodable instruction's cost
CONSTANTS = 9

# The encoded rows of timing/m7_table's file: m7_schedule's head and at most KEPT_OPERANDS reads
# (3 fields each), then as many writes (2 each), int16; expand_row makes one an m7_schedule ROW.
KEPT_OPERANDS = 16
COMPACT = C_READ + 5 * KEPT_OPERANDS


@njit
def expand_row(encoded, ident, compact, place):
    """The encoded row `ident` made from row `place` of m7_table's `compact` rows."""
    head = C_READ + 3 * KEPT_OPERANDS
    for field in range(head):
        encoded[ident, field] = compact[place, field]
    for field in range(2 * KEPT_OPERANDS):
        encoded[ident, C_WRITE + field] = compact[place, head + field]


@njit
def m7_rows(descriptors, encoded, instructions, pipeline, constants, rows, starts, compact, first_compact, pairs,
            described):
    """Fill `rows` (zeros, one per halfword, FIELDS each) with the decode rows of a range whose
    instructions are the descriptors at `instructions` (or UNDECODABLE_2/_4), scheduled after
    `pipeline` (m7_schedule's array, left as the last one leaves it), as Decoder._decode_fresh and
    CortexM7Timing make them, and `starts` (NO_START, one per halfword) with each instruction's
    ident (NOT_NATIVE where undecodable), for start_prefix. The idents from `first_compact` on are
    m7_table's `compact` rows in order, each made an encoded row as an instruction first uses it
    (until then its row is zeros: an occupancy of 0, which no encoded row has): most of the table
    goes unused by a run, and expanding it whole cost a process 2 to 20 ms of memory writes.
    Likewise a descriptor from PAIR_ROWS on is m7_table's pair PAIR_ROWS + its place in `pairs`,
    read where the file has it: its descriptor among `described` and its compact row's ident."""
    early_operand, base_update_latency = constants[K_EARLY_OPERAND], constants[K_BASE_UPDATE_LATENCY]
    alu_latency, word_load_no_bypass = constants[K_ALU_LATENCY], constants[K_WORD_LOAD_NO_BYPASS]
    count = instructions.shape[0]
    idents = np.empty(count, np.int64)
    sequence = np.empty((count, 2), np.int64)
    places = np.empty(count, np.int64)
    run = 0
    at = 0
    for i in range(count):
        d = instructions[i]
        if d < 0:
            rows[at, KIND] = KIND_START
            rows[at, F_CYCLES] = constants[K_INSTRUCTION_CYCLES]
            rows[at, F_INSTRUCTIONS] = 1
            starts[at] = NOT_NATIVE
            size = 4 if d == UNDECODABLE_4 else 2
        else:
            if d >= PAIR_ROWS:
                source, r = described, pairs[d - PAIR_ROWS, 0]
                ident = first_compact + pairs[d - PAIR_ROWS, 1]
            else:
                source, r = descriptors, d
                ident = source[r, D_IDENT]
            place = ident - first_compact
            if 0 <= place < compact.shape[0] and encoded[ident, C_OCCUPANCY] == 0:
                expand_row(encoded, ident, compact, place)
            decided = source[r, D_DECIDED]
            decided_at = pipeline[P_WRITTEN_AT + decided] if decided >= 0 else ABSENT
            delta, waited = issue(encoded, ident, pipeline, early_operand, base_update_latency, alu_latency,
                                  word_load_no_bypass)
            for field in range(FIELDS):
                rows[at, field] = source[r, D_STATIC + field]
            extra = max(0, delta - 1)  # DWT CPICNT (a dual-issue core's waits are not split further)
            rows[at, F_CYCLES] = delta
            rows[at, F_COUNTS] = extra << LANE | (1 if delta == 0 else 0) << 2 * LANE
            rows[at, F_STALLS] = min(waited, extra) << LANE
            refill = source[r, D_REFILL]
            if source[r, D_BRANCH] != 0:
                if source[r, D_DIRECT] != 0 and (decided_at == ABSENT
                                                 or pipeline[P_CYCLE] - decided_at >= constants[K_EARLY_RESOLVE]):
                    refill |= constants[K_MISPREDICT_EARLY] << 2
                else:
                    refill |= constants[K_MISPREDICT] << 2
            rows[at, F_REFILL] |= refill
            if source[r, D_LITERAL] != 0:
                rows[at, F_LITERAL] = source[r, D_LITERAL]
            if source[r, D_SELF_LOOP] != 0:
                rows[at, KIND] = KIND_SELF_LOOP
            idents[run], sequence[run, 0], sequence[run, 1], places[run] = ident, delta, waited, at
            starts[at] = ident
            run += 1
            size = source[r, D_SIZE]
        at += 1
        if size == 4:
            rows[at, KIND] = KIND_CONTINUATION
            at += 1
    adjustments = np.empty((run, 3), np.int64)
    start_adjustments(encoded, idents[:run], sequence[:run], adjustments, early_operand, base_update_latency,
                      alu_latency, word_load_no_bypass, constants[K_START_WINDOW])
    for j in range(run):
        rows[places[j], F_START_ADJUST] = adjustments[j, 0]
        rows[places[j], F_START_FLAGS] = adjustments[j, 1] | 1 << 6 | (adjustments[j, 2] + 8) << 7


@njit
def start_prefix(encoded, starts, first, stop, constants, out):
    """Decoder.start_prefix's schedule, natively: the instructions that start at halfwords
    [first, stop) of a range m7_rows decoded (`starts`, its idents), up to the start window,
    scheduled from an empty pipeline, as CortexM7Timing.fresh_schedule schedules them. Into
    `out`: the halfword after the last, their cycles, waiting cycles and dual issues. False
    (nothing written) where `first` starts no instruction or one is undecodable."""
    size = starts.shape[0]
    if first >= size or starts[first] < 0:
        return False
    stop = min(stop, size)  # (no read past the range, whatever the caller asks)
    idents = np.empty(constants[K_START_WINDOW], np.int64)
    count = 0
    at = first
    while at < stop and count < idents.shape[0]:
        ident = starts[at]
        if ident == NOT_NATIVE:
            return False
        idents[count] = ident
        count += 1
        at += 1
        if at < size and starts[at] == NO_START:
            at += 1
    p = np.empty(PIPELINE, np.int64)
    cycles, waited, pairs = fresh_sums(encoded, idents, 0, count, p, constants[K_EARLY_OPERAND],
                                       constants[K_BASE_UPDATE_LATENCY], constants[K_ALU_LATENCY],
                                       constants[K_WORD_LOAD_NO_BYPASS])
    out[0], out[1], out[2], out[3] = at, cycles, waited, pairs
    return True
