"""Core timing the static tables cannot give: taken-branch refills and branch prediction,
the corrections of a block entered out of sequence, and the lazy FP context store."""
from __future__ import annotations

from .jit import njit
from .layout import (
    AGAIN_COUNTERS, BTAC_AREA, BTAC_ENTRY, BT_BRANCH, BT_COUNTER, BT_LAST_USE, BT_TARGET, CPI_TOTAL, CYCLES,
    DIVIDE_TOTAL, E_AGAIN, E_AGAIN_DELTAS, E_COUNTS, E_CYCLES, E_FP, E_ISB, E_LAST_INSN, E_REFILL, E_SELF_LOOP,
    E_SP_WRITE, E_STALLS, E_START_ADJUST, E_START_FLAGS, E_UNMASK, E_WIDE_FIRST, ENDS_IN_BRANCH, FOLD_TOTAL, F_FP,
    INSTRUCTIONS, INTERLOCK_TOTAL, LAZY_FP_AT, LAZY_FP_CYCLES, LAZY_FP_PENDING, LAZY_FP_TOTAL, LSU_TOTAL, MISPREDICTS,
    MISPREDICT_PENALTY, PREDICTED, PREDICTOR_SETS, PREDICTOR_WAYS, PREVIOUS_BRANCH_AT, PREVIOUS_END, REFILL_BRANCH,
    REFILL_TOTAL, REFILL_WIDE_ODD)
from .encoding import LANE, LANE_MASK, REFILL_CYCLES_MASK, STATIC_CYCLES_MASK, STATIC_SHIFT, STATIC_TAKEN
from .memory_model import set_index
from .tables import _range_sum


@njit
def _predict(st, branch_at, taken, target, branch):
    """A branch target address cache (docs/timing.md, Cortex-M7): PREDICTOR_WAYS-way set
    associative by branch address, least recently used replacement, each entry a target and a
    2-bit counter, allocated when a branch is taken (weakly taken). A hit with the counter at 2
    or 3 predicts taken to the stored target. A miss on a direct unconditional branch
    (STATIC_TAKEN in `branch`, its F_REFILL) is taken by the static predictor at decode, costing
    its redirect cycles; anything else is predicted not taken. A wrong prediction costs the
    branch's refill cycles (else MISPREDICT_PENALTY); both count as CPICNT and the branch_refill
    stall."""
    ways = st[PREDICTOR_WAYS]
    base = BTAC_AREA + BTAC_ENTRY * ways * set_index(branch_at >> 1, st[PREDICTOR_SETS])
    slot = base
    hit = False
    for way in range(ways):
        entry = base + BTAC_ENTRY * way
        if st[entry + BT_BRANCH] == branch_at + 1:
            slot = entry
            hit = True
            break
        if st[entry + BT_LAST_USE] < st[slot + BT_LAST_USE]:
            slot = entry  # the least recently used (an empty entry first)
    predicted_taken = hit and st[slot + BT_COUNTER] >= 2
    static = not hit and (branch & STATIC_TAKEN) != 0
    cost = 0
    if taken:
        if static:
            correct = True
            cost = (branch >> STATIC_SHIFT) & STATIC_CYCLES_MASK
        else:
            correct = predicted_taken and st[slot + BT_TARGET] == target
        if hit:
            st[slot + BT_COUNTER] = min(3, st[slot + BT_COUNTER] + 1)
        else:
            st[slot + BT_BRANCH] = branch_at + 1
            st[slot + BT_COUNTER] = 2
        st[slot + BT_TARGET] = target
    else:
        correct = not predicted_taken and not static
        if hit:
            st[slot + BT_COUNTER] = max(0, st[slot + BT_COUNTER] - 1)
    st[PREDICTED] += 1
    if taken or hit:
        st[slot + BT_LAST_USE] = st[PREDICTED]
    if not correct:
        cost = (branch >> 2) & REFILL_CYCLES_MASK
        if cost == 0:
            cost = st[MISPREDICT_PENALTY]
        st[MISPREDICTS] += 1
    st[CYCLES] += cost
    st[CPI_TOTAL] += cost
    st[REFILL_TOTAL] += cost


