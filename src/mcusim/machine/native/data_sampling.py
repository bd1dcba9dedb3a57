"""The block hook's side of sampled timing (machine/data_sampling.py): in a window, each block's
record (SAMPLED_TABLE) learns the wait and flash reads its runs caused in the sampled memory and
the instruction-fetch wait the fetch model gave it; between windows, each run of a block adds
what its runs averaged in the last window it ran in, and the fetch model does not run.

Why per block: the wait of a TinyML layer's loads of its weights depends on its kernel's access
pattern, which is the block's code, and a block's fetch wait on where its lines lie and what
ran before it; a rate per core cycle would spread one layer's wait over the next (the error both
give is measured in docs/timing.md, "Sampled data timing")."""
from __future__ import annotations

from .jit import njit
from .layout import (
    CYCLES, DEADLINE, ESTIMATED_FETCH, ESTIMATED_READS, ESTIMATED_WAIT, ESTIMATING, FETCH_CARRY, FETCH_PER_CYCLE,
    LEARN_ADDRESS, LEARN_FETCH_AT, LEARN_READS_AT, LEARN_RECORD, LEARN_WAIT_AT, LEARNING, NEW_RECORD_AT, P_COEF_FLASH,
    P_ENERGY_FLASH, P_FLASH_READS, RATE_SHIFT, READS_CARRY, READS_PER_CYCLE, REQUEST_AFTER, S_ADDRESS, S_FETCH,
    S_FETCH_RATE, S_READS, S_READS_RATE, S_RUNS, S_WAIT, S_WAIT_RATE, SAMPLED_BLOCK, SAMPLED_BLOCKS, SAMPLED_FETCH,
    SAMPLED_READS, SAMPLED_TABLE, SAMPLED_WAIT, SAMPLING, WAIT_CARRY, WAIT_PER_CYCLE, WINDOW_REQUESTED, FL_USE_CLOCK,
    WINDOW_USE_START)
from .memory_model import add_data_wait, add_fetch_waits, instruction_lines_changed

NEVER = 1 << 62
ASKED = -2  # a record's rates while its block, not yet run in a window, has asked for one: a block
            # that runs rarely (once per printed line) may run in none of the windows it asks for,
            # and asking at every run opened a window every REQUEST_GAP_CYCLES, each flushing
            # Unicorn's translated code twice on mcu-d (docs/performance.md, "Twelfth pass")


@njit
def _whole(st, carry_slot, amount):
    """The whole units of `amount` (units of 2**-RATE_SHIFT) with the fraction carried in
    st[carry_slot] from the blocks before; the fraction left stays there."""
    carry = st[carry_slot] + amount
    whole = carry >> RATE_SHIFT
    st[carry_slot] = carry - (whole << RATE_SHIFT)
    return whole


@njit
def sampled_record(address):
    """Where the block at `address` keeps what the windows measured (direct-mapped)."""
    return SAMPLED_TABLE + ((address >> 1) & (SAMPLED_BLOCKS - 1)) * SAMPLED_BLOCK


@njit
def learn_block_end(st):
    """The sampled memory's wait and reads, and the fetch wait, since the block running began are its run's."""
    record = st[LEARN_RECORD]
    if record >= 0 and st[record + S_ADDRESS] == st[LEARN_ADDRESS]:
        st[record + S_WAIT] += st[SAMPLED_WAIT] - st[LEARN_WAIT_AT]
        st[record + S_READS] += st[SAMPLED_READS] - st[LEARN_READS_AT]
        st[record + S_FETCH] += st[SAMPLED_FETCH] - st[LEARN_FETCH_AT]
        st[record + S_RUNS] += 1


@njit
def window_opened(st):
    """A window begins: a cache line last used before now is stale to it (MISS_STALE), and the
    fetch fast path stamps the lines it uses again (memory_model._fetch_hits), or a loop's lines
    would keep their stamps from before."""
    st[WINDOW_USE_START] = st[FL_USE_CLOCK]
    instruction_lines_changed(st, False)


