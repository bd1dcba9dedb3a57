"""Memory timing: flash ports (wait states, prefetch, fetch buffer), their instruction and
data caches, and RAM behind a data cache. flash_timing.py configures the ports."""
from __future__ import annotations

import numpy as np

from .encoding import LITERAL_INDEX_SHIFT, LITERAL_OFFSET_BIAS, LITERAL_OFFSET_SHIFT
from .jit import njit
from .layout import (
    CACHE_SETS, CACHE_TAGS, CACHE_WAYS, CPI_TOTAL, CYCLES, DATA_WAIT_TOTAL, E_FETCH_BEFORE_LAST, E_FETCH_KNOWN,
    E_FETCH_FIRST, E_FETCH_LINES, E_FETCH_PORT, E_FETCH_SLOTS, E_FETCH_TAGS_SEEN, E_FETCH_USES_SEEN,
    FAST_FETCH_LINES, FIELDS, FL_ACTIVE, FL_BLOCK_LINES, FL_BLOCK_START, FL_BUFFER_LINE, FL_CACHE_LINE,
    FL_CONTENTION_TOTAL, FL_CURRENT, FL_DATA_WAIT, FL_DC_HITS, FL_DC_MISSES, FL_DC_ON, FL_DC_WRITEBACKS,
    FL_FETCH_TOTAL, FL_FETCH_WAIT, FL_IC_HITS, FL_IC_MISSES, FL_IC_TAG_CHANGES, FL_IC_USES, FL_IC_ON,
    FL_LINE_RECORDS, FL_LINE_SHIFT, FL_NO_LINE_BUFFER, FL_PORTS, FL_PORT_COUNT, FL_PORT_SLOTS, FL_PREFETCH,
    FL_PREFETCH_DELAY, FL_PREFETCH_LINE, FL_PREFETCH_READY, FL_LITERAL_RANGE, FL_RAM_WAIT,
    FL_RANGE, FL_RANGE_COUNT, FL_RANGE_TABLE, FL_RECORD, FL_USE_CLOCK, FL_WRITEBACK_WAIT, FL_BLOCK_LITERALS,
    FL_LITERAL_RANGE_COUNT, FL_LITERAL_RANGES, F_CYCLES, F_LITERAL, LINE_LAST_USE, LINE_TAG, LITERAL_RECORD,
    LITERAL_RECORD_AREA, LIT_INSN, LIT_MISSED, LIT_PORT, LIT_WAIT, LSU_TOTAL, P_COEF_FLASH, P_ENERGY_FLASH,
    MISS_STALE, P_FLASH_READS, RANGE_END, RANGE_LINE_OFFSET, RANGE_START, REC_ADDRESS,
    REC_CONTENTION, REC_MISSED, REC_STALL, WINDOW, WINDOW_TABLE, WINDOW_USE_START, W_BASE, W_SIZE, W_TABLES)
from .tables import _range_sum, _value_at, _window_of


@njit
def flash_offset(st, g, address):
    """The line offset `address` reads through the port at `g`, or -1 outside its ranges."""
    for i in range(st[g + FL_RANGE_COUNT]):
        entry = g + FL_RANGE_TABLE + FL_RANGE * i
        if st[entry + RANGE_START] <= address < st[entry + RANGE_END]:
            return address - st[entry + RANGE_START] + st[entry + RANGE_LINE_OFFSET]
    return -1


@njit
def flash_port(st, address):
    """The block of the port whose ranges hold `address`, or -1."""
    for k in range(st[FL_PORT_COUNT]):
        g = FL_PORTS + k * FL_PORT_SLOTS
        if flash_offset(st, g, address) >= 0:
            return g
    return -1


@njit
def set_index(value, sets):
    """`value` modulo `sets` (`sets` >= 1; Python's floor modulo, as `%`), with a mask when
    `sets` is a power of two (every cache and branch predictor of the boards): a division costs
    tens of cycles on every data read and branch."""
    if sets & (sets - 1) == 0:
        return value & (sets - 1)
    return value % sets


@njit
def cache_set(st, g, side, line):
    """(first tag slot, ways) of the set `line` maps to in the port's cache at `side`
    (FL_IC_ON or FL_DC_ON: enabled, sets, ways, tag array follow it)."""
    ways = st[g + side + CACHE_WAYS]
    return st[g + side + CACHE_TAGS] + FL_CACHE_LINE * ways * set_index(line, st[g + side + CACHE_SETS]), ways


