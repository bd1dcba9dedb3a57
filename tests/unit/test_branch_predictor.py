"""The Cortex-M7 branch predictor (native._predict, docs/timing.md "Branch prediction"), driven
directly with branch outcomes: what it predicts, what it counts and what it charges."""
import numpy as np

from mcusim.machine import native as N
from mcusim.timing.cortex_m4 import REFILL_ALWAYS, REFILL_IF_TAKEN

ENTRIES = 64
WAYS = 2       # as cores/cortex-m7.toml: 32 sets
PENALTY = 8    # MISPREDICT_PENALTY: a branch whose F_REFILL gives no cycles of its own
STATIC = 2     # a static redirect, as cores/cortex-m7.toml branch_static_taken


def predictor():
    st = N.NativeState(capacity_halfwords=64).buffer
    st[N.PREDICTOR_SETS] = ENTRIES // WAYS
    st[N.PREDICTOR_WAYS] = WAYS
    st[N.MISPREDICT_PENALTY] = PENALTY
    return st


def conditional(penalty=0):
    return REFILL_IF_TAKEN | penalty << 2


def direct_unconditional():
    """B or BL: the static predictor takes it at decode when the BTAC misses."""
    return REFILL_ALWAYS | N.STATIC_TAKEN | STATIC << N.STATIC_SHIFT


def indirect():
    """BX LR, POP {pc}, TBB...: no static prediction."""
    return REFILL_ALWAYS


def run(st, outcomes):
    """Feed (branch address, taken, target, F_REFILL) in order; return (mispredicts, cycles)."""
    for at, taken, target, branch in outcomes:
        N._predict(st, at, taken, target, branch)
    return int(st[N.MISPREDICTS]), int(st[N.CYCLES])


def test_a_loop_branch_is_wrong_on_its_first_turn_and_at_its_exit():
    st = predictor()
    n = 10
    loop = [(0x1000, True, 0x0FF0, conditional())] * (n - 1) + [(0x1000, False, 0x1002, conditional())]
    assert run(st, loop) == (2, 2 * PENALTY)  # the first taken turn misses the BTAC; the exit finds it at 3
    assert st[N.PREDICTED] == n


def test_a_mispredict_costs_the_branch_own_penalty():
    st = predictor()
    assert run(st, [(0x1000, True, 0x0FF0, conditional(penalty=6))]) == (1, 6)


def test_an_alternating_branch_is_always_wrong_after_its_first_turn():
    """Not taken, taken, not taken...: the 2-bit counter flips between 1 and 2."""
    st = predictor()
    outcomes = [(0x1000, k % 2 == 1, 0x1010, conditional()) for k in range(20)]
    assert run(st, outcomes)[0] == 19


def test_a_counter_at_3_absorbs_one_not_taken():
    """Taken, taken, not taken, repeated (a three-turn inner loop): one miss per period once warm."""
    st = predictor()
    periods = 10
    outcomes = [(0x1000, turn < 2, 0x0FF0, conditional()) for _ in range(periods) for turn in range(3)]
    assert run(st, outcomes)[0] == 1 + periods  # the first taken turn, then each exit


def test_a_direct_unconditional_branch_is_taken_statically_then_from_the_btac():
    st = predictor()
    call = (0x2000, True, 0x3000, direct_unconditional())
    assert run(st, [call]) == (0, STATIC)       # a miss: the static predictor redirects at decode
    assert run(st, [call] * 5) == (0, STATIC)   # then the BTAC has it: nothing more
    assert st[N.PREDICTED] == 6


def test_a_return_to_alternating_call_sites_is_always_wrong():
    """No return stack: the BTAC holds the last target of a BX LR."""
    st = predictor()
    returns = [(0x3000, True, 0x2004 + 8 * (k % 2), indirect()) for k in range(12)]
    assert run(st, returns) == (12, 12 * PENALTY)


def test_a_return_to_one_call_site_is_wrong_only_the_first_time():
    st = predictor()
    returns = [(0x3000, True, 0x2004, indirect())] * 12
    assert run(st, returns) == (1, PENALTY)


def test_a_table_branch_to_a_new_case_each_time_is_always_wrong():
    st = predictor()
    cases = [(0x4000, True, 0x4010 + 4 * (k % 4), indirect()) for k in range(16)]
    assert run(st, cases)[0] == 16


def test_a_set_holds_two_branches_and_replaces_the_least_recently_used():
    """Set-associative by halfword address: 2 * sets bytes apart is the same set."""
    stride = 2 * ENTRIES // WAYS
    a, b, c = 0x1000, 0x1000 + stride, 0x1000 + 2 * stride
    st = predictor()
    two = [(at, True, at + 0x40, conditional()) for _ in range(5) for at in (a, b)]
    assert run(st, two)[0] == 2             # both fit: wrong only the first time each
    st = predictor()
    three = [(at, True, at + 0x40, conditional()) for _ in range(5) for at in (a, b, c)]
    assert run(st, three)[0] == 15          # a, b, c, a...: each evicts the next one to come
    st = predictor()
    reused = [(at, True, at + 0x40, conditional()) for _ in range(5) for at in (a, b, a, c)]
    assert run(st, reused)[0] == 3 + 4 * 2  # a stays (used last before c comes); b and c take turns


def test_a_not_taken_branch_never_enters_the_btac():
    st = predictor()
    assert run(st, [(0x1000, False, 0x1002, conditional())] * 5) == (0, 0)
    assert not np.any(st[N.BTAC_AREA:N.BTAC_AREA + N.BTAC_ENTRY * ENTRIES])
