"""A tight loop's repeats held: counted in one slot, added to the counters when anything reads them.

The block hook's first path counts a block run again right after its own run in a few dozen
loads and stores (counters, energy, predictor). What that adds is the same for every repeat, so
once a loop's first HOLD_AFTER repeats have been counted so, the next ones only count themselves
(HELD_RUNS) while they stay clear of every limit the first path checks (deadline, cycle limit,
power snapshot: HELD_ROOM falls by each repeat's cycles). Nothing may read or change the state while repeats are held:
the block hook releases them before any other block; every other hook that reads or changes the
counters releases them first (`refuse_held`: that block is not held again, as its repeats would
only be released at once), but for the exact-PC hook, whose CODE_PC each held repeat resets as
the first path does; Python releases them after each emu_start and at the start of each callback
(Machine.release_held, refuse_held); a stop asked from another thread (DEADLINE 0) ends the hold
at the next repeat. A release leaves the state as the first path would have, repeat by repeat,
so nothing a run computes or reports changes."""
from __future__ import annotations

from .jit import njit
from .layout import (
    AGAIN_COUNTERS, BT_LAST_USE, CYCLES, CYCLE_LIMIT, DEADLINE, E_AGAIN, E_AGAIN_DELTAS, E_CLASSES, E_CYCLES,
    E_ENERGY_CORE, E_ENERGY_SRAM, E_INSTRUCTIONS, FL_BLOCK_START, HELD_COST, HELD_ENTRY, HELD_KEY, HELD_RECORD,
    HELD_REFILL, HELD_REFUSED, HELD_ROOM, HELD_RUNS, HELD_SEEN, HELD_SLOT, HELD_TOTAL, HOLD_REPEATS, HOLDS,
    INSTRUCTIONS, P_ENABLED, P_ENERGY_CORE, P_ENERGY_SRAM, P_PACKED, P_PACKED_BLOCKS, P_SNAPSHOT_NEXT,
    P_SNAPSHOT_TABLE, PREDICTED, RATE_SHIFT, S_FETCH_RATE, S_READS_RATE, S_WAIT_RATE, STEP_LIMIT, UNPACK_BLOCKS)
from .core_timing import AGAIN_SHORT
from .data_sampling import add_estimates
from .power import power_unpack

KEY_SHIFT = 20  # a translated block is never 1 MB long
HOLD_AFTER = 4  # a loop's repeats are held from its fourth on, ...
SHORT_HOLD = 8  # ... and a block whose loop ended with fewer held in its first hold is held no more
#                 (AGAIN_SHORT): setting up and releasing a hold costs about what ten held repeats save
#                 (docs/performance.md, "Forty-second pass"). A hold begun again in the same loop (the
#                 one before ran out of room at a power trace snapshot) is the tail of a long loop.
SHORT_RETRY = HOLD_AFTER + SHORT_HOLD  # ... until a loop of it is counted this long (its count began
#                                      again after a stop, a window's end: the loop was longer than its
#                                      first hold saw)
NO_STEP_LIMIT = (1 << 63) - 1


@njit
def held_key(address, size):
    return (address << KEY_SHIFT) | size


