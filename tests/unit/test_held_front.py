"""The block hook's front (native/held_front.py), called as Unicorn calls it: a held repeat is
counted in the state and goes no further; every other block reaches the block hook in the
state's HOOK_TARGET with Unicorn's arguments, the state untouched."""
import ctypes

import numpy as np
import pytest

from mcusim.machine.native import layout as L
from mcusim.machine.native.held_front import HELD_FRONT
from mcusim.machine.native.held_repeats import held_key

BLOCK_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p)
UC = 0x5000  # (stands for Unicorn's handle: only passed on)


@pytest.fixture
def front():
    """(call(address, size), the state, the calls the block hook got)."""
    state = np.zeros(L.DATA_START, np.int64)
    calls = []
    hook = BLOCK_HOOK(lambda uc, address, size, user: calls.append((uc, address, size, user)))
    state[L.HOOK_TARGET] = ctypes.cast(hook, ctypes.c_void_p).value
    function = BLOCK_HOOK(HELD_FRONT.address)

    def call(address, size):
        function(UC, address, size, state.ctypes.data)

    call.hook = hook  # (kept alive while the front may call it)
    return call, state, calls


def _hold(state, address, size, room, cost):
    state[L.HELD_KEY] = held_key(address, size)
    state[L.HELD_ROOM], state[L.HELD_COST], state[L.DEADLINE], state[L.CODE_PC] = room, cost, 10**9, 0x1234


def test_a_held_repeat_is_counted_while_room_is_left(front):
    call, state, calls = front
    _hold(state, 0x8000_1234, 6, room=10, cost=3)
    for runs, room in ((1, 7), (2, 4), (3, 1), (4, -2)):
        call(0x8000_1234, 6)
        assert (state[L.HELD_RUNS], state[L.HELD_ROOM], state[L.CODE_PC]) == (runs, room, -1)
        state[L.CODE_PC] = 0x1234  # (the exact-PC hook's, which a held repeat resets as the first path does)
    assert calls == []
    call(0x8000_1234, 6)  # no room left: the block hook releases the hold and counts this run
    assert calls == [(UC, 0x8000_1234, 6, state.ctypes.data)]
    assert (state[L.HELD_RUNS], state[L.HELD_ROOM], state[L.CODE_PC]) == (4, -2, 0x1234)


@pytest.mark.parametrize("address, size, change", [
    (0x1000, 8, {}),                                    # another block
    (0x1000, 6, {L.HELD_KEY: 0}),                       # nothing held
    (0x1000, 6, {L.DEADLINE: 0}),                       # a stop asked (from any thread)
    (0x1000, 6, {L.HELD_ROOM: 0}),                      # a limit reached
    (0x1002, 4, {}),                                    # a block ending where it ends
])
def test_any_other_block_goes_to_the_block_hook_as_unicorn_called(front, address, size, change):
    call, state, calls = front
    _hold(state, 0x1000, 6, room=100, cost=5)
    for slot, value in change.items():
        state[slot] = value
    before = state.copy()
    call(address, size)
    assert calls == [(UC, address, size, state.ctypes.data)]
    assert np.array_equal(state, before)


def test_the_size_is_taken_unsigned(front):
    """(Unicorn's uint32 size, as held_key has it: a sign-extended size would give another key.)"""
    call, state, calls = front
    _hold(state, 0x1000, 0x8000_0006, room=10, cost=1)
    call(0x1000, 0x8000_0006)
    assert calls == [] and state[L.HELD_RUNS] == 1