@njit
def cache_find(st, first, ways, line):
    """(the slot holding `line`, clean or dirty, or -1; on a miss the set's least recently used
    slot: the first of them, an empty one first). A slot is the line + 1 (negated while dirty; 0:
    empty), then its last use. The tags are compared before any last use is read: most look-ups
    hit."""
    for way in range(ways):
        slot = first + FL_CACHE_LINE * way
        if abs(st[slot + LINE_TAG]) == line + 1:
            return slot, first
    oldest = first
    for way in range(1, ways):
        slot = first + FL_CACHE_LINE * way
        if st[slot + LINE_LAST_USE] < st[oldest + LINE_LAST_USE]:
            oldest = slot
    return -1, oldest


@njit
def instruction_lines_changed(st, tags):
    """An instruction cache's last uses changed, and with `tags` its tags too: what blocks noted
    of their lines (_fetch) must be checked again."""
    st[FL_IC_USES] += 1
    if tags:
        st[FL_IC_TAG_CHANGES] += 1


@njit
def flash_cache_access(st, g, line):
    """Look `line` up in the port's instruction cache (set-associative, LRU); on a miss it
    replaces the set's oldest line."""
    first, ways = cache_set(st, g, FL_IC_ON, line)
    st[FL_USE_CLOCK] += 1
    slot, oldest = cache_find(st, first, ways, line)
    if slot >= 0:
        st[slot + LINE_LAST_USE] = st[FL_USE_CLOCK]
        instruction_lines_changed(st, False)
        return True
    instruction_lines_changed(st, True)
    st[oldest + LINE_TAG] = line + 1
    st[oldest + LINE_LAST_USE] = st[FL_USE_CLOCK]
    return False


@njit
def flash_cache_find(st, g, line):
    """The tag slot holding `line` in the port's instruction cache, or -1."""
    first, ways = cache_set(st, g, FL_IC_ON, line)
    return cache_find(st, first, ways, line)[0]


@njit
def cache_forget(st, g, side, line):
    """Take `line` out of the port's cache at `side` (FL_IC_ON or FL_DC_ON)."""
    first, ways = cache_set(st, g, side, line)
    slot = cache_find(st, first, ways, line)[0]
    if slot >= 0:
        st[slot + LINE_TAG] = 0
        st[slot + LINE_LAST_USE] = 0
        instruction_lines_changed(st, True)  # (or a data line: rare, the check is cheap)


@njit
def flash_cache_forget(st, g, line):
    """Take `line` out of the port's instruction cache."""
    cache_forget(st, g, FL_IC_ON, line)


@njit
def _flash_read(st):
    st[P_FLASH_READS] += 1
    st[P_ENERGY_FLASH] += st[P_COEF_FLASH]


@njit
def flash_fetch_line(st, g, line, now):
    """Fetch `line` for the instruction needed at cycle `now`: returns (stall, contention, missed)."""
    if line == st[g + FL_BUFFER_LINE]:
        return 0, 0, False
    stall = 0
    contention = 0
    missed = False
    from_flash = False
    if st[g + FL_IC_ON] != 0 and flash_cache_access(st, g, line):
        st[g + FL_IC_HITS] += 1
    else:
        from_flash = True
        if st[g + FL_IC_ON] != 0:
            st[g + FL_IC_MISSES] += 1
            missed = True
        if st[g + FL_PREFETCH] != 0 and line == st[g + FL_PREFETCH_LINE]:
            stall = max(0, st[g + FL_PREFETCH_READY] + st[g + FL_PREFETCH_DELAY] - now)
            contention = stall - max(0, st[g + FL_PREFETCH_READY] - now)
        else:
            stall = st[g + FL_FETCH_WAIT]
            _flash_read(st)
    st[g + FL_BUFFER_LINE] = line
    if st[g + FL_PREFETCH] != 0:
        if from_flash:  # the next line, read ahead (counted after a miss only, as the fast path does)
            _flash_read(st)
        st[g + FL_PREFETCH_LINE] = line + 1
        st[g + FL_PREFETCH_READY] = now + stall + st[g + FL_FETCH_WAIT] + 1
        st[g + FL_PREFETCH_DELAY] = 0
    return stall, contention, missed


