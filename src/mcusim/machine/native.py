"""The native (numba) block hook and the shared state it reads and writes.

One int64 numpy buffer holds everything the hook touches: a header of counters and
requests, a table of code windows, and per-window per-halfword decode tables (KIND and
prefix sums, see FIELDS). The hook runs at the start of every translated block, before the block
executes: it checks the deadline, looks up the block's cost as a prefix-sum difference and
adds it. When it stops emulation (deadline, undecoded code, a self-loop, FP with the FPU
disabled, a block that would pass the cycle limit) the block has not executed and is not counted.
"""
from __future__ import annotations

import ctypes

import llvmlite.binding

from . import numba_cache

CACHE = numba_cache.choose(__file__)  # (before numba compiles or caches anything below)

import numba  # noqa: E402
import numpy as np
from numba import carray, types
from unicorn.arm_const import UC_ARM_REG_EPSR
from unicorn.unicorn_py3.unicorn import uclib


# Flash timing (flash_timing.py configures it; docs/timing.md "Memory timing"): header slots
# [FL_FIRST_SLOT, FL_LAST_SLOT). A few are shared; then one block of FL_PORT_SLOTS per flash
# port (a path from the core to the flash with its own caches: e.g. the STM32F7's AXIM and
# ITCM interfaces), whose slots below are offsets into the block.
FL_FIRST_SLOT = 72
FL_PORT_COUNT = 72        # ports in use
FL_CURRENT = 73           # the block of the port the executing block reads (-1: none)
FL_FETCH_TOTAL = 74       # cycles of instruction-fetch waits
FL_CONTENTION_TOTAL = 75  # cycles instruction fetches lost to data reads of the same flash
FL_USE_CLOCK = 76         # counts cache accesses (least-recently-used replacement)
FL_BLOCK_START = 77       # cycle count when the executing block began
FL_BLOCK_LINES = 78       # per-line records of the executing block (see FL_LINE_RECORDS)
FL_LINE_RECORDS = 79      # offset of the per-line records in the buffer
FL_EPOCH = 80             # counts changes of any instruction cache's contents (a block whose lines all
#                           hit stays all hits while it is unchanged: the block hook's fast path)
FL_PORTS = 84             # the first port's block
FL_MAX_PORTS = 2
# Per port, offsets into its block:
FL_ACTIVE = 0             # 1 while instruction fetch from flash can stall (the block hook runs the model)
FL_RANGE_COUNT = 1        # address ranges that read through the port: (start, end, line offset of start)
FL_RANGE_TABLE = 2        # up to FL_MAX_RANGES triples
FL_MAX_RANGES = 4
FL_LINE_SHIFT = 14        # log2 of the flash line (one read)
FL_FETCH_WAIT = 15        # cycles an instruction fetch from flash waits
FL_DATA_WAIT = 16         # cycles a data read from flash waits
FL_PREFETCH = 17          # 1: the next sequential line is read ahead
FL_IC_ON = 18             # instruction cache: enabled, sets, ways, tag array
FL_IC_SETS = 19
FL_IC_WAYS = 20
FL_IC_TAGS = 21
FL_DC_ON = 22             # data cache: enabled, sets, ways, tag array (the instruction cache's: unified)
FL_DC_SETS = 23
FL_DC_WAYS = 24
FL_DC_TAGS = 25
FL_BUFFER_LINE = 26       # the line the fetch buffer holds (-1: none)
FL_PREFETCH_LINE = 27     # the line being prefetched (-1: none) ...
FL_PREFETCH_READY = 28    # ... the cycle it arrives ...
FL_PREFETCH_DELAY = 29    # ... and how long data reads held it up
FL_IC_HITS = 30
FL_IC_MISSES = 31
FL_DC_HITS = 32
FL_DC_MISSES = 33
FL_NO_LINE_BUFFER = 34    # 1: a branch target is read again even if it is in the line last read
FL_RAM_COUNT = 36         # RAM ranges whose data goes through the port's data cache: (start, end) pairs
FL_RAM_TABLE = 37         # up to FL_MAX_RANGES pairs (lines there are numbered by absolute address)
FL_RAM_WAIT = 45          # cycles a data read from those ranges waits (a miss, or the data cache off)
FL_WRITEBACK_WAIT = 46    # cycles a read miss also waits when the line it replaces is dirty
FL_DC_WRITEBACKS = 47     # dirty data cache lines written back (replaced or cleaned)
FL_PORT_SLOTS = 48
FL_LAST_SLOT = FL_PORTS + FL_MAX_PORTS * FL_PORT_SLOTS

FL_MAX_CACHE_LINES = 2048  # per cache: sets x ways
FL_CACHE_SLOTS = 2 * FL_MAX_CACHE_LINES  # per line: tag + 1 (0 = empty), last use
FL_MAX_BLOCK_LINES = 512  # a translated block stays inside one 1 KB page: 512 lines of 2 bytes at most
FL_RECORD = 4             # per line the executing block fetched: address, stall, contention, missed line + 1 or 0
FL_AREA_SLOTS = FL_MAX_PORTS * 2 * FL_CACHE_SLOTS + FL_RECORD * FL_MAX_BLOCK_LINES  # after the block cache


# Header slots.
CYCLES = 0
INSTRUCTIONS = 1
DEADLINE = 2          # stop before the first block that starts at cycles >= DEADLINE
STOP_REASON = 3
STOP_ADDRESS = 4
STOP_SIZE = 5
BLOCK_ADDRESS = 6     # the block executing now (last one the hook let run)
BLOCK_SIZE = 7
LAST_WINDOW = 8       # the window of the last block (checked first)
FPU_ENABLED = 10
WINDOW_COUNT = 11
PENDING_MASKED = 13   # an enabled exception is pending but masked: stop after unmasking code
WATCH_ISB = 14        # code was decoded from writable memory: stop after an ISB to re-check it
CODE_PC = 15          # PC of the executing instruction, where the exact-PC code hook is installed (else -1)
TOTAL_LENGTH = 12
REFILL_BRANCH = 16    # core data: cycles a taken branch adds (P) ...
REFILL_WIDE_ODD = 17  # ... and again when its target is a 32-bit instruction at an odd halfword
LSU_TOTAL = 18        # DWT LSUCNT / CPICNT / FOLDCNT events, unwrapped
CPI_TOTAL = 19
FOLD_TOTAL = 20
PREDICTOR_WAYS = 21   # branch target address cache ways (PREDICTOR_ENTRIES / PREDICTOR_WAYS sets)
REFILL_TOTAL = 24     # cycles spent refilling the pipeline (taken branches, loads into PC)
ENDS_IN_BRANCH = 25   # F_REFILL of the last instruction of the block that ran last
BLOCK_ADJUSTED = 26   # 1 when the executing block was entered out of sequence (start adjustments applied)
PREVIOUS_UNMASK = 38  # CPSIE/MSR-mask count of the block that ran last
PREVIOUS_ISB = 39     # ISB count of the block that ran last
DIVIDE_TOTAL = 27     # cycles divides took beyond their static minimum
DIVIDE_ZERO = 28      # core data for divide early termination (cores/*.toml)
DIVIDE_SHORT = 29
DIVIDE_BASE = 30
DIVIDE_BITS_PER_CYCLE = 31
DIVIDE_MIN = 32
SCRATCH = 33          # uc_reg_read writes here
PREVIOUS_END = 34     # end address of the block that ran last (kept across Python stops)
INTERLOCK_TOTAL = 35  # address-interlock stall cycles
DATA_WAIT_TOTAL = 36  # wait cycles of data reads from slow memory
LAZY_FP_PENDING = 40  # 1: an exception reserved FP context space lazily (FPCCR.LSPACT); the next
#                       FP instruction stores it, costing LAZY_FP_CYCLES (core data)
LAZY_FP_CYCLES = 41
LAZY_FP_TOTAL = 42    # cycles spent on lazy FP context stores
LAZY_FP_AT = 43       # address of the FP instruction of the executing block that stored it (else -1)
PREDICTOR_ENTRIES = 44  # branch target address cache entries (0: no predictor, the refill rule P)
MISPREDICT_PENALTY = 45
MISPREDICTS = 46      # branches the predictor got wrong ...
PREDICTED = 47        # ... of those it predicted
PREVIOUS_BRANCH_AT = 48  # address of the last instruction of the block that ran last
PROFILE_TABLE = 49    # offset of the function table of the exact profile (0: profiling off), see _profile
PROFILE_FUNCTION = 50  # the function the cycles since PROFILE_SINCE belong to (-1: none yet)
PROFILE_SINCE = 51
SAMPLE_TABLE = 52     # PC sampling (see _take_samples): where the samples go (0: off), ...
SAMPLE_PERIOD = 53    # ... a sample every SAMPLE_PERIOD cycles, ...
SAMPLE_NEXT = 54      # ... the cycle of the next one, ...
SAMPLE_COUNT = 55     # ... how many are stored, ...
SAMPLE_CAPACITY = 56  # ... how many fit, ...
SAMPLE_DROPPED = 57   # ... and how many did not
SAMPLE_BLOCK_START = 58  # the cycle count when the block that ran last started
TRACE_TABLE = 59      # branch trace (see _trace): where the records go (0: off), ...
TRACE_COUNT = 60      # ... how many are stored, ...
TRACE_CAPACITY = 61   # ... how many fit, ...
TRACE_DROPPED = 62    # ... how many did not, ...
TRACE_STATE = 63      # ... waiting for the window (0), recording (1), window over (2), ...
TRACE_FROM = 64       # ... the window: starts at this address (-1: at once) and cycle, ...
TRACE_FROM_CYCLE = 65
TRACE_TO = 66         # ... and ends at this address (-1: never) or cycle
TRACE_TO_CYCLE = 67
TRACE_HELD = 68       # a block whose incoming branch is recorded but which has not run yet (else -1)
COUNTER_EVENTS = 69   # DWT event counter packets (see counter_events): the table (0: no event enabled)
CYCLE_LIMIT = 70      # the run's cycle limit: stop before a block that would reach it before its last instruction
STEP_LIMIT = 71       # stop before the first block that starts with INSTRUCTIONS >= STEP_LIMIT (as DEADLINE)
# Slots [FL_FIRST_SLOT, FL_LAST_SLOT) belong to the flash timing model (flash_timing.py).
# Power accounting (power/accounting.py; docs/power.md): slots from POWER_FIRST_SLOT on. Always
# counted: instructions per class and data words, from the blocks' summaries; the flash line
# reads; the dynamic energy of each rail in femtojoules (class and word energies come from the
# power model's coefficients, set by Python: a block's energy is summed once per summary).
POWER_FIRST_SLOT = FL_LAST_SLOT
CLASS_NAMES = ("alu", "multiply", "simd", "fp", "branch", "load", "store")
P_COUNTS = POWER_FIRST_SLOT           # per class in CLASS_NAMES, then the data words (8 slots)
P_WORDS = P_COUNTS + 7
P_FLASH_READS = P_COUNTS + 8          # flash line reads (instruction lines and data, not cache hits)
P_ENERGY_CORE = P_COUNTS + 9          # femtojoules so far: instruction classes ...
P_ENERGY_SRAM = P_COUNTS + 10         # ... data words ...
P_ENERGY_FLASH = P_COUNTS + 11        # ... flash line reads
P_COEFFICIENTS = P_COUNTS + 12        # femtojoules per class (7), per data word, per flash read (9 slots)
P_COEF_WORD = P_COEFFICIENTS + 7
P_COEF_FLASH = P_COEFFICIENTS + 8
P_SNAPSHOT_TABLE = P_COUNTS + 21      # snapshots of the energies for the power trace (0: off): ...
P_SNAPSHOT_PERIOD = P_COUNTS + 22     # ... one every so many cycles, ...
P_SNAPSHOT_NEXT = P_COUNTS + 23
P_SNAPSHOT_COUNT = P_COUNTS + 24
P_SNAPSHOT_CAPACITY = P_COUNTS + 25
P_SNAPSHOT_DROPPED = P_COUNTS + 26   # times the table was thinned out
P_PROFILE_SINCE = P_COUNTS + 27       # the energy total when the profile last switched function
P_ENABLED = P_COUNTS + 28             # 1: count (a board with a power model, unless turned off)
P_PACKED = P_COUNTS + 29              # the blocks' packed class sums since the last unpack (3 slots) ...
P_PACKED_BLOCKS = P_COUNTS + 32       # ... over this many blocks (unpacked every UNPACK_BLOCKS: no lane overflows)
UNPACK_BLOCKS = 128                   # x at most 8192 data words a block < 2**21
SNAPSHOT = 4                          # per snapshot: cycle, core, sram and flash femtojoules
POWER_LAST_SLOT = P_COUNTS + 33
HEADER_LENGTH = POWER_LAST_SLOT
MAX_WINDOWS = 1024
WINDOW_TABLE = HEADER_LENGTH          # per window: base, size_bytes, offset of its tables
# Block summary cache, direct-mapped by block address: what a block costs, ready to add.
# Entry: address, size, cycles, instructions, counts, stalls, start adjust, start flags,
# F_REFILL of its last instruction, wide first instruction, FP, unmask and ISB counts,
# starts with a self-loop; then what the flash fetch fast path needs (see _fetch_hits).
# Cleared whenever decoding changes the tables.
CACHE_ENTRIES = 4096
E_FETCH_EPOCH = 14     # FL_EPOCH + 1 when every line of the block was found in the instruction cache
E_FETCH_FIRST = 15     # its first flash line, line count, cycles before its last line starts,
E_FETCH_LINES = 16     # and the cache tag slots of its lines
E_FETCH_BEFORE_LAST = 17
E_FETCH_SLOTS = 18
FAST_FETCH_LINES = 4   # blocks of more lines always take the full model
E_LAST_INSN = E_FETCH_SLOTS + FAST_FETCH_LINES  # address of the block's last instruction
E_FETCH_PORT = E_LAST_INSN + 1  # the flash port block its fast path uses
E_FUNCTION = E_FETCH_PORT + 1   # its function in the profile's table + 1 (0: not looked up yet)
E_LINE_SLOT = E_FUNCTION + 1    # its first and end halfword's slots in the line counters (0: not looked up
E_LINE_END = E_FUNCTION + 2     # yet, -1: outside them)
E_CLASSES = E_FUNCTION + 3      # its F_CLASS_A, B and C sums
E_ENERGY_CORE = E_FUNCTION + 6  # its instructions' and data words' energy (femtojoules)
E_ENERGY_SRAM = E_FUNCTION + 7
CACHE_ENTRY = E_FUNCTION + 8
BLOCK_CACHE = WINDOW_TABLE + 3 * MAX_WINDOWS
FLASH_AREA = BLOCK_CACHE + CACHE_ENTRIES * CACHE_ENTRY  # flash cache tags and per-line records
BTAC_AREA = FLASH_AREA + FL_AREA_SLOTS  # per predictor entry: branch address + 1 (0 = empty), target, counter,
BTAC_ENTRY = 4                          # last use (the PREDICTED count then)
MAX_PREDICTOR_ENTRIES = 1024
DATA_START = BTAC_AREA + BTAC_ENTRY * MAX_PREDICTOR_ENTRIES

