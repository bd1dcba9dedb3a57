"""The exact profile: every cycle charged to the function it ran in, a call tree (calls,
returns, tail calls, exception boundaries, sleep) and per-halfword line counts, all kept
by the block hook in tables Python reserved (analysis/profile.py reads them)."""
from __future__ import annotations

from .jit import njit
from .layout import (
    CALL_LOG_ROW, CYCLES, ENDS_IN_BRANCH, E_CYCLES, E_FUNCTION, E_LINE_END, E_LINE_SLOT, LC_EXTRA_CYCLES, LC_RUNS,
    LINE_COUNTER, LINE_RANGE, LOG_CYCLE, LOG_NODE, LR_COUNTERS, LR_END, LR_START, NODE_CALLS, NODE_CYCLES, NODE_FUNCTION,
    NODE_PARENT, NODE_RETURNS_TO, PREVIOUS_BRANCH_AT, PROFILE_EXTRA, PROFILE_FUNCTION, PROFILE_NODE,
    PROFILE_SINCE, PROFILE_TABLE, PROFILE_TREE_META, P_ENERGY_CORE, P_ENERGY_FLASH, P_ENERGY_SRAM,
    P_PROFILE_SINCE, TREE_CAPACITY, TREE_COUNT, TREE_ENERGY, TREE_FULL_FROM, TREE_LINE_END,
    TREE_LINE_RANGES, TREE_LINE_SLOT, TREE_LINE_START, TREE_LINE_STATIC, TREE_LOG, TREE_LOG_CAPACITY,
    TREE_LOG_COUNT, TREE_LOG_DROPPED, TREE_NODE, TREE_OVERFLOWS, TREE_RESUMING)
from .encoding import CALL_FLAG, KIND_CONTINUATION
from .tables import _kind_at


# The exact profile's table and call tree: see layout.py (PROFILE_EXTRA, the call tree meta, node
# and line range records). The extra rows, as offsets from n:
PROFILE_UNKNOWN, PROFILE_EXCEPTIONS, PROFILE_SLEEP = 0, 1, 2
TREE_ROOT, TREE_FULL = 0, 1  # node 0: the root; node 1 takes what ran below a call the full tree had no room for
# What moved the profile on: a block of code, or Python (exception entry, exception return, sleep).
EVENT_CODE, EVENT_ENTRY, EVENT_RETURN, EVENT_SLEEP = 0, 1, 2, 3
EVENT_FLUSH = 4  # charge what ran so far, change nothing


@njit
def _function_of(st, address):
    """Index of the function holding `address` (binary search), or n for none."""
    t = st[PROFILE_TABLE]
    n = st[t]
    low, high = 0, n - 1
    while low <= high:
        middle = (low + high) >> 1
        if st[t + 1 + middle] <= address:
            low = middle + 1
        else:
            high = middle - 1
    if high >= 0 and address < st[t + 1 + n + high]:
        return high
    return n


@njit
def _tree_child(st, meta, parent, function):
    """The call tree's node for `function` below `parent`, made on first use (TREE_FULL when
    the tree has no room left)."""
    capacity = st[meta + TREE_CAPACITY]
    nodes = meta + PROFILE_TREE_META
    table = nodes + PROFILE_NODE * capacity
    size = 2 * capacity
    h = (parent * 1000003 + function * 7919) % size
    while st[table + h] != 0:
        node = st[table + h] - 1
        if (st[nodes + PROFILE_NODE * node + NODE_PARENT] == parent
                and st[nodes + PROFILE_NODE * node + NODE_FUNCTION] == function):
            return node
        h += 1
        if h == size:
            h = 0
    if st[meta + TREE_COUNT] >= capacity:
        st[meta + TREE_OVERFLOWS] += 1
        st[meta + TREE_FULL_FROM] = parent
        return TREE_FULL
    node = st[meta + TREE_COUNT]
    st[meta + TREE_COUNT] += 1
    row = nodes + PROFILE_NODE * node
    st[row + NODE_PARENT] = parent
    st[row + NODE_FUNCTION] = function
    st[row + NODE_CYCLES] = 0
    st[row + NODE_CALLS] = 0
    st[row + NODE_RETURNS_TO] = -1
    st[table + h] = node + 1
    return node


@njit
def _parent(st, meta, node):
    """A node's parent; the full node's is where the tree ran out of room."""
    if node == TREE_FULL:
        return st[meta + TREE_FULL_FROM]
    return st[meta + PROFILE_TREE_META + PROFILE_NODE * node + NODE_PARENT]


@njit
def _return_address(st):
    """Where the call that just branched returns to: after the BL/BLX that ended the last block."""
    at = st[PREVIOUS_BRANCH_AT]
    return at + 4 if _kind_at(st, at + 2) == KIND_CONTINUATION else at + 2