@njit
def _refill_after_branch(st, address, wide_target):
    """The previous block ended with a branch that was taken: an unconditional one (2), or a
    conditional one (1) whose next block is not its fall-through."""
    branch = st[ENDS_IN_BRANCH]
    kind = branch & 3
    if kind != 0 and st[PREDICTOR_SETS] > 0:
        _predict(st, st[PREVIOUS_BRANCH_AT], kind == 2 or address != st[PREVIOUS_END], address, branch)
        return
    if kind == 0 or kind == 1 and address == st[PREVIOUS_END]:
        return  # (Python clears ENDS_IN_BRANCH when it moves the PC itself: exception entry/return)
    refill = (branch >> 2) & REFILL_CYCLES_MASK
    if refill == 0:
        refill = st[REFILL_BRANCH]
        if address & 2 and wide_target:
            refill += st[REFILL_WIDE_ODD]
    st[CYCLES] += refill
    st[CPI_TOTAL] += refill
    st[REFILL_TOTAL] += refill


@njit
def add_static(st, cycles, instructions, counts, stalls, sign):
    """Add (sign 1) or take back (-1) the static cost of instructions: cycles, instructions and
    the packed DWT counts and stalls of the decode tables (F_COUNTS, F_STALLS). The block hook
    adds a block's; counters.header_at takes back what the rest of the executing block costs."""
    st[CYCLES] += sign * cycles
    st[INSTRUCTIONS] += sign * instructions
    st[LSU_TOTAL] += sign * (counts & LANE_MASK)
    st[CPI_TOTAL] += sign * ((counts >> LANE) & LANE_MASK)
    st[FOLD_TOTAL] += sign * (counts >> (2 * LANE))
    st[REFILL_TOTAL] += sign * (stalls & LANE_MASK)
    st[INTERLOCK_TOTAL] += sign * ((stalls >> LANE) & LANE_MASK)
    st[DIVIDE_TOTAL] += sign * (stalls >> (2 * LANE))


AGAIN_FOLDED = 1     # E_AGAIN's kind: no branch predictor, the refill rule's cycles are in the deltas ...
AGAIN_PREDICTED = 2  # ... or the branch predictor times the block's branch at every run
AGAIN_KIND = 3       # E_AGAIN: kind | start adjusted << AGAIN_ADJUSTED | has FP << AGAIN_FP | (AGAIN_FOLDED:
AGAIN_ADJUSTED = 2   # the refill's cycles; AGAIN_PREDICTED: the predictor's set its last branch maps to, as
AGAIN_FP = 3         # _predict's base) << AGAIN_SHIFT; the block hook sets AGAIN_SHORT (held_repeats.py)
AGAIN_SHORT = 4
AGAIN_SHIFT = 5


@njit
def again_deltas(st, entry, address):
    """Fill the entry's E_AGAIN and E_AGAIN_DELTAS: what a run of the block right after its own run
    adds (the block hook's first path, hooks._block_hook_variant), entered out of sequence after its
    own last branch, taken: without a branch predictor the refill's cycles in E_AGAIN, and the rest
    in the deltas. add_static, _start_adjust and, without a branch predictor, _refill_after_branch
    compute it on the counters' own slots, which the deltas' slots hold meanwhile (one formula, no
    scratch array). A block whose run changes what the next block's checks read (unmask, ISB, SP
    writes) or that starts with a self-loop gets 0: it always takes the rest of the hook. One with
    FP instructions is marked (AGAIN_FP): its repeat needs the FPU on and no lazy FP state pending,
    which the hook checks as it runs."""
    if (st[entry + E_UNMASK] != 0 or st[entry + E_ISB] != 0 or st[entry + E_SP_WRITE] != 0
            or st[entry + E_SELF_LOOP] != 0):
        st[entry + E_AGAIN] = 0
        return
    for k in range(len(AGAIN_COUNTERS)):
        st[entry + E_AGAIN_DELTAS + k] = st[AGAIN_COUNTERS[k]]
        st[AGAIN_COUNTERS[k]] = 0
    kind = AGAIN_PREDICTED if st[PREDICTOR_SETS] > 0 else AGAIN_FOLDED
    if kind == AGAIN_FOLDED:
        ends_in_branch, previous_end = st[ENDS_IN_BRANCH], st[PREVIOUS_END]
        st[ENDS_IN_BRANCH] = st[entry + E_REFILL]
        st[PREVIOUS_END] = -1  # (not the block's own end: its branch was taken)
        _refill_after_branch(st, address, st[entry + E_WIDE_FIRST] != 0)
        st[ENDS_IN_BRANCH], st[PREVIOUS_END] = ends_in_branch, previous_end
    upper = st[CYCLES]  # (the refill: the hook adds it to CYCLES before the block's energy, as the rest does)
    st[CYCLES] = 0
    if kind == AGAIN_PREDICTED:
        ways = st[PREDICTOR_WAYS]
        upper = BTAC_AREA + BTAC_ENTRY * ways * set_index(st[entry + E_LAST_INSN] >> 1, st[PREDICTOR_SETS])
    add_static(st, st[entry + E_CYCLES], 0, st[entry + E_COUNTS], st[entry + E_STALLS], 1)
    adjusted = st[entry + E_START_ADJUST] != 0 or st[entry + E_START_FLAGS] != 0
    if adjusted:
        _start_adjust(st, st[entry + E_START_ADJUST], st[entry + E_START_FLAGS], 1)
    for k in range(len(AGAIN_COUNTERS)):
        delta = st[AGAIN_COUNTERS[k]]
        st[AGAIN_COUNTERS[k]] = st[entry + E_AGAIN_DELTAS + k]
        st[entry + E_AGAIN_DELTAS + k] = delta
    has_fp = 1 if st[entry + E_FP] > 0 else 0
    st[entry + E_AGAIN] = kind | (1 if adjusted else 0) << AGAIN_ADJUSTED | has_fp << AGAIN_FP | upper << AGAIN_SHIFT