@njit
def data_cache_access(st, g, line, write):
    """Look `line` up in the port's data cache (LRU, as flash_cache_access); a write leaves the
    line dirty (its tag stored negated: write-back, write-allocate). Returns (hit, whether the
    line a miss replaced was dirty); counts the hit or miss and the write-back, and notes in
    MISS_STALE whether a miss of a cache that also holds code replaced a line not used since the
    window of sampled timing opened, or an empty one (data_sampling.py)."""
    first, ways = cache_set(st, g, FL_DC_ON, line)
    st[FL_USE_CLOCK] += 1
    slot, oldest = cache_find(st, first, ways, line)
    shared = st[g + FL_DC_ON + CACHE_TAGS] == st[g + FL_IC_ON + CACHE_TAGS]  # (also the instruction cache)
    if slot >= 0:
        st[slot + LINE_LAST_USE] = st[FL_USE_CLOCK]
        if shared:
            instruction_lines_changed(st, write and st[slot + LINE_TAG] > 0)
        if write:
            st[slot + LINE_TAG] = -(line + 1)
        st[g + FL_DC_HITS] += 1
        return True, False
    if shared:
        instruction_lines_changed(st, True)
    st[MISS_STALE] = 1 if shared and st[oldest + LINE_LAST_USE] <= st[WINDOW_USE_START] else 0
    dirty = st[oldest + LINE_TAG] < 0
    st[oldest + LINE_TAG] = -(line + 1) if write else line + 1
    st[oldest + LINE_LAST_USE] = st[FL_USE_CLOCK]
    st[g + FL_DC_MISSES] += 1
    if dirty:
        st[g + FL_DC_WRITEBACKS] += 1
    return False, dirty


@njit
def ram_access(st, g, address, write):
    """Wait cycles of a data access to RAM behind the data cache of the port at `g` (docs/timing.md,
    Cortex-M7 memory): a read waits on a miss, or always with the cache off, and longer when the
    line it replaces is dirty; a write waits for nothing (the store buffer takes it) but allocates."""
    if st[g + FL_DC_ON] == 0:
        return 0 if write else st[g + FL_RAM_WAIT]
    hit, dirty = data_cache_access(st, g, address >> st[g + FL_LINE_SHIFT], write)
    if hit or write:
        return 0
    return st[g + FL_RAM_WAIT] + (st[g + FL_WRITEBACK_WAIT] if dirty else 0)


@njit
def _flash_data_access(st, g, offset):
    """(wait cycles, data cache outcome) of a data read at port offset `offset` (flash_offset)
    through the port at `g`: the outcome is the line it missed and allocated + 1, 0 on a hit, -1
    with no data cache."""
    line = offset >> st[g + FL_LINE_SHIFT]
    writeback = 0
    outcome = -1
    if st[g + FL_DC_ON] != 0:
        hit, dirty = data_cache_access(st, g, line, False)
        if hit:
            return 0, 0
        outcome = line + 1
        if dirty:  # the flash line replaces RAM data written since it was cached
            writeback = st[g + FL_WRITEBACK_WAIT]
    _flash_read(st)
    wait = st[g + FL_DATA_WAIT]
    if st[g + FL_PREFETCH] != 0 and st[g + FL_PREFETCH_READY] > st[FL_BLOCK_START]:
        st[g + FL_PREFETCH_DELAY] += wait + 1  # the flash serves this read before the prefetch in flight
    return wait + writeback, outcome


@njit
def flash_data_read(st, address):
    """Wait cycles of a data read at `address` (0 outside the flash ports or on a data cache hit)."""
    g = flash_port(st, address)
    if g < 0:
        return 0
    return _flash_data_access(st, g, flash_offset(st, g, address))[0]


@njit
def add_data_wait(st, wait):
    """Add (or, negative, take back) wait cycles of data reads from slow memory (DWT LSUCNT
    counts the extra cycles of loads and stores)."""
    st[CYCLES] += wait
    st[LSU_TOTAL] += wait
    st[DATA_WAIT_TOTAL] += wait