@njit
def hold(st, entry, key, refill, slot, power, record):
    """After the first path counted a repeat of the block at `key`: hold its next repeats, if it
    was not refused, no step limit is set and the variant's energy accounting is the run's.
    `record`: its sampled timing record, whose estimates each repeat adds between windows (-1:
    none; a board with flash ports holds only such repeats)."""
    if (key == st[HELD_REFUSED] or st[HOLD_REPEATS] == 0 or st[STEP_LIMIT] != NO_STEP_LIMIT
            or power != (st[P_ENABLED] != 0)):
        return
    cost = refill + st[entry + E_AGAIN_DELTAS]  # (AGAIN_COUNTERS[0] is CYCLES)
    if record >= 0:  # (at most a cycle more than its rate each, as the fractions carry)
        cost += _whole_at_most(st[record + S_FETCH_RATE]) + _whole_at_most(st[record + S_WAIT_RATE])
    limit = min(st[DEADLINE], st[CYCLE_LIMIT] - refill - st[entry + E_CYCLES] + 1)
    if power and st[P_SNAPSHOT_TABLE] != 0:
        limit = min(limit, st[P_SNAPSHOT_NEXT] - refill)
    room = limit - st[CYCLES]
    if cost <= 0 or room <= 0:
        return
    st[HOLDS] += 1
    st[entry + E_AGAIN] &= ~(1 << AGAIN_SHORT)  # (held again: a loop of it ran SHORT_RETRY repeats)
    st[HELD_KEY] = key
    st[HELD_ROOM] = room
    st[HELD_COST] = cost
    st[HELD_RUNS] = 0
    st[HELD_ENTRY] = entry
    st[HELD_SLOT] = slot
    st[HELD_REFILL] = refill
    st[HELD_RECORD] = record


@njit
def _whole_at_most(rate):
    return (rate + (1 << RATE_SHIFT) - 1) >> RATE_SHIFT


@njit(inline=False)
def release_held(st, loop_ended=False):
    """Add the held repeats to the counters as the first path would have, one by one; end the hold.
    `loop_ended`: another block runs (not a stop), so the loop's first hold, if short, marks the
    block AGAIN_SHORT (a later one follows a hold that ran out of room: HELD_SEEN counted past
    HOLD_AFTER)."""
    runs = st[HELD_RUNS]
    entry = st[HELD_ENTRY]
    st[HELD_KEY] = 0
    st[HELD_RUNS] = 0
    if loop_ended and runs < SHORT_HOLD and st[HELD_SEEN] <= HOLD_AFTER:
        st[entry + E_AGAIN] |= 1 << AGAIN_SHORT
    if runs == 0:
        return
    st[HELD_TOTAL] += runs
    slot = st[HELD_SLOT]
    if slot >= 0:
        st[PREDICTED] += runs
        st[slot + BT_LAST_USE] = st[PREDICTED]
    st[CYCLES] += runs * st[HELD_REFILL]
    if st[P_ENABLED] != 0:
        _count_power_runs(st, entry, runs)
    st[INSTRUCTIONS] += runs * st[entry + E_INSTRUCTIONS]
    for k in range(len(AGAIN_COUNTERS)):
        st[AGAIN_COUNTERS[k]] += runs * st[entry + E_AGAIN_DELTAS + k]
    last = 0  # (what the last repeat's estimates added after it began)
    record = st[HELD_RECORD]
    if record >= 0:
        fetch, wait, reads = st[record + S_FETCH_RATE], st[record + S_WAIT_RATE], st[record + S_READS_RATE]
        add_estimates(st, (runs - 1) * fetch, (runs - 1) * wait, (runs - 1) * reads)
        last = add_estimates(st, fetch, wait, reads)
    st[FL_BLOCK_START] = st[CYCLES] - st[entry + E_AGAIN_DELTAS] - last  # (the last repeat's start, after its refill)


@njit
def refuse_held(st):
    """A hook other than the block hook is about to read or change the state: release the held
    repeats, and hold that block no more (its hook would release each repeat)."""
    if st[HELD_KEY] != 0:
        st[HELD_REFUSED] = st[HELD_KEY]
        release_held(st)


@njit
def _count_power_runs(st, entry, runs):
    """power._count_power `runs` times (no snapshot falls due while repeats are held)."""
    left = runs
    while left > 0:
        take = min(left, UNPACK_BLOCKS - st[P_PACKED_BLOCKS])
        for i in range(3):
            st[P_PACKED + i] += take * st[entry + E_CLASSES + i]
        st[P_PACKED_BLOCKS] += take
        if st[P_PACKED_BLOCKS] >= UNPACK_BLOCKS:
            power_unpack(st)
        left -= take
    st[P_ENERGY_CORE] += runs * st[entry + E_ENERGY_CORE]
    st[P_ENERGY_SRAM] += runs * st[entry + E_ENERGY_SRAM]