@njit
def sample_block(st, address, cycles):
    """At the start of a block of `cycles` static cycles, before its fetches: in a window, the
    block before it ends (learn_block_end) and this one begins; between windows, this block's
    estimate is added, its fetch wait included."""
    record = sampled_record(address)
    if st[SAMPLING] == LEARNING:
        learn_block_end(st)
        if st[record + S_ADDRESS] != address:  # (the record held another block: this one's now)
            if st[record + S_ADDRESS] < 0:  # (an empty record: code run for the first time; two
                st[NEW_RECORD_AT] = st[CYCLES]  # blocks taking one from each other are not new)
            st[record + S_ADDRESS] = address
            st[record + S_WAIT] = 0
            st[record + S_READS] = 0
            st[record + S_FETCH] = 0
            st[record + S_RUNS] = 0
            st[record + S_WAIT_RATE] = -1
            st[record + S_READS_RATE] = -1
            st[record + S_FETCH_RATE] = -1
        st[LEARN_RECORD] = record
        st[LEARN_ADDRESS] = address
        st[LEARN_WAIT_AT] = st[SAMPLED_WAIT]
        st[LEARN_READS_AT] = st[SAMPLED_READS]
        st[LEARN_FETCH_AT] = st[SAMPLED_FETCH]
        return
    wait_rate = st[record + S_WAIT_RATE]
    reads_rate = st[record + S_READS_RATE]
    fetch_rate = st[record + S_FETCH_RATE]
    if st[record + S_ADDRESS] != address or wait_rate < 0:  # not run in a window: the last window's
        asked = st[record + S_ADDRESS] == address and wait_rate == ASKED  # average per cycle, and ask
        wait_rate = cycles * st[WAIT_PER_CYCLE]                           # for a window, once
        reads_rate = cycles * st[READS_PER_CYCLE]
        fetch_rate = cycles * st[FETCH_PER_CYCLE]
        if not asked and st[CYCLES] >= st[REQUEST_AFTER]:
            st[WINDOW_REQUESTED] = 1
            st[REQUEST_AFTER] = NEVER
            st[DEADLINE] = st[CYCLES]  # (the run stops at the next block)
            if st[record + S_ADDRESS] == address or st[record + S_ADDRESS] < 0:
                st[record + S_ADDRESS] = address
                st[record + S_WAIT_RATE] = ASKED
                st[record + S_READS_RATE] = ASKED
                st[record + S_FETCH_RATE] = ASKED
    add_estimates(st, fetch_rate, wait_rate, reads_rate)


@njit
def add_estimates(st, fetch_amount, wait_amount, reads_amount):
    """Add the whole cycles and reads of these amounts (a rate, or the rates of several runs in
    one: the carries make the sum the same either way); returns the cycles added."""
    fetch = _whole(st, FETCH_CARRY, fetch_amount)
    if fetch != 0:
        st[ESTIMATED_FETCH] += fetch
        add_fetch_waits(st, fetch, 0, 1)
    wait = _whole(st, WAIT_CARRY, wait_amount)
    if wait != 0:
        st[ESTIMATED_WAIT] += wait
        add_data_wait(st, wait)
    reads = _whole(st, READS_CARRY, reads_amount)
    if reads != 0:
        st[ESTIMATED_READS] += reads
        st[P_FLASH_READS] += reads
        st[P_ENERGY_FLASH] += reads * st[P_COEF_FLASH]
    return fetch + wait


@njit
def estimated_record(st, address):
    """The record of the block at `address` if its runs between windows add its own rates, as
    they do once it ran in a window (else -1: sample_block may ask for a window)."""
    record = sampled_record(address)
    if (st[SAMPLING] != ESTIMATING or st[record + S_ADDRESS] != address or st[record + S_WAIT_RATE] < 0
            or st[record + S_READS_RATE] < 0 or st[record + S_FETCH_RATE] < 0):
        return -1
    return record