@njit
def dual_issue_adjust(st, cycles, lost, interlock, sign):
    """A dual-issue core's block-start correction (see _start_adjust): `cycles` more, `lost`
    dual issues fewer (the cycles move from FOLDCNT to CPICNT), `interlock` taken back."""
    st[CYCLES] += sign * cycles
    st[FOLD_TOTAL] -= sign * lost
    st[CPI_TOTAL] += sign * (cycles - lost)
    st[INTERLOCK_TOTAL] -= sign * interlock


@njit
def _start_adjust(st, adjust, flags, sign):
    """Apply (sign 1) or undo (-1) what entering a block out of sequence changes: its first
    instruction has no neighbour to pipeline, interlock or fold with. On a dual-issue core
    (flags bit 6) the first instructions start from an empty pipeline: the cycles move between
    CPICNT and FOLDCNT (dual issues lost: bits 7-10, biased by 8)."""
    interlock = flags & 15
    if (flags >> 6) & 1:
        dual_issue_adjust(st, adjust, ((flags >> 7) & 15) - 8, interlock, sign)
        return
    fold = (flags >> 4) & 1
    pipelining = adjust + interlock - fold  # cycles a lost load pipelining adds (LSU)
    st[CYCLES] += sign * adjust
    st[LSU_TOTAL] += sign * pipelining
    if (flags >> 5) & 1:
        st[LSU_TOTAL] -= sign * interlock
    else:
        st[CPI_TOTAL] -= sign * interlock
    st[FOLD_TOTAL] -= sign * fold
    st[INTERLOCK_TOTAL] -= sign * interlock


@njit
def _lazy_fp_store(st, address, size):
    """The first FP instruction after a lazily stacked exception entry stores the FP context
    (ARMv7-M ARM B1.5.7): charged when its block starts, and placed at that instruction
    (LAZY_FP_AT) so a count taken earlier in the block leaves it out; the DWT counts it as
    LSU cycles. An FP instruction an IT block skips is taken as executed."""
    at = address
    while at < address + size and _range_sum(st, at, at + 2, F_FP) <= 0:
        at += 2
    st[LAZY_FP_AT] = at
    st[LAZY_FP_PENDING] = 0
    add_lazy_fp(st, 1)


@njit
def add_lazy_fp(st, sign):
    """Add (1) or take back (-1) the cycles of a lazy FP context store (LSU cycles for the DWT)."""
    st[CYCLES] += sign * st[LAZY_FP_CYCLES]
    st[LSU_TOTAL] += sign * st[LAZY_FP_CYCLES]
    st[LAZY_FP_TOTAL] += sign * st[LAZY_FP_CYCLES]