@njit
def transfers(address, size):
    """The reads an access of `size` bytes at `address` makes of an MMIO page: QEMU splits an
    unaligned access into the two aligned ones around it, and each into reads of 4 bytes at most:
    (first address, step, count). Every timed flash data read is counted this way."""
    first = address & ~(size - 1)
    step = min(size, 4)
    return first, step, (1 if first == address else 2) * max(size // 4, 1)


@njit
def in_ranges(array, first, count, stride, address):
    """Whether `address` lies in one of the `count` ranges [RANGE_START, RANGE_END) stored from
    array[first] on, `stride` slots apart (the literal ranges; the TLB fill hook's alias tables,
    whose AL_BEGIN and AL_END are the same two slots)."""
    for i in range(count):
        at = first + stride * i
        if array[at + RANGE_START] <= address < array[at + RANGE_END]:
            return True
    return False


@njit
def time_literals(st, address, size, first_index):
    """Wait cycles of the PC-relative data reads (F_LITERAL: literal loads, TBB/TBH tables) of
    the block [address, address + size) starting now, in program order, after its fetches: what
    a memory hook would see as it runs. A table branch's entry depends on its index register:
    `first_index` is its value when the block's first instruction is one (else -1, and a table
    read is timed at the table's start). Each read is recorded (LITERAL_RECORD_AREA) so a stop
    inside the block can take back those after it."""
    count = 0
    waited = 0
    insn = address
    end = address + size
    w = _window_of(st, address)
    window_base = st[WINDOW_TABLE + WINDOW * w + W_BASE] if w >= 0 else 0
    inside = w >= 0 and end <= window_base + st[WINDOW_TABLE + WINDOW * w + W_SIZE]
    row = (st[WINDOW_TABLE + WINDOW * w + W_TABLES] + FIELDS * ((address - window_base) >> 1) + F_LITERAL
           if inside else 0)
    while insn < end:
        info = st[row] if inside else _value_at(st, insn, F_LITERAL)  # (one window holds most blocks)
        row += FIELDS
        if info & 1:
            pc = insn + 4
            base = pc & ~3 if info & 2 else pc
            size_read = np.int64(1) << ((info >> 2) & 3)
            at = base + (info >> LITERAL_OFFSET_SHIFT) - LITERAL_OFFSET_BIAS
            if insn == address and first_index >= 0 and (info >> LITERAL_INDEX_SHIFT) & 15:
                at += first_index * size_read
            for k in range(((info >> 4) & 1) + 1):
                first, step, reads = transfers(at + 4 * k, size_read)
                for j in range(reads):
                    read_at = first + step * j
                    if not in_ranges(st, FL_LITERAL_RANGES, st[FL_LITERAL_RANGE_COUNT], FL_LITERAL_RANGE, read_at):
                        continue
                    g = flash_port(st, read_at)
                    if g < 0:
                        continue
                    wait, outcome = _flash_data_access(st, g, flash_offset(st, g, read_at))
                    record = LITERAL_RECORD_AREA + LITERAL_RECORD * count
                    st[record + LIT_INSN] = insn
                    st[record + LIT_WAIT] = wait
                    st[record + LIT_PORT] = g
                    st[record + LIT_MISSED] = outcome
                    count += 1
                    waited += wait
        insn += 2
    st[FL_BLOCK_LITERALS] = count
    return waited


@njit
def add_fetch_waits(st, waited, contended, sign):
    """Add (1) or take back (-1) instruction-fetch waits, `contended` of them lost to data reads
    of the same flash. DWT CPICNT counts instruction fetch stalls (ARMv7-M ARM C1.8.8)."""
    st[CYCLES] += sign * waited
    st[CPI_TOTAL] += sign * waited
    st[FL_FETCH_TOTAL] += sign * (waited - contended)
    st[FL_CONTENTION_TOTAL] += sign * contended


@njit
def _fetch_block(st, g, address, size, offset, start):
    """Instruction-fetch waits of a block read through the port at `g`: each line it touches,
    in order, is needed when execution reaches it (start + cycles of the instructions before +
    waits so far). Lines that waited or missed the cache are recorded, so a stop inside the
    block can undo what follows the stop."""
    shift = st[g + FL_LINE_SHIFT]
    first = offset >> shift
    last = (offset + size - 1) >> shift
    records = st[FL_LINE_RECORDS]
    count = 0
    waited = 0
    contended = 0
    for line in range(first, last + 1):
        line_address = address if line == first else address + (line << shift) - offset
        before = 0 if line == first else _range_sum(st, address, line_address, F_CYCLES)
        stall, contention, missed = flash_fetch_line(st, g, line, start + before + waited)
        if stall != 0 or missed:
            record = records + FL_RECORD * count
            st[record + REC_ADDRESS] = line_address
            st[record + REC_STALL] = stall
            st[record + REC_CONTENTION] = contention
            st[record + REC_MISSED] = line + 1 if missed else 0
            count += 1
        waited += stall
        contended += contention
    st[FL_BLOCK_LINES] = count
    add_fetch_waits(st, waited, contended, 1)
    return count == 0 and st[g + FL_IC_ON] != 0


@njit
def _tag_slot(st, entry, i):
    """The tag slot _remember_hits noted for the block's line `i` (two 32-bit slots an int64)."""
    return (st[entry + E_FETCH_SLOTS + (i >> 1)] >> (32 * (i & 1))) & 0xFFFFFFFF


@njit
def _remember_hits(st, g, entry, address, size, offset):
    """Every line of the block was in the instruction cache (or the fetch buffer): note where,
    so while those slots still hold its lines the block's fetch costs only these look-ups."""
    shift = st[g + FL_LINE_SHIFT]
    first = offset >> shift
    lines = ((offset + size - 1) >> shift) - first + 1
    if lines > FAST_FETCH_LINES:
        return
    for i in range(lines):
        slot = flash_cache_find(st, g, first + i)
        if slot < 0:
            return
        at = entry + E_FETCH_SLOTS + (i >> 1)
        st[at] = slot if (i & 1) == 0 else st[at] | slot << 32
    last_address = address if lines == 1 else address + ((first + lines - 1) << shift) - offset
    st[entry + E_FETCH_FIRST] = first
    st[entry + E_FETCH_LINES] = lines
    st[entry + E_FETCH_BEFORE_LAST] = _range_sum(st, address, last_address, F_CYCLES) if lines > 1 else 0
    st[entry + E_FETCH_KNOWN] = 1
    st[entry + E_FETCH_TAGS_SEEN] = st[FL_IC_TAG_CHANGES]
    st[entry + E_FETCH_USES_SEEN] = -1


@njit
def _fetch_hits(st, g, entry, start):
    """What _fetch_block does for a block whose lines are all cached: no waits; the lines become
    the most recently used, the fetch buffer holds the last one and prefetch moves past it. (Only
    the first line can be the one already in the buffer: each later line follows the one before.)
    When no instruction cache line was used since this block last used all its lines here, they
    are still the most recently used, in order, and using them again leaves the order as it is
    (replacement compares last uses only, and a window of sampled timing opening counts as a use:
    window_opened), so a loop of one block skips that work."""
    first = st[entry + E_FETCH_FIRST]
    lines = st[entry + E_FETCH_LINES]
    skipped = 1 if first == st[g + FL_BUFFER_LINE] else 0
    if skipped == lines:
        return
    if st[entry + E_FETCH_USES_SEEN] != st[FL_IC_USES]:
        clock = st[FL_USE_CLOCK]
        for i in range(skipped, lines):
            clock += 1
            st[_tag_slot(st, entry, i) + LINE_LAST_USE] = clock
        st[FL_USE_CLOCK] = clock
        instruction_lines_changed(st, False)
        st[entry + E_FETCH_USES_SEEN] = st[FL_IC_USES] if skipped == 0 else -1
    st[g + FL_IC_HITS] += lines - skipped
    last = first + lines - 1
    st[g + FL_BUFFER_LINE] = last
    if st[g + FL_PREFETCH] != 0:
        st[g + FL_PREFETCH_LINE] = last + 1
        st[g + FL_PREFETCH_READY] = start + (st[entry + E_FETCH_BEFORE_LAST] if lines > 1 else 0) \
            + st[g + FL_FETCH_WAIT] + 1
        st[g + FL_PREFETCH_DELAY] = 0


@njit
def _still_cached(st, entry):
    """Whether the tag slots _remember_hits noted still hold the block's lines (a miss elsewhere
    replaces one slot, a cache reset or line invalidation clears them)."""
    first = st[entry + E_FETCH_FIRST]
    for i in range(st[entry + E_FETCH_LINES]):
        if st[_tag_slot(st, entry, i) + LINE_TAG] != first + i + 1:
            return False
    return True


@njit
def _fetch(st, entry, address, size, start, out_of_sequence):
    """The flash fetch model for the block starting now, through whichever port holds it."""
    st[FL_CURRENT] = -1
    if st[entry + E_FETCH_KNOWN] != 0 and (st[entry + E_FETCH_TAGS_SEEN] == st[FL_IC_TAG_CHANGES]
                                           or _still_cached(st, entry)):  # all its lines are cached, as last time
        g = st[entry + E_FETCH_PORT]
        if st[g + FL_ACTIVE] != 0 and st[g + FL_IC_ON] != 0:
            st[entry + E_FETCH_TAGS_SEEN] = st[FL_IC_TAG_CHANGES]
            st[FL_CURRENT] = g
            if out_of_sequence and st[g + FL_NO_LINE_BUFFER] != 0:
                st[g + FL_BUFFER_LINE] = -1
            _fetch_hits(st, g, entry, start)
            return
    g = st[entry + E_FETCH_PORT]
    if g < 0 or st[g + FL_ACTIVE] == 0:
        return
    st[FL_CURRENT] = g
    if out_of_sequence and st[g + FL_NO_LINE_BUFFER] != 0:
        st[g + FL_BUFFER_LINE] = -1
    offset = flash_offset(st, g, address)
    if _fetch_block(st, g, address, size, offset, start):
        _remember_hits(st, g, entry, address, size, offset)