# STOP_REASON values.
STOP_NONE = 0
STOP_DEADLINE = 1
STOP_DECODE = 2
STOP_SELF_LOOP = 3
STOP_FPU_DISABLED = 4
STOP_UNMASKED = 5
STOP_ISB = 6
STOP_LIMIT = 7        # the block would reach CYCLE_LIMIT before its last instruction: Python runs part of it

# Per-halfword kinds.
KIND_UNKNOWN = 0
KIND_START = 1
KIND_CONTINUATION = 2
KIND_SELF_LOOP = 3    # an instruction start that branches to itself (`b .`)

# Call uc_emu_stop by symbol name (not through a ctypes pointer) so numba can cache the hook.
llvmlite.binding.load_library_permanently(uclib._name)
_uc_emu_stop = types.ExternalFunction("uc_emu_stop", types.int32(types.voidptr))
_uc_reg_read = types.ExternalFunction("uc_reg_read", types.int32(types.voidptr, types.int32, types.intp))
_uc_reg_write = types.ExternalFunction("uc_reg_write", types.int32(types.voidptr, types.int32, types.intp))

BLOCK_HOOK_SIGNATURE = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)


# Per-window tables: for each of the window's halfwords + 1, FIELDS int64 side by side (one
# block's look-ups touch few cache lines). KIND holds the halfword's kind; the cumulative
# fields are prefix sums over the halfwords (value of [a, b) = t[b] - t[a]).
KIND = 0
F_CYCLES = 1
F_INSTRUCTIONS = 2
F_FP = 3          # floating-point instructions (NOCP check while CPACR denies the FPU)
F_UNMASK = 4      # CPSIE / MSR to a priority mask
F_ISB = 5         # ISB: code in RAM may have been rewritten before it
F_COUNTS = 6      # summed, packed: DWT extra load/store cycles (LSUCNT) | other extra cycles (CPICNT) << 21
#                   | folded instructions (FOLDCNT) << 42
F_STALLS = 7      # summed, packed: refill | interlock << 21 | divide << 42 (cycles of each kind)
F_START_ADJUST = 8  # per instruction (not summed): extra cycles when it starts a block
F_START_FLAGS = 9   # per instruction (not summed): what a block start takes back: interlock cycles (bits 0-3),
#                     an IT fold (bit 4), interlock counted as LSU (bit 5) rather than CPI
F_REFILL = 10       # per instruction (not summed): branch kind (1 if taken, 2 always) | fixed refill cycles << 2
#                     | CALL_FLAG for BL/BLX (the exact profile's call tree tells calls from jumps); with a
#                     branch predictor the refill cycles are what a wrong prediction of this branch costs
#                     (0: MISPREDICT_PENALTY), and STATIC_TAKEN marks a direct unconditional branch the
#                     static predictor takes at decode when the BTAC misses, costing the cycles << STATIC_SHIFT
F_DIVIDE = 11       # per instruction (not summed): a divide's operands (see divide_hook), else 0
F_CLASS_A = 12      # summed, packed: instruction classes (power model): alu | multiply << 21 | simd << 42
F_CLASS_B = 13      # fp | branch << 21 | load << 42
F_CLASS_C = 14      # store | data words moved << 21
FIELDS = 15
SUMMED_FIELDS = (F_CYCLES, F_INSTRUCTIONS, F_FP, F_UNMASK, F_ISB, F_COUNTS, F_STALLS, F_CLASS_A, F_CLASS_B, F_CLASS_C)
CALL_FLAG = 1 << 16
REFILL_CYCLES_MASK = (1 << 14) - 1
STATIC_TAKEN = 1 << 17
STATIC_SHIFT = 18
STATIC_CYCLES_MASK = 15
LANE = 21           # packed fields: three 21-bit lanes (a window's sums stay far below 2**21)
LANE_MASK = (1 << LANE) - 1


@numba.njit(cache=CACHE)
def _window_of(st, address):
    w = st[LAST_WINDOW]
    if w < st[WINDOW_COUNT]:
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            return w
    for w in range(st[WINDOW_COUNT]):
        base = st[WINDOW_TABLE + 3 * w]
        if base <= address < base + st[WINDOW_TABLE + 3 * w + 1]:
            st[LAST_WINDOW] = w
            return w
    return -1


@numba.njit(cache=CACHE)
def _kind_at(st, address):
    w = _window_of(st, address)
    if w < 0:
        return KIND_UNKNOWN
    return st[st[WINDOW_TABLE + 3 * w + 2] + FIELDS * ((address - st[WINDOW_TABLE + 3 * w]) >> 1) + KIND]


@numba.njit(cache=CACHE)
def _range_sum(st, start, end, field):
    """Sum of `field` over the instructions in [start, end), across windows; -1 if undecoded."""
    total = 0
    while start < end:
        w = _window_of(st, start)
        if w < 0:
            return -1
        base = st[WINDOW_TABLE + 3 * w]
        size = st[WINDOW_TABLE + 3 * w + 1]
        table = st[WINDOW_TABLE + 3 * w + 2] + field
        chunk_end = min(end, base + size)
        total += st[table + FIELDS * ((chunk_end - base) >> 1)] - st[table + FIELDS * ((start - base) >> 1)]
        start = chunk_end
    return total