@njit
def _tree_call(st, meta, node, function, returns_to):
    """One level down: `function` called from `node`, returning to `returns_to` (-1: unknown)."""
    child = _tree_child(st, meta, node, function)
    row = meta + PROFILE_TREE_META + PROFILE_NODE * child
    st[row + NODE_CALLS] += 1
    st[row + NODE_RETURNS_TO] = returns_to
    return child


@njit
def _tree_up(st, meta, at, function):
    """The nearest node of `function` from `at` up, or -1."""
    while at != TREE_ROOT:
        if st[meta + PROFILE_TREE_META + PROFILE_NODE * at + NODE_FUNCTION] == function:
            return at
        at = _parent(st, meta, at)
    return -1


@njit
def _tree_move(st, meta, node, function, call, returning, event, n):
    """Where the call tree goes from `node` when `function` starts running, and whether that
    was a call: a call goes one level down; a return (to the address the current call returns
    to, or to a function on the current path) goes back up; a jump into another function
    replaces the current one. Exception entry and return overhead sits on a boundary node
    between the interrupted code and the handler; the code an exception return resumes is
    found above the boundary."""
    nodes = meta + PROFILE_TREE_META
    exceptions = n + PROFILE_EXCEPTIONS
    sleep = n + PROFILE_SLEEP
    kind = st[nodes + PROFILE_NODE * node + NODE_FUNCTION]
    if kind == sleep and event != EVENT_SLEEP:
        node = _parent(st, meta, node)  # woken up
        kind = st[nodes + PROFILE_NODE * node + NODE_FUNCTION]
    if event == EVENT_ENTRY:
        if kind == exceptions:
            return node, False  # tail-chained: still between the interrupted code and a handler
        return _tree_call(st, meta, node, exceptions, -1), False
    if event == EVENT_RETURN:
        at = node
        while at != TREE_ROOT and st[nodes + PROFILE_NODE * at + NODE_FUNCTION] != exceptions:
            at = _parent(st, meta, at)
        return (at if at != TREE_ROOT else node), False
    if event == EVENT_SLEEP:
        if kind == sleep:
            return node, False
        return _tree_child(st, meta, node, sleep), False
    if st[meta + TREE_RESUMING] != 0:  # back from an exception: the code it interrupted goes on
        st[meta + TREE_RESUMING] = 0
        if kind == exceptions:
            node = _parent(st, meta, node)
        found = _tree_up(st, meta, node, function)
        if found >= 0:
            return found, False
        if call:  # (`call` here: at the function's first instruction) interrupted on the way in
            return _tree_call(st, meta, node, function, -1), True
        return _tree_child(st, meta, _parent(st, meta, node) if node != TREE_ROOT else node, function), False
    if call:
        if (st[ENDS_IN_BRANCH] & CALL_FLAG) != 0:
            return _tree_call(st, meta, node, function, _return_address(st)), True
        # a tail call returns where the function that jumped would have
        return _tree_call(st, meta, node, function, st[nodes + PROFILE_NODE * node + NODE_RETURNS_TO]), True
    found = _tree_up(st, meta, _parent(st, meta, node) if returning else node, function)
    if found >= 0:
        return found, False
    if kind == exceptions or node == TREE_ROOT:
        return _tree_child(st, meta, node, function), False
    return _tree_child(st, meta, _parent(st, meta, node), function), False


@njit
def _log_move(st, meta, node):
    """The call log: the tree went to `node` at this cycle (the first TREE_LOG_CAPACITY moves)."""
    count = st[meta + TREE_LOG_COUNT]
    if count < st[meta + TREE_LOG_CAPACITY]:
        row = st[meta + TREE_LOG] + CALL_LOG_ROW * count
        st[row + LOG_CYCLE] = st[CYCLES]
        st[row + LOG_NODE] = node
        st[meta + TREE_LOG_COUNT] = count + 1
    else:
        st[meta + TREE_LOG_DROPPED] += 1


