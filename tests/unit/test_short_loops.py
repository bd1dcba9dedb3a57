"""Which loops the block hook stops holding (native/held_repeats.py): a block whose loop ended
with few repeats held in its first hold is marked AGAIN_SHORT; a hold begun again in the same
loop, or ended by a stop, marks nothing; a marked block held again (a loop of it was counted to
SHORT_RETRY repeats) is unmarked. Called on a state as the block hook calls them."""
import numpy as np

from mcusim.machine.native import layout as L
from mcusim.machine.native.core_timing import AGAIN_FOLDED, AGAIN_SHORT
from mcusim.machine.native.held_repeats import (
    HOLD_AFTER, NO_STEP_LIMIT, SHORT_HOLD, held_key, hold, release_held)

ENTRY = L.BLOCK_CACHE
SHORT = 1 << AGAIN_SHORT


def _state():
    st = np.zeros(L.DATA_START, np.int64)
    st[ENTRY + L.E_AGAIN] = AGAIN_FOLDED | 3 << 10  # (a kind and other bits, to be kept)
    st[ENTRY + L.E_AGAIN_DELTAS] = 3  # (a repeat's cycles)
    st[L.HELD_SLOT] = st[L.HELD_RECORD] = -1
    st[L.HOLD_REPEATS], st[L.STEP_LIMIT], st[L.DEADLINE], st[L.CYCLE_LIMIT] = 1, NO_STEP_LIMIT, 10**9, 10**9
    return st


def _marked_after_release(seen, runs, loop_ended=True):
    st = _state()
    st[L.HELD_KEY], st[L.HELD_ENTRY], st[L.HELD_RUNS], st[L.HELD_SEEN] = held_key(0x100, 4), ENTRY, runs, seen
    release_held(st, loop_ended)
    assert st[L.HELD_KEY] == 0 and st[ENTRY + L.E_AGAIN] & ~SHORT == AGAIN_FOLDED | 3 << 10
    return bool(st[ENTRY + L.E_AGAIN] & SHORT)


def test_a_loop_ending_in_its_first_hold_with_few_held_is_marked():
    assert _marked_after_release(HOLD_AFTER, SHORT_HOLD - 1)
    assert not _marked_after_release(HOLD_AFTER, SHORT_HOLD)


def test_a_hold_begun_again_in_its_loop_marks_nothing():
    """The hold before it ran out of room (a power snapshot): the loop ran longer than this hold."""
    assert not _marked_after_release(HOLD_AFTER + 1, 1)


def test_a_stop_marks_nothing():
    assert not _marked_after_release(HOLD_AFTER, 1, loop_ended=False)


def test_holding_a_marked_block_unmarks_it():
    st = _state()
    st[ENTRY + L.E_AGAIN] |= SHORT
    hold(st, ENTRY, held_key(0x100, 4), 0, -1, False, -1)
    assert st[L.HELD_KEY] == held_key(0x100, 4)
    assert st[ENTRY + L.E_AGAIN] == AGAIN_FOLDED | 3 << 10