@numba.njit(cache=CACHE)
def _value_at(st, address, field):
    """A per-instruction (not summed) field's value at `address`."""
    w = _window_of(st, address)
    if w < 0:
        return 0
    base = st[WINDOW_TABLE + 3 * w]
    return st[st[WINDOW_TABLE + 3 * w + 2] + FIELDS * ((address - base) >> 1) + field]


@numba.njit(cache=CACHE)
def _ends_in_branch(st, end):
    """F_REFILL of the instruction that ends at `end`."""
    last = end - 2
    if _kind_at(st, last) == KIND_CONTINUATION:
        last -= 2
    return _value_at(st, last, F_REFILL)


@numba.njit(cache=CACHE)
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
    base = BTAC_AREA + BTAC_ENTRY * ways * ((branch_at >> 1) % (st[PREDICTOR_ENTRIES] // ways))
    slot = base
    hit = False
    for way in range(ways):
        entry = base + BTAC_ENTRY * way
        if st[entry] == branch_at + 1:
            slot = entry
            hit = True
            break
        if st[entry + 3] < st[slot + 3]:
            slot = entry  # the least recently used (an empty entry first)
    predicted_taken = hit and st[slot + 2] >= 2
    static = not hit and (branch & STATIC_TAKEN) != 0
    cost = 0
    if taken:
        if static:
            correct = True
            cost = (branch >> STATIC_SHIFT) & STATIC_CYCLES_MASK
        else:
            correct = predicted_taken and st[slot + 1] == target
        if hit:
            st[slot + 2] = min(3, st[slot + 2] + 1)
        else:
            st[slot] = branch_at + 1
            st[slot + 2] = 2
        st[slot + 1] = target
    else:
        correct = not predicted_taken and not static
        if hit:
            st[slot + 2] = max(0, st[slot + 2] - 1)
    st[PREDICTED] += 1
    if taken or hit:
        st[slot + 3] = st[PREDICTED]
    if not correct:
        cost = (branch >> 2) & REFILL_CYCLES_MASK
        if cost == 0:
            cost = st[MISPREDICT_PENALTY]
        st[MISPREDICTS] += 1
    st[CYCLES] += cost
    st[CPI_TOTAL] += cost
    st[REFILL_TOTAL] += cost


# The exact profile's table (at PROFILE_TABLE): n, then n function starts and n ends (sorted),
# then n + PROFILE_EXTRA exclusive-cycle totals and as many call counts. The extra rows collect
# code outside every function, exception entry and return, and sleep. Then the call tree: its
# current node, node count, capacity and calls that found it full (PROFILE_TREE_META slots),
# the nodes (parent, function, exclusive cycles, calls, return address of the last call each)
# and a hash table of (parent, function) -> node + 1 with twice as many slots as nodes.
PROFILE_EXTRA = 3
PROFILE_UNKNOWN, PROFILE_EXCEPTIONS, PROFILE_SLEEP = 0, 1, 2  # offsets from n
PROFILE_TREE_META = 12
# ... the meta slots past the tree's four: the line counters (see _count_lines): how many code
# ranges they cover, and the block that ran last: its first and end slots, start cycle and
# static cycles.
TREE_LINE_RANGES, TREE_LINE_SLOT, TREE_LINE_END, TREE_LINE_START, TREE_LINE_STATIC = 4, 5, 6, 7, 8
TREE_ENERGY = 9  # ... and where the per-function dynamic energy (femtojoules, n + PROFILE_EXTRA rows) is,
TREE_RESUMING = 10  # 1 between an exception return and the code it resumes
TREE_FULL_FROM = 11  # the node below which the tree found no room (TREE_FULL walks up from there)
MAX_LINE_RANGES = 8  # after the hash table: (start, end, counters offset) per code range
PROFILE_NODE = 5            # slots per call tree node
TREE_ROOT, TREE_FULL = 0, 1  # node 0: the root; node 1 takes what ran below a call the full tree had no room for
# What moved the profile on: a block of code, or Python (exception entry, exception return, sleep).
EVENT_CODE, EVENT_ENTRY, EVENT_RETURN, EVENT_SLEEP = 0, 1, 2, 3
EVENT_FLUSH = 4  # charge what ran so far, change nothing


@numba.njit(cache=CACHE)
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


@numba.njit(cache=CACHE)
def _tree_child(st, meta, parent, function):
    """The call tree's node for `function` below `parent`, made on first use (TREE_FULL when
    the tree has no room left)."""
    capacity = st[meta + 2]
    nodes = meta + PROFILE_TREE_META
    table = nodes + PROFILE_NODE * capacity
    size = 2 * capacity
    h = (parent * 1000003 + function * 7919) % size
    while st[table + h] != 0:
        node = st[table + h] - 1
        if st[nodes + PROFILE_NODE * node] == parent and st[nodes + PROFILE_NODE * node + 1] == function:
            return node
        h += 1
        if h == size:
            h = 0
    if st[meta + 1] >= capacity:
        st[meta + 3] += 1
        st[meta + TREE_FULL_FROM] = parent
        return TREE_FULL
    node = st[meta + 1]
    st[meta + 1] += 1
    row = nodes + PROFILE_NODE * node
    st[row] = parent
    st[row + 1] = function
    st[row + 2] = 0
    st[row + 3] = 0
    st[row + 4] = -1
    st[table + h] = node + 1
    return node


@numba.njit(cache=CACHE)
def _parent(st, meta, node):
    """A node's parent; the full node's is where the tree ran out of room."""
    if node == TREE_FULL:
        return st[meta + TREE_FULL_FROM]
    return st[meta + PROFILE_TREE_META + PROFILE_NODE * node]


@numba.njit(cache=CACHE)
def _return_address(st):
    """Where the call that just branched returns to: after the BL/BLX that ended the last block."""
    at = st[PREVIOUS_BRANCH_AT]
    return at + 4 if _kind_at(st, at + 2) == KIND_CONTINUATION else at + 2


@numba.njit(cache=CACHE)
def _tree_call(st, meta, node, function, returns_to):
    """One level down: `function` called from `node`, returning to `returns_to` (-1: unknown)."""
    child = _tree_child(st, meta, node, function)
    row = meta + PROFILE_TREE_META + PROFILE_NODE * child
    st[row + 3] += 1
    st[row + 4] = returns_to
    return child


@numba.njit(cache=CACHE)
def _tree_up(st, meta, at, function):
    """The nearest node of `function` from `at` up, or -1."""
    while at != TREE_ROOT:
        if st[meta + PROFILE_TREE_META + PROFILE_NODE * at + 1] == function:
            return at
        at = _parent(st, meta, at)
    return -1


@numba.njit(cache=CACHE)
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
    kind = st[nodes + PROFILE_NODE * node + 1]
    if kind == sleep and event != EVENT_SLEEP:
        node = _parent(st, meta, node)  # woken up
        kind = st[nodes + PROFILE_NODE * node + 1]
    if event == EVENT_ENTRY:
        if kind == exceptions:
            return node, False  # tail-chained: still between the interrupted code and a handler
        return _tree_call(st, meta, node, exceptions, -1), False
    if event == EVENT_RETURN:
        at = node
        while at != TREE_ROOT and st[nodes + PROFILE_NODE * at + 1] != exceptions:
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
        return _tree_call(st, meta, node, function, st[nodes + PROFILE_NODE * node + 4]), True
    found = _tree_up(st, meta, _parent(st, meta, node) if returning else node, function)
    if found >= 0:
        return found, False
    if kind == exceptions or node == TREE_ROOT:
        return _tree_child(st, meta, node, function), False
    return _tree_child(st, meta, _parent(st, meta, node), function), False


@numba.njit(cache=CACHE)
def profile_switch(st, function, address, event):
    """The cycles since the last switch belong to what ran; `function` runs from now. A call:
    entering a function at its first instruction from another one, or by BL/BLX (recursion);
    a return: reaching the address the current call returns to."""
    t = st[PROFILE_TABLE]
    n = st[t]
    previous = st[PROFILE_FUNCTION]
    meta = t + 1 + 4 * n + 2 * PROFILE_EXTRA
    node = st[meta]
    at_start = function >= 0 and function < n and st[t + 1 + function] == address
    resuming = event == EVENT_CODE and st[meta + TREE_RESUMING] != 0
    call = at_start and (function != previous or (st[ENDS_IN_BRANCH] & CALL_FLAG) != 0)
    returning = event == EVENT_CODE and address == st[meta + PROFILE_TREE_META + PROFILE_NODE * node + 4]
    if function == previous and not call and not returning and not resuming and event == EVENT_CODE:
        return  # the same function goes on: its cycles keep adding up since PROFILE_SINCE
    spent = st[CYCLES] - st[PROFILE_SINCE]
    energy = st[P_ENERGY_CORE] + st[P_ENERGY_SRAM] + st[P_ENERGY_FLASH]
    if previous >= 0:
        st[t + 1 + 2 * n + previous] += spent
        st[st[meta + TREE_ENERGY] + previous] += energy - st[P_PROFILE_SINCE]
    st[P_PROFILE_SINCE] = energy
    st[meta + PROFILE_TREE_META + PROFILE_NODE * node + 2] += spent
    if event == EVENT_RETURN:
        st[meta + TREE_RESUMING] = 1
    if event != EVENT_FLUSH:
        moved, called = _tree_move(st, meta, node, function, at_start if resuming else call, returning, event, n)
        st[meta] = moved
        if called:
            st[t + 1 + 2 * n + n + PROFILE_EXTRA + function] += 1
    st[PROFILE_FUNCTION] = function
    st[PROFILE_SINCE] = st[CYCLES]


@numba.njit(cache=CACHE)
def _line_slot(st, meta, address):
    """The line counters' slot of `address` (two per halfword), or -1 outside the ranges."""
    table = meta + PROFILE_TREE_META + (PROFILE_NODE + 2) * st[meta + 2]
    for r in range(st[meta + TREE_LINE_RANGES]):
        start = st[table + 3 * r]
        if start <= address <= st[table + 3 * r + 1]:
            return st[table + 3 * r + 2] + 2 * ((address - start) >> 1)
    return -1


@numba.njit(cache=CACHE)
def line_flush(st, meta):
    """What the block that ran last cost beyond its static cycles (waits, refills, start
    adjustments) goes to its first instruction."""
    slot = st[meta + TREE_LINE_SLOT]
    if slot > 0:
        st[slot + 1] += st[CYCLES] - st[meta + TREE_LINE_START] - st[meta + TREE_LINE_STATIC]
    st[meta + TREE_LINE_SLOT] = 0


@numba.njit(cache=CACHE)
def _count_lines(st, meta, entry, address, size):
    """Per halfword, how often it ran, as differences (+1 at a block's start, -1 at its end;
    the running sum gives the counts), and the extra cycles of the blocks starting there."""
    line_flush(st, meta)
    if st[entry + E_LINE_SLOT] == 0:
        first = _line_slot(st, meta, address)
        end = _line_slot(st, meta, address + size)
        if first < 0 or end < 0 or end - first != 2 * (size >> 1):
            first = -1
        st[entry + E_LINE_SLOT] = first
        st[entry + E_LINE_END] = end
    first = st[entry + E_LINE_SLOT]
    if first > 0:
        st[first] += 1
        st[st[entry + E_LINE_END]] -= 1
        st[meta + TREE_LINE_SLOT] = first
        st[meta + TREE_LINE_END] = st[entry + E_LINE_END]
        st[meta + TREE_LINE_START] = st[CYCLES]
        st[meta + TREE_LINE_STATIC] = st[entry + 2]


@numba.njit(cache=CACHE)
def line_settle(st, meta, block, pc, static_prefix):
    """The block that ran last stopped at `pc`: only the halfwords before it ran."""
    first = st[meta + TREE_LINE_SLOT]
    if first > 0:
        st[st[meta + TREE_LINE_END]] += 1
        end = first + 2 * ((pc - block) >> 1)
        st[end] -= 1
        st[meta + TREE_LINE_END] = end
        st[meta + TREE_LINE_STATIC] = static_prefix


@numba.njit(cache=CACHE)
def _profile(st, entry, address, size):
    if st[entry + E_FUNCTION] == 0:
        st[entry + E_FUNCTION] = _function_of(st, address) + 1
    profile_switch(st, st[entry + E_FUNCTION] - 1, address, EVENT_CODE)
    t = st[PROFILE_TABLE]
    meta = t + 1 + 4 * st[t] + 2 * PROFILE_EXTRA
    if st[meta + TREE_LINE_RANGES] != 0:
        _count_lines(st, meta, entry, address, size)


@numba.njit(cache=CACHE)
def _take_samples(st):
    """PC samples that fell in the block that ran last, as DWT PC sampling takes them every
    SAMPLE_PERIOD cycles: the instruction whose cycles cover the sample point (the block's
    last one when dynamic waits ran past its static cost). Each sample: cycle, PC."""
    block = st[BLOCK_ADDRESS]
    end = block + st[BLOCK_SIZE]
    start = st[SAMPLE_BLOCK_START]
    while st[SAMPLE_NEXT] < st[CYCLES]:
        offset = st[SAMPLE_NEXT] - start
        pc = block
        at = block
        spent = 0
        while at < end:
            step = 4 if _kind_at(st, at + 2) == KIND_CONTINUATION and at + 2 < end else 2
            spent += _range_sum(st, at, at + step, F_CYCLES)
            pc = at
            if spent > offset:
                break
            at += step
        if st[SAMPLE_COUNT] < st[SAMPLE_CAPACITY]:
            slot = st[SAMPLE_TABLE] + 2 * st[SAMPLE_COUNT]
            st[slot] = st[SAMPLE_NEXT]
            st[slot + 1] = pc
            st[SAMPLE_COUNT] += 1
        else:
            st[SAMPLE_DROPPED] += 1
        st[SAMPLE_NEXT] += st[SAMPLE_PERIOD]


# Branch trace records (analysis/branch_trace.py): 3 slots each, kind << 56 | cycle, source, target.
TRACE_SYNC, TRACE_BRANCH, TRACE_EXCEPTION, TRACE_RETURN, TRACE_LOOP, TRACE_END = 0, 1, 2, 3, 4, 5
TRACE_RECORD = 3
TRACE_HEADROOM = 2  # records a block start may add after the table asks for room (a branch, the end)


@numba.njit(cache=CACHE)
def trace_record(st, kind, source, target):
    """Store one record at the current cycle while the window is open. When the table is nearly
    full, stop at this block start (the deadline): Python moves the records out (make_room)."""
    if st[TRACE_STATE] != 1:
        return
    if st[TRACE_COUNT] >= st[TRACE_CAPACITY]:
        st[TRACE_DROPPED] += 1
        return
    slot = st[TRACE_TABLE] + TRACE_RECORD * st[TRACE_COUNT]
    st[slot] = kind << 56 | st[CYCLES]
    st[slot + 1] = source
    st[slot + 2] = target
    st[TRACE_COUNT] += 1
    if st[TRACE_COUNT] == st[TRACE_CAPACITY] - TRACE_HEADROOM:
        st[DEADLINE] = 0


@numba.njit(cache=CACHE)
def _trace(st, address, out_of_sequence):
    """At a block start: open the window when its start address or cycle is reached (a sync
    record says where the code was), record the taken branch that led here (from the last
    instruction of the block before), close the window at its end address or cycle."""
    if st[TRACE_STATE] == 0:
        if (st[TRACE_FROM] < 0 or address == st[TRACE_FROM]) and st[CYCLES] >= st[TRACE_FROM_CYCLE]:
            st[TRACE_STATE] = 1
            trace_record(st, TRACE_SYNC, address, address)
        return
    if st[TRACE_STATE] == 1:
        if out_of_sequence and st[PREVIOUS_END] >= 0:  # (-1: Python moved the PC, and recorded why)
            trace_record(st, TRACE_BRANCH, st[PREVIOUS_BRANCH_AT], address)
        if address == st[TRACE_TO] or st[CYCLES] >= st[TRACE_TO_CYCLE]:
            trace_record(st, TRACE_END, address, address)
            st[TRACE_STATE] = 2


# DWT event counter packets (analysis/swo.py CounterEvents; only with --swo, while firmware enables
# one of CPICNT, LSUCNT, FOLDCNT's events). The table at COUNTER_EVENTS: records kept, how many fit,
# how many did not, the cycle of the first that did not, the cycle of the last counter_events call;
# per counter (CPICNT, LSUCNT, FOLDCNT) the total at which it next wraps past 255 (EV_NEVER: its
# event is off) and its total at the last call; then the records: flag << 56 | cycle (flag: the
# counter's bit in the packet payload, ARMv7-M ARM D4.3.1).
EV_COUNT, EV_CAPACITY, EV_DROPPED, EV_FIRST_DROPPED, EV_SINCE, EV_COUNTERS = 0, 1, 2, 3, 4, 5
EV_RECORDS = EV_COUNTERS + 2 * 3
EV_FLAGS = (0x01, 0x08, 0x10)  # CPI, LSU, Fold
EV_NEVER = 1 << 62


@numba.njit(cache=CACHE)
def counter_events(st):
    """A record for each wrap of CPICNT, LSUCNT or FOLDCNT since the last call (the block hook
    calls it at every block start, Python before it moves time on), at the cycle interpolated
    linearly from the counter's total between the last call and now: within one block's
    cycles, or exactly in a span of Python time (a skipped `b .` loop)."""
    t = st[COUNTER_EVENTS]
    since = st[t + EV_SINCE]
    now = st[CYCLES]
    for i in range(3):
        slot = t + EV_COUNTERS + 2 * i
        total = st[CPI_TOTAL] if i == 0 else st[LSU_TOTAL] if i == 1 else st[FOLD_TOTAL]
        before = st[slot + 1]
        while total >= st[slot]:
            cycle = since  # (a wrap Python set up before the last call, at an MMIO access in its block)
            if st[slot] > before:
                span, part, whole = now - since, st[slot] - before, total - before
                if span < (1 << 31) and part < (1 << 31):
                    cycle = since + (span * part + whole - 1) // whole
                else:
                    cycle = since + np.int64(span * (part / whole))
            if st[t + EV_COUNT] < st[t + EV_CAPACITY]:
                st[t + EV_RECORDS + st[t + EV_COUNT]] = EV_FLAGS[i] << 56 | cycle
                st[t + EV_COUNT] += 1
            else:
                if st[t + EV_DROPPED] == 0:
                    st[t + EV_FIRST_DROPPED] = cycle
                st[t + EV_DROPPED] += 1
            st[slot] += 256
        st[slot + 1] = total
    st[t + EV_SINCE] = now


@numba.njit(cache=CACHE)
def _refill_after_branch(st, address, wide_target):
    """The previous block ended with a branch that was taken: an unconditional one (2), or a
    conditional one (1) whose next block is not its fall-through."""
    branch = st[ENDS_IN_BRANCH]
    kind = branch & 3
    if kind != 0 and st[PREDICTOR_ENTRIES] > 0:
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


@numba.njit(cache=CACHE)
def _start_adjust(st, adjust, flags, sign):
    """Apply (sign 1) or undo (-1) what entering a block out of sequence changes: its first
    instruction has no neighbour to pipeline, interlock or fold with. On a dual-issue core
    (flags bit 6) the first instructions start from an empty pipeline: the cycles move between
    CPICNT and FOLDCNT (dual issues lost: bits 7-10, biased by 8)."""
    interlock = flags & 15
    if (flags >> 6) & 1:
        lost = ((flags >> 7) & 15) - 8
        st[CYCLES] += sign * adjust
        st[FOLD_TOTAL] -= sign * lost
        st[CPI_TOTAL] += sign * (adjust - lost)
        st[INTERLOCK_TOTAL] -= sign * interlock
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


@numba.njit(cache=CACHE)
def _block_energy(st, entry):
    """A block's dynamic energy from its class counts and the power model's coefficients."""
    core = 0
    for k in range(7):
        core += _class_count(st, entry, k) * st[P_COEFFICIENTS + k]
    st[entry + E_ENERGY_CORE] = core
    st[entry + E_ENERGY_SRAM] = _class_count(st, entry, 7) * st[P_COEF_WORD]


@numba.njit(cache=CACHE)
def _class_count(st, entry, k):
    """Lane k of the block's packed class counts (CLASS_NAMES, then data words)."""
    return (st[entry + E_CLASSES + k // 3] >> (LANE * (k % 3))) & LANE_MASK


@numba.njit(cache=CACHE)
def power_unpack(st):
    """Move the packed class sums into the counters."""
    for k in range(8):
        st[P_COUNTS + k] += (st[P_PACKED + k // 3] >> (LANE * (k % 3))) & LANE_MASK
    st[P_PACKED] = 0
    st[P_PACKED + 1] = 0
    st[P_PACKED + 2] = 0
    st[P_PACKED_BLOCKS] = 0


@numba.njit(cache=CACHE)
def _count_power(st, entry):
    """This block's events and energy; a due snapshot first keeps the energies before it, at
    the cycle it starts."""
    if st[P_SNAPSHOT_TABLE] != 0 and st[CYCLES] >= st[P_SNAPSHOT_NEXT]:
        power_snapshot(st)
    st[P_PACKED] += st[entry + E_CLASSES]
    st[P_PACKED + 1] += st[entry + E_CLASSES + 1]
    st[P_PACKED + 2] += st[entry + E_CLASSES + 2]
    st[P_PACKED_BLOCKS] += 1
    if st[P_PACKED_BLOCKS] >= UNPACK_BLOCKS:
        power_unpack(st)
    st[P_ENERGY_CORE] += st[entry + E_ENERGY_CORE]
    st[P_ENERGY_SRAM] += st[entry + E_ENERGY_SRAM]


@numba.njit(cache=CACHE)
def power_snapshot(st):
    """Keep the energies so far at this cycle (the power trace interpolates between them). A
    full table keeps every other snapshot and takes them half as often from then on (bounded
    memory, coarser trace)."""
    if st[P_SNAPSHOT_COUNT] >= st[P_SNAPSHOT_CAPACITY]:
        table = st[P_SNAPSHOT_TABLE]
        kept = st[P_SNAPSHOT_COUNT] // 2
        for i in range(kept):
            for k in range(SNAPSHOT):
                st[table + SNAPSHOT * i + k] = st[table + SNAPSHOT * (2 * i + 1) + k]
        st[P_SNAPSHOT_COUNT] = kept
        st[P_SNAPSHOT_PERIOD] *= 2
        st[P_SNAPSHOT_DROPPED] += 1  # (counts the halvings)
    slot = st[P_SNAPSHOT_TABLE] + SNAPSHOT * st[P_SNAPSHOT_COUNT]
    st[slot] = st[CYCLES]
    st[slot + 1] = st[P_ENERGY_CORE]
    st[slot + 2] = st[P_ENERGY_SRAM]
    st[slot + 3] = st[P_ENERGY_FLASH]
    st[P_SNAPSHOT_COUNT] += 1
    st[P_SNAPSHOT_NEXT] = st[CYCLES] + st[P_SNAPSHOT_PERIOD]


@numba.njit(cache=CACHE)
def _summarize(st, address, size, entry):
    """Fill the block cache entry from the decode tables; False if the block is not decoded."""
    end = address + size
    w = _window_of(st, address)
    base = st[WINDOW_TABLE + 3 * w] if w >= 0 else 0
    window_end = base + st[WINDOW_TABLE + 3 * w + 1] if w >= 0 else 0
    if w >= 0 and end <= window_end:  # the common case: the whole block in one window
        offset = st[WINDOW_TABLE + 3 * w + 2]
        row_first = offset + FIELDS * ((address - base) >> 1)
        row_last = offset + FIELDS * ((end - base) >> 1)
        first_kind = st[row_first + KIND]
        last_kind = st[row_last - FIELDS + KIND]
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or last_kind == KIND_UNKNOWN:
            return False
        last_start = row_last - 2 * FIELDS if last_kind == KIND_CONTINUATION else row_last - FIELDS
        st[entry + E_LAST_INSN] = base + 2 * ((last_start - offset) // FIELDS)
        st[entry + 2] = st[row_last + F_CYCLES] - st[row_first + F_CYCLES]
        st[entry + 3] = st[row_last + F_INSTRUCTIONS] - st[row_first + F_INSTRUCTIONS]
        st[entry + 4] = st[row_last + F_COUNTS] - st[row_first + F_COUNTS]
        st[entry + 5] = st[row_last + F_STALLS] - st[row_first + F_STALLS]
        st[entry + 6] = st[row_first + F_START_ADJUST]
        st[entry + 7] = st[row_first + F_START_FLAGS]
        st[entry + 8] = st[last_start + F_REFILL]
        st[entry + 9] = 1 if st[row_first + FIELDS + KIND] == KIND_CONTINUATION else 0
        st[entry + 10] = st[row_last + F_FP] - st[row_first + F_FP]
        st[entry + 11] = st[row_last + F_UNMASK] - st[row_first + F_UNMASK]
        st[entry + 12] = st[row_last + F_ISB] - st[row_first + F_ISB]
        for k in range(3):
            st[entry + E_CLASSES + k] = st[row_last + F_CLASS_A + k] - st[row_first + F_CLASS_A + k]
    else:
        first_kind = _kind_at(st, address)
        if first_kind != KIND_START and first_kind != KIND_SELF_LOOP or _kind_at(st, end - 2) == KIND_UNKNOWN:
            return False
        fp = _range_sum(st, address, end, F_FP)
        if fp < 0:
            return False
        st[entry + 2] = _range_sum(st, address, end, F_CYCLES)
        st[entry + 3] = _range_sum(st, address, end, F_INSTRUCTIONS)
        st[entry + 4] = _range_sum(st, address, end, F_COUNTS)
        st[entry + 5] = _range_sum(st, address, end, F_STALLS)
        st[entry + 6] = _value_at(st, address, F_START_ADJUST)
        st[entry + 7] = _value_at(st, address, F_START_FLAGS)
        st[entry + 8] = _ends_in_branch(st, end)
        st[entry + E_LAST_INSN] = end - 4 if _kind_at(st, end - 2) == KIND_CONTINUATION else end - 2
        st[entry + 9] = 1 if _kind_at(st, address + 2) == KIND_CONTINUATION else 0
        st[entry + 10] = fp
        st[entry + 11] = _range_sum(st, address, end, F_UNMASK)
        st[entry + 12] = _range_sum(st, address, end, F_ISB)
        for k in range(3):
            st[entry + E_CLASSES + k] = _range_sum(st, address, end, F_CLASS_A + k)
    _block_energy(st, entry)
    st[entry + 13] = 1 if first_kind == KIND_SELF_LOOP else 0
    st[entry + E_FETCH_EPOCH] = 0
    st[entry + E_FUNCTION] = 0
    st[entry + E_LINE_SLOT] = 0
    st[entry] = address
    st[entry + 1] = size
    return True


@numba.njit(cache=CACHE)
def flash_offset(st, g, address):
    """The line offset `address` reads through the port at `g`, or -1 outside its ranges."""
    for i in range(st[g + FL_RANGE_COUNT]):
        entry = g + FL_RANGE_TABLE + 3 * i
        if st[entry] <= address < st[entry + 1]:
            return address - st[entry] + st[entry + 2]
    return -1


@numba.njit(cache=CACHE)
def flash_port(st, address):
    """The block of the port whose ranges hold `address`, or -1."""
    for k in range(st[FL_PORT_COUNT]):
        g = FL_PORTS + k * FL_PORT_SLOTS
        if flash_offset(st, g, address) >= 0:
            return g
    return -1


@numba.njit(cache=CACHE)
def cache_set(st, g, side, line):
    """(first tag slot, ways) of the set `line` maps to in the port's cache at `side`
    (FL_IC_ON or FL_DC_ON: enabled, sets, ways, tag array follow it)."""
    ways = st[g + side + 2]
    return st[g + side + 3] + 2 * ways * (line % st[g + side + 1]), ways


@numba.njit(cache=CACHE)
def cache_find(st, first, ways, line):
    """(the slot holding `line`, clean or dirty, or -1; the set's least recently used slot).
    A slot is the line + 1 (negated while dirty; 0: empty), then its last use."""
    oldest = first
    for way in range(ways):
        slot = first + 2 * way
        if st[slot] == line + 1 or st[slot] == -(line + 1):
            return slot, oldest
        if st[slot + 1] < st[oldest + 1]:
            oldest = slot
    return -1, oldest


@numba.njit(cache=CACHE)
def flash_cache_access(st, g, line):
    """Look `line` up in the port's instruction cache (set-associative, LRU); on a miss it
    replaces the set's oldest line."""
    first, ways = cache_set(st, g, FL_IC_ON, line)
    st[FL_USE_CLOCK] += 1
    slot, oldest = cache_find(st, first, ways, line)
    if slot >= 0:
        st[slot + 1] = st[FL_USE_CLOCK]
        return True
    st[oldest] = line + 1
    st[oldest + 1] = st[FL_USE_CLOCK]
    st[FL_EPOCH] += 1  # an instruction cache changed
    return False


@numba.njit(cache=CACHE)
def flash_cache_find(st, g, line):
    """The tag slot holding `line` in the port's instruction cache, or -1."""
    first, ways = cache_set(st, g, FL_IC_ON, line)
    return cache_find(st, first, ways, line)[0]


@numba.njit(cache=CACHE)
def flash_cache_forget(st, g, line):
    """Take `line` out of the port's instruction cache."""
    slot = flash_cache_find(st, g, line)
    if slot >= 0:
        st[slot] = 0
        st[slot + 1] = 0
        st[FL_EPOCH] += 1


@numba.njit(cache=CACHE)
def _flash_read(st):
    st[P_FLASH_READS] += 1
    st[P_ENERGY_FLASH] += st[P_COEF_FLASH]


@numba.njit(cache=CACHE)
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


@numba.njit(cache=CACHE)
def data_cache_access(st, g, line, write):
    """Look `line` up in the port's data cache (LRU, as flash_cache_access); a write leaves the
    line dirty (its tag stored negated: write-back, write-allocate). Returns (hit, whether the
    line a miss replaced was dirty); counts the hit or miss and the write-back."""
    first, ways = cache_set(st, g, FL_DC_ON, line)
    st[FL_USE_CLOCK] += 1
    slot, oldest = cache_find(st, first, ways, line)
    if slot >= 0:
        st[slot + 1] = st[FL_USE_CLOCK]
        if write:
            st[slot] = -(line + 1)
        st[g + FL_DC_HITS] += 1
        return True, False
    dirty = st[oldest] < 0
    st[oldest] = -(line + 1) if write else line + 1
    st[oldest + 1] = st[FL_USE_CLOCK]
    st[g + FL_DC_MISSES] += 1
    if dirty:
        st[g + FL_DC_WRITEBACKS] += 1
    if st[g + FL_DC_TAGS] == st[g + FL_IC_TAGS]:
        st[FL_EPOCH] += 1  # an instruction cache changed
    return False, dirty


@numba.njit(cache=CACHE)
def ram_port(st, address):
    """The block of the port whose data cache serves RAM at `address`, or -1."""
    for k in range(st[FL_PORT_COUNT]):
        g = FL_PORTS + k * FL_PORT_SLOTS
        for i in range(st[g + FL_RAM_COUNT]):
            entry = g + FL_RAM_TABLE + 2 * i
            if st[entry] <= address < st[entry + 1]:
                return g
    return -1


@numba.njit(cache=CACHE)
def ram_access(st, address, write):
    """Wait cycles of a data access to RAM behind a port's data cache (docs/timing.md, Cortex-M7
    memory): a read waits on a miss, or always with the cache off, and longer when the line it
    replaces is dirty; a write waits for nothing (the store buffer takes it) but allocates."""
    g = ram_port(st, address)
    if g < 0:
        return 0
    if st[g + FL_DC_ON] == 0:
        return 0 if write else st[g + FL_RAM_WAIT]
    hit, dirty = data_cache_access(st, g, address >> st[g + FL_LINE_SHIFT], write)
    if hit or write:
        return 0
    return st[g + FL_RAM_WAIT] + (st[g + FL_WRITEBACK_WAIT] if dirty else 0)


@numba.njit(cache=CACHE)
def flash_data_read(st, address):
    """Wait cycles of a data read at `address` (0 outside the flash ports or on a data cache hit)."""
    g = flash_port(st, address)
    if g < 0:
        return 0
    line = flash_offset(st, g, address) >> st[g + FL_LINE_SHIFT]
    writeback = 0
    if st[g + FL_DC_ON] != 0:
        hit, dirty = data_cache_access(st, g, line, False)
        if hit:
            return 0
        if dirty:  # the flash line replaces RAM data written since it was cached
            writeback = st[g + FL_WRITEBACK_WAIT]
    _flash_read(st)
    wait = st[g + FL_DATA_WAIT]
    if st[g + FL_PREFETCH] != 0 and st[g + FL_PREFETCH_READY] > st[FL_BLOCK_START]:
        st[g + FL_PREFETCH_DELAY] += wait + 1  # the flash serves this read before the prefetch in flight
    return wait + writeback


@numba.njit(cache=CACHE)
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
            st[record] = line_address
            st[record + 1] = stall
            st[record + 2] = contention
            st[record + 3] = line + 1 if missed else 0
            count += 1
        waited += stall
        contended += contention
    st[FL_BLOCK_LINES] = count
    st[CYCLES] += waited
    st[CPI_TOTAL] += waited  # DWT CPICNT counts instruction fetch stalls (ARMv7-M ARM C1.8.8)
    st[FL_FETCH_TOTAL] += waited - contended
    st[FL_CONTENTION_TOTAL] += contended
    return count == 0 and st[g + FL_IC_ON] != 0


@numba.njit(cache=CACHE)
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
    st[CYCLES] += st[LAZY_FP_CYCLES]
    st[LSU_TOTAL] += st[LAZY_FP_CYCLES]
    st[LAZY_FP_TOTAL] += st[LAZY_FP_CYCLES]


@numba.njit(cache=CACHE)
def _remember_hits(st, g, entry, address, size, offset):
    """Every line of the block was in the instruction cache (or the fetch buffer): note where,
    so until the caches' contents change the block's fetch costs only these look-ups."""
    shift = st[g + FL_LINE_SHIFT]
    first = offset >> shift
    lines = ((offset + size - 1) >> shift) - first + 1
    if lines > FAST_FETCH_LINES:
        return
    for i in range(lines):
        slot = flash_cache_find(st, g, first + i)
        if slot < 0:
            return
        st[entry + E_FETCH_SLOTS + i] = slot
    last_address = address if lines == 1 else address + ((first + lines - 1) << shift) - offset
    st[entry + E_FETCH_FIRST] = first
    st[entry + E_FETCH_LINES] = lines
    st[entry + E_FETCH_BEFORE_LAST] = _range_sum(st, address, last_address, F_CYCLES) if lines > 1 else 0
    st[entry + E_FETCH_PORT] = g
    st[entry + E_FETCH_EPOCH] = st[FL_EPOCH] + 1


@numba.njit(cache=CACHE)
def _fetch_hits(st, g, entry, start):
    """What _fetch_block does for a block whose lines are all cached: no waits; the lines become
    the most recently used, the fetch buffer holds the last one and prefetch moves past it."""
    first = st[entry + E_FETCH_FIRST]
    lines = st[entry + E_FETCH_LINES]
    for i in range(lines):
        if first + i != st[g + FL_BUFFER_LINE]:
            st[FL_USE_CLOCK] += 1
            st[st[entry + E_FETCH_SLOTS + i] + 1] = st[FL_USE_CLOCK]
            st[g + FL_IC_HITS] += 1
            st[g + FL_BUFFER_LINE] = first + i
            if st[g + FL_PREFETCH] != 0:
                st[g + FL_PREFETCH_LINE] = first + i + 1
                st[g + FL_PREFETCH_READY] = start + (st[entry + E_FETCH_BEFORE_LAST] if i == lines - 1 and i > 0
                                                     else 0) + st[g + FL_FETCH_WAIT] + 1
                st[g + FL_PREFETCH_DELAY] = 0


@numba.njit(cache=CACHE)
def _fetch(st, entry, address, size, start, out_of_sequence):
    """The flash fetch model for the block starting now, through whichever port holds it."""
    st[FL_CURRENT] = -1
    if st[entry + E_FETCH_EPOCH] == st[FL_EPOCH] + 1:  # all its lines are cached, as last time
        g = st[entry + E_FETCH_PORT]
        if st[g + FL_ACTIVE] != 0 and st[g + FL_IC_ON] != 0:
            st[FL_CURRENT] = g
            if out_of_sequence and st[g + FL_NO_LINE_BUFFER] != 0:
                st[g + FL_BUFFER_LINE] = -1
            _fetch_hits(st, g, entry, start)
            return
    g = flash_port(st, address)
    if g < 0 or st[g + FL_ACTIVE] == 0:
        return
    st[FL_CURRENT] = g
    if out_of_sequence and st[g + FL_NO_LINE_BUFFER] != 0:
        st[g + FL_BUFFER_LINE] = -1
    offset = flash_offset(st, g, address)
    if _fetch_block(st, g, address, size, offset, start):
        _remember_hits(st, g, entry, address, size, offset)


class _Cfunc:
    """A hook compiled (or loaded from numba's cache) when first registered, not at import:
    commands that run no firmware (`mcusim --help`, `mcusim report`) compile nothing."""

    def __init__(self, signature, function):
        self.signature, self.function, self._compiled = signature, function, None

    @property
    def address(self) -> int:
        if self._compiled is None:
            self._compiled = numba.cfunc(self.signature, cache=CACHE)(self.function)
        return self._compiled.address


def _cfunc(signature):
    return lambda function: _Cfunc(signature, function)


@_cfunc(BLOCK_HOOK_SIGNATURE)
def block_hook(uc, address_u64, size_u32, user_data):
    address = np.int64(address_u64)  # int64 throughout: uint64 mixed with int64 becomes float in numba
    size = np.int64(size_u32)
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    if st[TRACE_TABLE] != 0 and address != st[TRACE_HELD]:  # before any stop: Python may move the PC
        _trace(st, address, address != st[PREVIOUS_END])
        st[TRACE_HELD] = address
    if st[COUNTER_EVENTS] != 0:  # DWT counter wraps in the block that ran last (before any stop)
        counter_events(st)
    if st[CYCLES] >= st[DEADLINE] or st[INSTRUCTIONS] >= st[STEP_LIMIT]:
        st[STOP_REASON] = STOP_DEADLINE
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[BLOCK_SIZE] != 0 and (st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0
                                or st[WATCH_ISB] != 0 and st[PREVIOUS_ISB] > 0):
        st[STOP_REASON] = STOP_UNMASKED if st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0 else STOP_ISB
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    entry = BLOCK_CACHE + ((address >> 1) & (CACHE_ENTRIES - 1)) * CACHE_ENTRY
    if st[entry + 1] != size or st[entry] != address:
        if not _summarize(st, address, size, entry):
            st[STOP_REASON] = STOP_DECODE
            st[STOP_ADDRESS] = address
            st[STOP_SIZE] = size
            _uc_emu_stop(uc)
            return
    if st[FPU_ENABLED] == 0 and st[entry + 10] > 0:
        st[STOP_REASON] = STOP_FPU_DISABLED
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    if st[entry + 13] != 0:
        st[STOP_REASON] = STOP_SELF_LOOP
        st[STOP_ADDRESS] = address
        _uc_emu_stop(uc)
        return
    if st[CYCLES] + st[entry + 2] > st[CYCLE_LIMIT] and st[entry + 3] > 1 and st[CYCLES] + st[entry + 2] - _range_sum(
            st, st[entry + E_LAST_INSN], address + size, F_CYCLES) >= st[CYCLE_LIMIT]:
        st[STOP_REASON] = STOP_LIMIT
        st[STOP_ADDRESS] = address
        st[STOP_SIZE] = size
        _uc_emu_stop(uc)
        return
    out_of_sequence = address != st[PREVIOUS_END]
    if st[PROFILE_TABLE] != 0:  # what ran so far belongs to the blocks before this one
        _profile(st, entry, address, size)
    st[TRACE_HELD] = -1
    if st[SAMPLE_TABLE] != 0:
        if st[CYCLES] > st[SAMPLE_NEXT] and st[BLOCK_SIZE] != 0:
            _take_samples(st)
        st[SAMPLE_BLOCK_START] = st[CYCLES]
    st[LAZY_FP_AT] = -1
    if st[LAZY_FP_PENDING] != 0 and st[entry + 10] > 0:
        _lazy_fp_store(st, address, size)
    _refill_after_branch(st, address, st[entry + 9] != 0)
    start = st[CYCLES]
    st[FL_BLOCK_START] = start
    st[ENDS_IN_BRANCH] = st[entry + 8]
    st[PREVIOUS_BRANCH_AT] = st[entry + E_LAST_INSN]
    st[PREVIOUS_END] = address + size
    st[PREVIOUS_UNMASK] = st[entry + 11]
    st[PREVIOUS_ISB] = st[entry + 12]
    st[BLOCK_ADDRESS] = address
    st[BLOCK_SIZE] = size
    st[CODE_PC] = -1
    counts = st[entry + 4]
    stalls = st[entry + 5]
    if st[P_ENABLED] != 0:
        _count_power(st, entry)
    st[CYCLES] += st[entry + 2]
    st[INSTRUCTIONS] += st[entry + 3]
    st[LSU_TOTAL] += counts & LANE_MASK
    st[CPI_TOTAL] += (counts >> LANE) & LANE_MASK
    st[FOLD_TOTAL] += counts >> (2 * LANE)
    st[REFILL_TOTAL] += stalls & LANE_MASK
    st[INTERLOCK_TOTAL] += (stalls >> LANE) & LANE_MASK
    st[DIVIDE_TOTAL] += stalls >> (2 * LANE)
    st[BLOCK_ADJUSTED] = 0
    if out_of_sequence and (st[entry + 6] != 0 or st[entry + 7] != 0):
        _start_adjust(st, st[entry + 6], st[entry + 7], 1)
        st[BLOCK_ADJUSTED] = 1
    st[FL_BLOCK_LINES] = 0
    if st[FL_PORT_COUNT] != 0:
        _fetch(st, entry, address, size, start, out_of_sequence)


@numba.njit(cache=CACHE)
def _significant_bits(value):
    bits = 0
    while value:
        value >>= 1
        bits += 1
    return bits


@numba.njit(cache=CACHE)
def _read_register(uc, header, register):
    header[SCRATCH] = 0
    _uc_reg_read(uc, register, header.ctypes.data + 8 * SCRATCH)
    return header[SCRATCH] & 0xFFFFFFFF


@_cfunc(BLOCK_HOOK_SIGNATURE)
def divide_hook(uc, address, size, user_data):
    """Before a divide: its early-termination cost from the operand values.

    F_DIVIDE packs the Unicorn register ids: dividend | divisor << 10 | signed << 20, plus 1 << 21.
    """
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    info = _value_at(st, np.int64(address), F_DIVIDE)
    if info == 0:
        return
    dividend = _read_register(uc, header, np.int32(info & 0x3FF))
    divisor = _read_register(uc, header, np.int32((info >> 10) & 0x3FF))
    if (info >> 20) & 1:
        if dividend & 0x80000000:
            dividend = (0x100000000 - dividend) & 0xFFFFFFFF
        if divisor & 0x80000000:
            divisor = (0x100000000 - divisor) & 0xFFFFFFFF
    if dividend == 0 or divisor == 0:
        cycles = st[DIVIDE_ZERO]
    else:
        a = _significant_bits(dividend)
        b = _significant_bits(divisor)
        if a < b:
            cycles = st[DIVIDE_SHORT]
        else:
            cycles = st[DIVIDE_BASE] + (a - b) // st[DIVIDE_BITS_PER_CYCLE]
    extra = cycles - st[DIVIDE_MIN]
    st[CYCLES] += extra
    st[CPI_TOTAL] += extra
    st[DIVIDE_TOTAL] += extra


UC_MEM_WRITE = 17  # unicorn.UC_MEM_WRITE: the `access` argument of a memory hook for a write
MEMORY_HOOK_SIGNATURE = types.void(types.voidptr, types.int32, types.uint64, types.int32, types.int64,
                                   types.voidptr)


EPSR_THUMB_ONLY = 1 << 24


@numba.njit(cache=CACHE)
def _restore_it_state(uc, header):
    """Clear the IT bits Unicorn set before calling a memory hook: it restores the accessing
    instruction's state (cpu_restore_state), while QEMU expects them zero in mid-block and
    writes them only at a block's end inside an IT block (docs/machine.md)."""
    header[SCRATCH] = EPSR_THUMB_ONLY
    _uc_reg_write(uc, UC_ARM_REG_EPSR, header.ctypes.data + 8 * SCRATCH)


@_cfunc(MEMORY_HOOK_SIGNATURE)
def flash_read_hook(uc, access, address_u64, size, value, user_data):
    """A data read from flash (registered on the flash ranges only while data reads wait)."""
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    wait = flash_data_read(st, np.int64(address_u64))
    _restore_it_state(uc, header)
    st[CYCLES] += wait
    st[LSU_TOTAL] += wait  # DWT LSUCNT counts the extra cycles of loads and stores
    st[DATA_WAIT_TOTAL] += wait


@_cfunc(MEMORY_HOOK_SIGNATURE)
def ram_access_hook(uc, access, address_u64, size, value, user_data):
    """A data read or write of RAM behind a data cache (registered on those ranges only)."""
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    wait = ram_access(st, np.int64(address_u64), access == UC_MEM_WRITE)
    _restore_it_state(uc, header)
    st[CYCLES] += wait
    st[LSU_TOTAL] += wait
    st[DATA_WAIT_TOTAL] += wait


@_cfunc(BLOCK_HOOK_SIGNATURE)
def exact_pc_hook(uc, address, size, user_data):
    """Per-instruction hook, installed only on blocks that read time-dependent registers."""
    header = carray(user_data, (DATA_START,), np.int64)
    header[CODE_PC] = np.int64(address)


class NativeState:
    """Owns the shared buffer: header fields, code windows and their decode tables."""

    WINDOW_BYTES = 0x1000  # small windows: re-summing one after a decode stays cheap

    def __init__(self, capacity_halfwords: int = 1 << 17):
        self.buffer = np.zeros(DATA_START + FIELDS * (capacity_halfwords + MAX_WINDOWS), np.int64)
        self.buffer[CODE_PC] = -1
        self.buffer[TOTAL_LENGTH] = len(self.buffer)
        self.buffer[DEADLINE] = np.iinfo(np.int64).max
        self.buffer[CYCLE_LIMIT] = np.iinfo(np.int64).max
        self.buffer[STEP_LIMIT] = np.iinfo(np.int64).max
        self.buffer[FL_LINE_RECORDS] = FLASH_AREA + FL_MAX_PORTS * 2 * FL_CACHE_SLOTS
        self.buffer[FL_CURRENT] = -1
        self.buffer[LAZY_FP_AT] = -1
        self.next_free = DATA_START
        self.windows_start = DATA_START  # after the tables reserve() handed out
        self.windows: list[tuple[int, int, int]] = []  # (base, size_bytes, offset)
        self._window_index: dict[int, int] = {}        # base -> index in windows
        self.on_reallocate = None  # called with the new buffer when it grows
        self.start_prefix = None   # (block, pc) -> part of a dual-issue block-start correction before pc

    def reserve(self, slots: int) -> int:
        """Slots of the buffer for a table of the hooks' own (before any code is decoded)."""
        if self.windows:
            raise RuntimeError("reserve() after code was decoded")
        offset = self.next_free
        self.next_free += slots
        self.windows_start = self.next_free
        if self.next_free > len(self.buffer):
            grown = np.zeros(self.next_free + FIELDS * (1 << 17), np.int64)
            grown[: len(self.buffer)] = self.buffer
            grown[TOTAL_LENGTH] = len(grown)
            self.buffer = grown
        return offset

    def __getitem__(self, slot: int) -> int:
        return int(self.buffer[slot])

    def __setitem__(self, slot: int, value: int) -> None:
        self.buffer[slot] = value

    @property
    def address(self) -> int:
        return self.buffer.ctypes.data

    def window_for(self, address: int) -> int | None:
        return self._window_index.get(address - address % self.WINDOW_BYTES)

    @property
    def full(self) -> bool:
        return len(self.windows) >= MAX_WINDOWS

    def clear_block_cache(self) -> None:
        """Block summaries are built from the decode tables: drop them when the tables change."""
        self.buffer[BLOCK_CACHE: BLOCK_CACHE + CACHE_ENTRIES * CACHE_ENTRY] = 0

    def clear_windows(self) -> None:
        """Forget every decoded window (code spread over more than MAX_WINDOWS windows)."""
        self.clear_block_cache()
        self.windows = []
        self._window_index = {}
        self.next_free = self.windows_start
        self.buffer[WINDOW_COUNT] = 0
        self.buffer[self.windows_start:] = 0

    def add_window(self, base: int, size_bytes: int) -> int:
        """Add a window of decode tables covering [base, base+size_bytes)."""
        halfwords = size_bytes >> 1
        need = FIELDS * (halfwords + 1)
        if self.next_free + need > len(self.buffer):
            grown = np.zeros(max(2 * len(self.buffer), self.next_free + need + DATA_START), np.int64)
            grown[: len(self.buffer)] = self.buffer
            grown[TOTAL_LENGTH] = len(grown)
            self.buffer = grown
            if self.on_reallocate:
                self.on_reallocate(self.buffer)
        offset = self.next_free
        self.next_free += need
        index = len(self.windows)
        self.windows.append((base, size_bytes, offset))
        self._window_index[base] = index
        self.buffer[WINDOW_TABLE + 3 * index: WINDOW_TABLE + 3 * index + 3] = (base, size_bytes, offset)
        self.buffer[WINDOW_COUNT] = len(self.windows)
        return index

    def tables(self, index: int) -> list[np.ndarray]:
        """Views of one window's FIELDS arrays (KIND, then the prefix sums), each halfwords + 1 long."""
        base, size, offset = self.windows[index]
        end = offset + FIELDS * ((size >> 1) + 1)
        return [self.buffer[offset + f: end: FIELDS] for f in range(FIELDS)]

    def sums_between(self, start: int, end: int) -> list[int]:
        """Sums of the cumulative fields over the decoded instructions in [start, end)."""
        totals = [0] * FIELDS
        while start < end:
            index = self.window_for(start)
            if index is None:
                break
            base, size, _ = self.windows[index]
            tables = self.tables(index)
            chunk_end = min(end, base + size)
            a, b = (start - base) >> 1, (chunk_end - base) >> 1
            for field in SUMMED_FIELDS:
                totals[field] += int(tables[field][b] - tables[field][a])
            start = chunk_end
        return totals

    def static_cycles(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """Per halfword of [start, end): the static cycles of the instruction starting there
        (0 for second halfwords and code never decoded), and whether one starts there."""
        cycles = np.zeros((end - start) // 2, np.int64)
        starts = np.zeros((end - start) // 2, bool)
        for base, size, _ in self.windows:
            low, high = max(start, base), min(end, base + size)
            if low < high:
                tables = self.tables(self.window_for(base))
                a, b = (low - base) >> 1, (high - base) >> 1
                cycles[(low - start) >> 1: (high - start) >> 1] = np.diff(tables[F_CYCLES][a: b + 1])
                kinds = tables[KIND][a: b]
                starts[(low - start) >> 1: (high - start) >> 1] = (kinds == KIND_START) | (kinds == KIND_SELF_LOOP)
        return cycles, starts

    def value_at(self, address: int, field: int) -> int:
        index = self.window_for(address)
        if index is None:
            return 0
        base = self.windows[index][0]
        return int(self.tables(index)[field][(address - base) >> 1])

    def counters_at(self, pc: int) -> dict[str, int]:
        """Counter totals at the instruction `pc` of the executing block.

        The hook adds a block's whole static cost when the block starts (per-instruction hooks
        such as the divide's add theirs as they run), so at an instruction in the middle of it
        (a CYCCNT read, a fault) the totals are taken back by what the rest of the block costs.
        """
        b = self.buffer
        block, size = int(b[BLOCK_ADDRESS]), int(b[BLOCK_SIZE])
        totals = {"cycles": int(b[CYCLES]), "instructions": int(b[INSTRUCTIONS]), "lsu": int(b[LSU_TOTAL]),
                  "cpi": int(b[CPI_TOTAL]), "fold": int(b[FOLD_TOTAL]), "refill": int(b[REFILL_TOTAL]),
                  "interlock": int(b[INTERLOCK_TOTAL]), "divide": int(b[DIVIDE_TOTAL]),
                  "data_wait": int(b[DATA_WAIT_TOTAL]), "fetch_wait": int(b[FL_FETCH_TOTAL]),
                  "contention": int(b[FL_CONTENTION_TOTAL]), "lazy_fp": int(b[LAZY_FP_TOTAL])}
        if not block <= pc < block + size:
            return totals
        if pc <= b[LAZY_FP_AT]:  # the FP instruction that stores the lazy FP context has not run
            totals["cycles"] -= int(b[LAZY_FP_CYCLES])
            totals["lsu"] -= int(b[LAZY_FP_CYCLES])
            totals["lazy_fp"] -= int(b[LAZY_FP_CYCLES])
        for address, stall, contention, _ in self.fetch_records():
            if address > pc:  # fetched for an instruction after pc: not yet waited for
                totals["cycles"] -= stall
                totals["cpi"] -= stall
                totals["fetch_wait"] -= stall - contention
                totals["contention"] -= contention
        tail = self.sums_between(pc, block + size)
        counts, stalls = tail[F_COUNTS], tail[F_STALLS]
        totals["cycles"] -= tail[F_CYCLES]
        totals["instructions"] -= tail[F_INSTRUCTIONS]
        totals["lsu"] -= counts & LANE_MASK
        totals["cpi"] -= (counts >> LANE) & LANE_MASK
        totals["fold"] -= counts >> (2 * LANE)
        totals["refill"] -= stalls & LANE_MASK
        totals["interlock"] -= (stalls >> LANE) & LANE_MASK
        totals["divide"] -= stalls >> (2 * LANE)
        if pc == block and b[BLOCK_ADJUSTED]:  # the first instruction has not run: nor its adjustment
            adjust, flags = self.value_at(block, F_START_ADJUST), self.value_at(block, F_START_FLAGS)
            interlock, fold = flags & 15, (flags >> 4) & 1
            if (flags >> 6) & 1:  # dual issue (see _start_adjust)
                lost = ((flags >> 7) & 15) - 8
                totals["cycles"] -= adjust
                totals["fold"] += lost
                totals["cpi"] -= adjust - lost
                totals["interlock"] += interlock
                return totals
            totals["cycles"] -= adjust
            totals["lsu"] -= adjust + interlock - fold - (interlock if (flags >> 5) & 1 else 0)
            totals["cpi"] += 0 if (flags >> 5) & 1 else interlock
            totals["fold"] += fold
            totals["interlock"] += interlock
        elif b[BLOCK_ADJUSTED] and self.start_prefix is not None:
            flags = self.value_at(block, F_START_FLAGS)
            if (flags >> 6) & 1:  # a dual-issue core: keep only the correction of the instructions before pc
                done_cycles, done_interlock, done_lost = self.start_prefix(block, pc)
                undo_cycles = self.value_at(block, F_START_ADJUST) - done_cycles
                undo_lost = ((flags >> 7) & 15) - 8 - done_lost
                totals["cycles"] -= undo_cycles
                totals["fold"] += undo_lost
                totals["cpi"] -= undo_cycles - undo_lost
                totals["interlock"] += (flags & 15) - done_interlock
        return totals

    def fetch_records(self) -> list[tuple[int, int, int, int]]:
        """The executing block's flash lines that waited or missed: (address, stall, contention, line + 1)."""
        start = int(self.buffer[FL_LINE_RECORDS])
        rows = self.buffer[start: start + FL_RECORD * int(self.buffer[FL_BLOCK_LINES])]
        return [tuple(int(v) for v in rows[i: i + FL_RECORD]) for i in range(0, len(rows), FL_RECORD)]

    def count_at(self, pc: int) -> tuple[int, int]:
        """(cycles, instructions) at the instruction `pc` of the executing block."""
        counters = self.counters_at(pc)
        return counters["cycles"], counters["instructions"]

    def settle_at(self, pc: int) -> None:
        """After a stop inside a block: keep only what the instructions before `pc` cost; the
        rest of the block will run as a new block that follows on in sequence."""
        b = self.buffer
        inside = int(b[BLOCK_ADDRESS]) <= pc < int(b[BLOCK_ADDRESS]) + int(b[BLOCK_SIZE])
        if inside:
            b[ENDS_IN_BRANCH] = 0
            b[PREVIOUS_END] = pc
            if b[PROFILE_TABLE] != 0:
                t = int(b[PROFILE_TABLE])
                line_settle(b, np.int64(t + 1 + 4 * int(b[t]) + 2 * PROFILE_EXTRA), b[BLOCK_ADDRESS], np.int64(pc),
                            np.int64(self.sums_between(int(b[BLOCK_ADDRESS]), pc)[F_CYCLES]))
        counters = self.counters_at(pc)
        for slot, key in ((CYCLES, "cycles"), (INSTRUCTIONS, "instructions"), (LSU_TOTAL, "lsu"),
                          (CPI_TOTAL, "cpi"), (FOLD_TOTAL, "fold"), (REFILL_TOTAL, "refill"),
                          (INTERLOCK_TOTAL, "interlock"), (DIVIDE_TOTAL, "divide"), (DATA_WAIT_TOTAL, "data_wait"),
                          (FL_FETCH_TOTAL, "fetch_wait"), (FL_CONTENTION_TOTAL, "contention"),
                          (LAZY_FP_TOTAL, "lazy_fp")):
            self.buffer[slot] = counters[key]
        if inside:
            if pc <= b[LAZY_FP_AT]:
                b[LAZY_FP_PENDING] = 1
            b[LAZY_FP_AT] = -1
            self._forget_fetches_after(pc)

    def _forget_fetches_after(self, pc: int) -> None:
        """The rest of the block will run again: the lines it fetched ahead of `pc` were not yet
        needed, so take them back out of the instruction cache and the fetch buffer."""
        b = self.buffer
        g = int(b[FL_CURRENT])
        if g < 0:
            return
        kept = [r for r in self.fetch_records() if r[0] <= pc]
        misses_after = 0
        for address, _, _, missed in self.fetch_records():
            if address > pc and missed:
                flash_cache_forget(b, g, missed - 1)
                misses_after += 1
        offset = flash_offset(b, g, pc)
        if offset >= 0:
            shift = int(b[g + FL_LINE_SHIFT])
            if b[g + FL_IC_ON]:  # every line after pc's was counted as a hit or a miss: it will be again
                last_line = flash_offset(b, g, int(b[BLOCK_ADDRESS] + b[BLOCK_SIZE]) - 1) >> shift
                b[g + FL_IC_MISSES] -= misses_after
                b[g + FL_IC_HITS] -= max(0, last_line - (offset >> shift) - misses_after)
            b[g + FL_BUFFER_LINE] = offset >> shift
            b[g + FL_PREFETCH_LINE] = -1
        b[FL_BLOCK_LINES] = len(kept)


def unregister_hook(uc, handle: int) -> None:
    uclib.uc_hook_del(uc._uch, ctypes.c_size_t(handle))


def _register(uc, kind: int, function, state: NativeState, begin: int, end: int) -> int:
    from unicorn import UcError

    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), kind, ctypes.c_void_p(function.address),
                               ctypes.c_void_p(state.address), ctypes.c_uint64(begin), ctypes.c_uint64(end))
    if status != 0:
        raise UcError(status)
    return handle.value


def register_block_hook(uc, state: NativeState) -> int:
    """Register the native block hook on every address; returns the hook handle."""
    from unicorn import UC_HOOK_BLOCK

    return _register(uc, UC_HOOK_BLOCK, block_hook, state, 1, 0)


def register_flash_read_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Time the data reads from flash in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_MEM_READ

    return _register(uc, UC_HOOK_MEM_READ, flash_read_hook, state, begin, end)


def register_ram_access_hook(uc, state: NativeState, begin: int, end: int, writes: bool) -> int:
    """Time the data reads (and, with `writes`, track the writes) of RAM in [begin, end] behind
    a data cache."""
    from unicorn import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE

    kind = UC_HOOK_MEM_READ | (UC_HOOK_MEM_WRITE if writes else 0)
    return _register(uc, kind, ram_access_hook, state, begin, end)


def register_divide_hook(uc, state: NativeState, address: int) -> int:
    """Time the divide at `address` from its operands."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, divide_hook, state, address, address)


def register_exact_pc_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Track the executing instruction's address in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, exact_pc_hook, state, begin, end)
