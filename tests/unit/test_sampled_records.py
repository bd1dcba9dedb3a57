"""sample_block's records in a window (native/data_sampling.py): the cycle a block takes an empty
record is what the exact start's length follows (machine/data_sampling.py: it goes on while code
runs for the first time); a block taking a record another block held is not new code."""
from mcusim.machine import native as N

STRIDE = 2 * N.SAMPLED_BLOCKS  # block addresses this far apart share a record (direct-mapped)


def learning_state():
    st = N.NativeState(capacity_halfwords=64).buffer
    table = st[N.SAMPLED_TABLE: N.SAMPLED_TABLE + N.SAMPLED_BLOCKS * N.SAMPLED_BLOCK]
    table.reshape(N.SAMPLED_BLOCKS, N.SAMPLED_BLOCK)[:, N.S_ADDRESS] = -1  # (as DataSampling starts)
    st[N.SAMPLING] = N.LEARNING
    st[N.LEARN_RECORD] = -1
    return st


def test_a_block_run_for_the_first_time_notes_the_cycle():
    st = learning_state()
    st[N.CYCLES] = 1_000
    N.sample_block(st, 0x8000_0100, 10)
    assert st[N.NEW_RECORD_AT] == 1_000
    st[N.CYCLES] = 2_000
    N.sample_block(st, 0x8000_0100, 10)  # (its own record again: nothing new)
    assert st[N.NEW_RECORD_AT] == 1_000
    st[N.CYCLES] = 3_000
    N.sample_block(st, 0x8000_0200, 10)
    assert st[N.NEW_RECORD_AT] == 3_000


def test_blocks_that_share_a_record_are_not_new_code_each_time():
    st = learning_state()
    st[N.CYCLES] = 1_000
    N.sample_block(st, 0x0800_0100, 10)
    for cycle in (2_000, 3_000, 4_000):  # a loop of two blocks STRIDE apart: they take the record in turn
        st[N.CYCLES] = cycle
        address = 0x0800_0100 + STRIDE * (cycle // 1_000 % 2)
        N.sample_block(st, address, 10)
        assert st[N.sampled_record(address) + N.S_ADDRESS] == address
    assert st[N.NEW_RECORD_AT] == 1_000