@njit
def profile_switch(st, function, address, event):
    """The cycles since the last switch belong to what ran; `function` runs from now. A call:
    entering a function at its first instruction from another one, or by BL/BLX (recursion);
    a return: reaching the address the current call returns to."""
    t = st[PROFILE_TABLE]
    n = st[t]
    previous = st[PROFILE_FUNCTION]
    meta = t + 1 + 4 * n + 2 * PROFILE_EXTRA
    node = st[meta + TREE_NODE]
    at_start = function >= 0 and function < n and st[t + 1 + function] == address
    resuming = event == EVENT_CODE and st[meta + TREE_RESUMING] != 0
    call = at_start and (function != previous or (st[ENDS_IN_BRANCH] & CALL_FLAG) != 0)
    returning = event == EVENT_CODE and address == st[meta + PROFILE_TREE_META + PROFILE_NODE * node + NODE_RETURNS_TO]
    if function == previous and not call and not returning and not resuming and event == EVENT_CODE:
        return  # the same function goes on: its cycles keep adding up since PROFILE_SINCE
    spent = st[CYCLES] - st[PROFILE_SINCE]
    energy = st[P_ENERGY_CORE] + st[P_ENERGY_SRAM] + st[P_ENERGY_FLASH]
    if previous >= 0:
        st[t + 1 + 2 * n + previous] += spent
        st[st[meta + TREE_ENERGY] + previous] += energy - st[P_PROFILE_SINCE]
    st[P_PROFILE_SINCE] = energy
    st[meta + PROFILE_TREE_META + PROFILE_NODE * node + NODE_CYCLES] += spent
    if event == EVENT_RETURN:
        st[meta + TREE_RESUMING] = 1
    if event != EVENT_FLUSH:
        moved, called = _tree_move(st, meta, node, function, at_start if resuming else call, returning, event, n)
        st[meta + TREE_NODE] = moved
        if moved != node and st[meta + TREE_LOG] != 0:
            _log_move(st, meta, moved)
        if called:
            st[t + 1 + 2 * n + n + PROFILE_EXTRA + function] += 1
    st[PROFILE_FUNCTION] = function
    st[PROFILE_SINCE] = st[CYCLES]


@njit
def _line_slot(st, meta, address):
    """The line counters' slot of `address` (two per halfword), or -1 outside the ranges."""
    table = meta + PROFILE_TREE_META + (PROFILE_NODE + 2) * st[meta + TREE_CAPACITY]
    for r in range(st[meta + TREE_LINE_RANGES]):
        start = st[table + LINE_RANGE * r + LR_START]
        if start <= address <= st[table + LINE_RANGE * r + LR_END]:
            return st[table + LINE_RANGE * r + LR_COUNTERS] + LINE_COUNTER * ((address - start) >> 1)
    return -1


@njit
def line_flush(st, meta):
    """What the block that ran last cost beyond its static cycles (waits, refills, start
    adjustments) goes to its first instruction."""
    slot = st[meta + TREE_LINE_SLOT]
    if slot > 0:
        st[slot + LC_EXTRA_CYCLES] += st[CYCLES] - st[meta + TREE_LINE_START] - st[meta + TREE_LINE_STATIC]
    st[meta + TREE_LINE_SLOT] = 0


@njit
def _count_lines(st, meta, entry, address, size):
    """Per halfword, how often it ran, as differences (+1 at a block's start, -1 at its end;
    the running sum gives the counts), and the extra cycles of the blocks starting there."""
    line_flush(st, meta)
    if st[entry + E_LINE_SLOT] == 0:
        first = _line_slot(st, meta, address)
        end = _line_slot(st, meta, address + size)
        if first < 0 or end < 0 or end - first != LINE_COUNTER * (size >> 1):
            first = -1
        st[entry + E_LINE_SLOT] = first
        st[entry + E_LINE_END] = end
    first = st[entry + E_LINE_SLOT]
    if first > 0:
        st[first + LC_RUNS] += 1
        st[st[entry + E_LINE_END] + LC_RUNS] -= 1
        st[meta + TREE_LINE_SLOT] = first
        st[meta + TREE_LINE_END] = st[entry + E_LINE_END]
        st[meta + TREE_LINE_START] = st[CYCLES]
        st[meta + TREE_LINE_STATIC] = st[entry + E_CYCLES]


@njit
def line_settle(st, meta, block, pc, static_prefix):
    """The block that ran last stopped at `pc`: only the halfwords before it ran."""
    first = st[meta + TREE_LINE_SLOT]
    if first > 0:
        st[st[meta + TREE_LINE_END] + LC_RUNS] += 1
        end = first + LINE_COUNTER * ((pc - block) >> 1)
        st[end + LC_RUNS] -= 1
        st[meta + TREE_LINE_END] = end
        st[meta + TREE_LINE_STATIC] = static_prefix


@njit
def _profile(st, entry, address, size):
    if st[entry + E_FUNCTION] == 0:
        st[entry + E_FUNCTION] = _function_of(st, address) + 1
    profile_switch(st, st[entry + E_FUNCTION] - 1, address, EVENT_CODE)
    t = st[PROFILE_TABLE]
    meta = t + 1 + 4 * st[t] + 2 * PROFILE_EXTRA
    if st[meta + TREE_LINE_RANGES] != 0:
        _count_lines(st, meta, entry, address, size)
