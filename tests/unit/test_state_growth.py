"""NativeState.add_window grows the shared buffer once, to room for every window there may be:
pages never written cost nothing, while each doubling copied the whole buffer (0.3 to 0.5 s at
84 MB, a pause the time limit waited for in code running away through RAM)."""
from mcusim.machine import native as N


def test_the_buffer_grows_once_to_room_for_every_window_and_keeps_what_it_held():
    state = N.NativeState(capacity_halfwords=64)
    grown = []
    state.on_reallocate = grown.append
    size = state.WINDOW_BYTES
    state.add_window(0, size)
    state.buffer[N.CYCLES] = 1234
    state.tables(0)[0][5] = 77
    for index in range(1, N.MAX_WINDOWS):
        state.add_window(index * size, size)
    assert len(grown) == 1 and grown[0] is state.buffer
    assert state.buffer[N.TOTAL_LENGTH] == len(state.buffer) >= state.next_free
    assert state.buffer[N.CYCLES] == 1234 and state.tables(0)[0][5] == 77
