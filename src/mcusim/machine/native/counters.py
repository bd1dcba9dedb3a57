"""The counters the native code keeps, in one list, and their values at an instruction.

COUNTERS says, once, what each counter is: its name (the key counters_at returns), the header
slot holding its unwrapped total, its unit, the DWT register it drives (if any), the key of
run.json it is reported under (if any) and what it counts. The DWT reconstruction
(NativeState.counters_at, settle_at), Machine.dwt_totals / counter_total and run.json's
figures can all be built from it: adding a counter means a slot in layout.py and a line here
(plus the code that counts it).

The hook adds a block's whole static cost when the block starts (per-instruction hooks such
as the divide's add theirs as they run), so at an instruction in the middle of the executing
block (a CYCCNT read, a fault) header_at takes back what the rest of the block costs, with the
same functions the hook used to add it (sign -1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .jit import njit
from .layout import (
    BLOCK_ADDRESS, BLOCK_ADJUSTED, BLOCK_SIZE, CPI_TOTAL, CYCLES, DATA_WAIT_TOTAL, DIVIDE_TOTAL, FL_BLOCK_LINES,
    FL_BLOCK_LITERALS, FL_CONTENTION_TOTAL, FL_FETCH_TOTAL, FL_LINE_RECORDS, FL_RECORD, FOLD_TOTAL, F_COUNTS, F_CYCLES,
    F_INSTRUCTIONS, F_STALLS, F_START_ADJUST, F_START_FLAGS, HEADER_LENGTH, INSTRUCTIONS, INTERLOCK_TOTAL, LAZY_FP_AT,
    LAZY_FP_TOTAL, LITERAL_RECORD, LITERAL_RECORD_AREA, LIT_INSN, LIT_WAIT, LSU_TOTAL, MISPREDICTS, PREDICTED,
    REC_ADDRESS, REC_CONTENTION, REC_STALL, REFILL_TOTAL)
from .tables import _range_sum_decoded, _value_at
from .core_timing import _start_adjust, add_lazy_fp, add_static, dual_issue_adjust
from .memory_model import add_data_wait, add_fetch_waits

__all__ = ["BY_DWT", "BY_NAME", "COUNTERS", "Counter", "PER_INSTRUCTION", "header_at"]


@dataclass(frozen=True)
class Counter:
    name: str               # the key in counters_at
    slot: int | None        # the header slot of its unwrapped total (None: kept by Python, Machine)
    unit: str               # "cycles", "instructions" or "branches"
    dwt: str | None         # the DWT register it drives (ARMv7-M ARM C1.8), else None
    result: str | None      # where run.json reports it ("stalls.fetch_wait": in "stalls"), else None
    per_instruction: bool   # exact at an instruction inside a block (header_at takes back the rest)
    description: str


COUNTERS = (
    Counter("cycles", CYCLES, "cycles", "CYCCNT", "cycles", True, "core clock cycles"),
    Counter("instructions", INSTRUCTIONS, "instructions", None, "instructions", True, "instructions executed"),
    Counter("cpi", CPI_TOTAL, "cycles", "CPICNT", None, True,
            "extra cycles of multi-cycle instructions and instruction fetch stalls (DWT CPICNT, unwrapped)"),
    Counter("lsu", LSU_TOTAL, "cycles", "LSUCNT", None, True,
            "extra cycles of loads and stores beyond the first (DWT LSUCNT, unwrapped)"),
    Counter("fold", FOLD_TOTAL, "instructions", "FOLDCNT", None, True,
            "folded (on a dual-issue core: dual-issued) instructions (DWT FOLDCNT, unwrapped)"),
    # the stalls, in run.json's order
    Counter("fetch_wait", FL_FETCH_TOTAL, "cycles", None, "stalls.fetch_wait", True,
            "instruction-fetch waits on flash"),
    Counter("data_wait", DATA_WAIT_TOTAL, "cycles", None, "stalls.data_wait", True,
            "wait cycles of data reads from slow memory (flash, RAM behind a data cache)"),
    Counter("refill", REFILL_TOTAL, "cycles", None, "stalls.branch_refill", True,
            "cycles refilling the pipeline after taken branches and loads into PC"),
    Counter("interlock", INTERLOCK_TOTAL, "cycles", None, "stalls.interlock", True, "address-interlock stalls"),
    Counter("divide", DIVIDE_TOTAL, "cycles", None, "stalls.divide", True,
            "cycles divides took beyond their static minimum"),
    Counter("exception", None, "cycles", "EXCCNT", "stalls.exception", False,
            "exception entry and return overhead (kept by Machine: exception_cycles)"),
    Counter("lazy_fp", LAZY_FP_TOTAL, "cycles", None, "stalls.exception", True,
            "lazy FP context stores (reported with the exception overhead, not in EXCCNT)"),
    Counter("sleep", None, "cycles", "SLEEPCNT", "stalls.sleep", False,
            "cycles asleep (kept by Machine: sleep_cycles)"),
    Counter("contention", FL_CONTENTION_TOTAL, "cycles", None, "stalls.contention", True,
            "instruction-fetch cycles lost to data reads of the same flash"),
    # pipeline statistics
    Counter("branches_predicted", PREDICTED, "branches", None, "branches_predicted", False,
            "branches the branch predictor predicted"),
    Counter("branch_mispredicts", MISPREDICTS, "branches", None, "branch_mispredicts", False,
            "branches the branch predictor got wrong"),
)
BY_NAME = {counter.name: counter for counter in COUNTERS}
PER_INSTRUCTION = tuple(counter for counter in COUNTERS if counter.per_instruction)
BY_DWT = {counter.dwt: counter for counter in COUNTERS if counter.dwt}


@njit
def header_at(st, pc, prefix_cycles, prefix_interlock, prefix_lost, has_prefix, t):
    """Fills `t` (HEADER_LENGTH slots) with the header, the counters as they were at the
    instruction `pc` of the executing block (unchanged when `pc` is outside it); an out array,
    not a returned one, as returning an array from native code makes numba's wrapper unpickle
    its type (which imports numba). On a dual-issue core, a block entered
    out of sequence and `pc` past its first instruction: (prefix_cycles, prefix_interlock,
    prefix_lost) is the part of the block-start correction that belongs to the instructions
    before `pc` (the decoder's start_prefix; has_prefix 0: none given)."""
    for i in range(HEADER_LENGTH):  # (a loop: a slice assignment compiles numba's shape-error formatting, 3 s)
        t[i] = st[i]
    block = st[BLOCK_ADDRESS]
    end = block + st[BLOCK_SIZE]
    if not block <= pc < end:
        return
    if pc <= st[LAZY_FP_AT]:  # the FP instruction that stores the lazy FP context has not run
        add_lazy_fp(t, -1)
    records = st[FL_LINE_RECORDS]
    for i in range(st[FL_BLOCK_LINES]):
        record = records + FL_RECORD * i
        if st[record + REC_ADDRESS] > pc:  # fetched for an instruction after pc: not yet waited for
            add_fetch_waits(t, st[record + REC_STALL], st[record + REC_CONTENTION], -1)
    for i in range(st[FL_BLOCK_LITERALS]):
        record = LITERAL_RECORD_AREA + LITERAL_RECORD * i
        if st[record + LIT_INSN] >= pc:  # read by an instruction that has not run yet
            add_data_wait(t, -st[record + LIT_WAIT])
    add_static(t, _range_sum_decoded(st, pc, end, F_CYCLES)[0], _range_sum_decoded(st, pc, end, F_INSTRUCTIONS)[0],
               _range_sum_decoded(st, pc, end, F_COUNTS)[0], _range_sum_decoded(st, pc, end, F_STALLS)[0], -1)
    if pc == block and st[BLOCK_ADJUSTED] != 0:  # the first instruction has not run: nor its adjustment
        _start_adjust(t, _value_at(st, block, F_START_ADJUST), _value_at(st, block, F_START_FLAGS), -1)
    elif st[BLOCK_ADJUSTED] != 0 and has_prefix != 0:
        flags = _value_at(st, block, F_START_FLAGS)
        if (flags >> 6) & 1:  # keep only the correction of the instructions before pc
            dual_issue_adjust(t, _value_at(st, block, F_START_ADJUST) - prefix_cycles,
                              ((flags >> 7) & 15) - 8 - prefix_lost, (flags & 15) - prefix_interlock, -1)


def totals(header: np.ndarray) -> dict[str, int]:
    """The per-instruction counters of a header (header_at's, or the buffer's own)."""
    return {counter.name: int(header[counter.slot]) for counter in PER_INSTRUCTION}
