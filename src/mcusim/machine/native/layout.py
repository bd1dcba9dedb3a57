"""Where everything the native hooks share lives in the one int64 buffer.

Declared once, in order, with sizes: the header (counters, requests, the core model's
constants, the flash model's shared slots, one block per flash port, the power slots), then
the areas (window table, block cache, flash cache tags and line records, branch predictor),
then the tables Python reserves and the decode tables. Records (a block cache entry, a flash
port block, a window, a cache line, ...) are declared the same way, their fields as offsets
from the record's start. Offsets are assigned here by `Record.slot` in declaration order:
nothing is numbered by hand.

Every name is a plain module-level int: numba freezes them into the compiled hooks as
constants (no look-ups at run time), and Python reads and writes the same slots through them.
RECORDS lists every record with its fields (tests check there are no overlaps and that every
slot the native code uses is declared). Changing anything here changes the compiled code:
numba_cache stamps the whole package, so the cached hooks are rebuilt.
"""
from __future__ import annotations


class Record:
    """Named fields laid out one after the other; `slot` returns the next field's offset."""

    def __init__(self, name: str, start: int = 0):
        self.name, self.start, self.size = name, start, 0
        self.fields: list[tuple[str, int, int]] = []  # (name, offset from start, slots)

    def slot(self, name: str, size: int = 1) -> int:
        """The offset of a new field of `size` slots (absolute when the record has a start)."""
        offset = self.size
        self.fields.append((name, offset, size))
        self.size += size
        return self.start + offset


RECORDS: list[Record] = []


def _record(name: str, start: int = 0) -> Record:
    RECORDS.append(Record(name, start))
    return RECORDS[-1]


# -- Records (offsets from the record's start) ------------------------------------------------

# Per-window decode tables: for each of the window's halfwords + 1, FIELDS int64 side by side (one
# block's look-ups touch few cache lines). KIND holds the halfword's kind; the cumulative fields
# are prefix sums over the halfwords (value of [a, b) = t[b] - t[a]).
_row = _record("decode table row")
KIND = _row.slot("KIND")
F_CYCLES = _row.slot("F_CYCLES")
F_INSTRUCTIONS = _row.slot("F_INSTRUCTIONS")
F_FP = _row.slot("F_FP")            # floating-point instructions (NOCP check while CPACR denies the FPU)
F_UNMASK = _row.slot("F_UNMASK")    # CPSIE / MSR to a priority mask
F_ISB = _row.slot("F_ISB")          # ISB: code in RAM may have been rewritten before it
F_COUNTS = _row.slot("F_COUNTS")    # summed, packed: DWT extra load/store cycles (LSUCNT) | other extra cycles
#                                     (CPICNT) << 21 | folded instructions (FOLDCNT) << 42
F_STALLS = _row.slot("F_STALLS")    # summed, packed: refill | interlock << 21 | divide << 42 (cycles of each kind)
F_START_ADJUST = _row.slot("F_START_ADJUST")  # per instruction (not summed): extra cycles when it starts a block
F_START_FLAGS = _row.slot("F_START_FLAGS")    # per instruction (not summed): what a block start takes back:
#                     interlock cycles (bits 0-3), an IT fold (bit 4), interlock counted as LSU (bit 5) rather
#                     than CPI; on a dual-issue core (bit 6) the dual issues lost (bits 7-10, biased by 8)
F_REFILL = _row.slot("F_REFILL")    # per instruction (not summed): branch kind (1 if taken, 2 always) | fixed
#                     refill cycles << 2 | CALL_FLAG for BL/BLX (the exact profile's call tree tells calls from
#                     jumps); with a branch predictor the refill cycles are what a wrong prediction of this
#                     branch costs (0: MISPREDICT_PENALTY), and STATIC_TAKEN marks a direct unconditional branch
#                     the static predictor takes at decode when the BTAC misses, costing the cycles << STATIC_SHIFT
F_DIVIDE = _row.slot("F_DIVIDE")    # per instruction (not summed): a divide's operands (see divide_hook), else 0
F_CLASS_A = _row.slot("F_CLASS_A")  # summed, packed: instruction classes (power model): alu | multiply << 21
#                                     | simd << 42
F_CLASS_B = _row.slot("F_CLASS_B")  # fp | branch << 21 | load << 42
F_CLASS_C = _row.slot("F_CLASS_C")  # store | data words moved << 21
F_SP_WRITE = _row.slot("F_SP_WRITE")  # summed: instructions that may move SP (push, sub sp, writeback on sp, ...),
SP_SELECT = 1 << 20                   # ... and SP_SELECT for each MSR CONTROL (it may switch stacks)
F_LITERAL = _row.slot("F_LITERAL")  # per instruction (not summed): its PC-relative data read (literal load, TBB/TBH
#                                     table), packed as timing/literal_loads.py says, else 0
FIELDS = _row.size
SUMMED_FIELDS = (F_CYCLES, F_INSTRUCTIONS, F_FP, F_UNMASK, F_ISB, F_COUNTS, F_STALLS, F_CLASS_A, F_CLASS_B, F_CLASS_C,
                 F_SP_WRITE)

# A code window in the window table.
_window = _record("window")
W_BASE = _window.slot("W_BASE")
W_SIZE = _window.slot("W_SIZE")       # bytes
W_TABLES = _window.slot("W_TABLES")   # offset of its decode tables in the buffer
WINDOW = _window.size

# Block summary cache entry: what a block costs, ready to add (see block_cache._summarize), then
# what the flash fetch fast path needs (see memory_model._fetch_hits).
FAST_FETCH_LINES = 16  # blocks of more lines always take the full model (an unrolled TinyML inner loop, 13
#                        to 16 flash lines of 8 bytes, fits; their tag slots are packed two to an int64)
_entry = _record("block cache entry")  # (the fields every block reads first; 8 slots a host cache line)
E_ADDRESS = _entry.slot("E_ADDRESS")
E_SIZE = _entry.slot("E_SIZE")
E_CYCLES = _entry.slot("E_CYCLES")              # static cycles
E_INSTRUCTIONS = _entry.slot("E_INSTRUCTIONS")
E_COUNTS = _entry.slot("E_COUNTS")              # F_COUNTS summed (packed)
E_STALLS = _entry.slot("E_STALLS")              # F_STALLS summed (packed)
E_FP = _entry.slot("E_FP")                      # FP, unmask and ISB instruction counts
E_SELF_LOOP = _entry.slot("E_SELF_LOOP")        # 1: it starts with a self-loop (`b .`)
E_UNMASK = _entry.slot("E_UNMASK")
E_ISB = _entry.slot("E_ISB")
E_SP_WRITE = _entry.slot("E_SP_WRITE")          # its F_SP_WRITE count: the next block reads SP (stack peak)
E_REFILL = _entry.slot("E_REFILL")              # F_REFILL of its last instruction
E_WIDE_FIRST = _entry.slot("E_WIDE_FIRST")      # 1: its first instruction is 32-bit
E_START_ADJUST = _entry.slot("E_START_ADJUST")  # its first instruction's F_START_ADJUST ...
E_START_FLAGS = _entry.slot("E_START_FLAGS")    # ... and F_START_FLAGS
E_LITERALS = _entry.slot("E_LITERALS")          # its instructions with an F_LITERAL (timed by the block hook)
E_CLASSES = _entry.slot("E_CLASSES", 3)         # its F_CLASS_A, B and C sums
E_ENERGY_CORE = _entry.slot("E_ENERGY_CORE")    # its instructions' and data words' energy (femtojoules)
E_ENERGY_SRAM = _entry.slot("E_ENERGY_SRAM")
E_FETCH_KNOWN = _entry.slot("E_FETCH_KNOWN")    # 1 when every line of the block was found in the instruction
#                                                 cache, at the tag slots E_FETCH_SLOTS (all hits again while
#                                                 they hold them)
E_FETCH_TAGS_SEEN = _entry.slot("E_FETCH_TAGS_SEEN")  # FL_IC_TAG_CHANGES when its slots last held its lines
E_FETCH_PORT = _entry.slot("E_FETCH_PORT")      # the flash port block holding it (-1: none), found as it is summarized
E_FETCH_FIRST = _entry.slot("E_FETCH_FIRST")    # its first flash line, line count, cycles before its last line
E_FETCH_LINES = _entry.slot("E_FETCH_LINES")    # starts, and the cache tag slots of its lines
E_FETCH_BEFORE_LAST = _entry.slot("E_FETCH_BEFORE_LAST")
E_FETCH_USES_SEEN = _entry.slot("E_FETCH_USES_SEEN")  # FL_IC_USES after its fast path last used all its lines (-1: not)
E_LAST_INSN = _entry.slot("E_LAST_INSN")        # address of the block's last instruction
E_FUNCTION = _entry.slot("E_FUNCTION")          # its function in the profile's table + 1 (0: not looked up yet)
E_LINE_SLOT = _entry.slot("E_LINE_SLOT")        # its first and end halfword's slots in the line counters
E_LINE_END = _entry.slot("E_LINE_END")          # (0: not looked up yet, -1: outside them)
E_FETCH_SLOTS = _entry.slot("E_FETCH_SLOTS", (FAST_FETCH_LINES + 1) // 2)
E_AGAIN = _entry.slot("E_AGAIN")                # a run right after its own run, for the block hook's repeat
#                                                 path (core_timing.again_deltas): 0, none; else its kind, start
#                                                 adjustment, FP mark and refill cycles or predictor set, packed
E_AGAIN_DELTAS = _entry.slot("E_AGAIN_DELTAS", 7)  # what such a run adds to AGAIN_COUNTERS
CACHE_ENTRY = _entry.size
HOST_LINE_SLOTS = 8  # int64 slots in a host cache line (64 bytes): the state buffer starts on one (state.py)
assert CACHE_ENTRY % HOST_LINE_SLOTS == 0, "a block cache entry is whole host cache lines"

# A block's record in the sampled timing's table (machine/data_sampling.py), direct-mapped by block
# address: the sampled memory's wait and flash reads timed after the block began and its own
# instruction-fetch wait, summed over its runs in the window open now, and from the last window it
# ran in, what one run adds between windows (units of 2**-RATE_SHIFT; -1: none yet). Eight slots:
# one host cache line.
_sampled = _record("sampled block")
S_ADDRESS = _sampled.slot("S_ADDRESS")
S_WAIT = _sampled.slot("S_WAIT")
S_READS = _sampled.slot("S_READS")
S_RUNS = _sampled.slot("S_RUNS")
S_WAIT_RATE = _sampled.slot("S_WAIT_RATE")
S_READS_RATE = _sampled.slot("S_READS_RATE")
S_FETCH = _sampled.slot("S_FETCH")
S_FETCH_RATE = _sampled.slot("S_FETCH_RATE")
SAMPLED_BLOCK = _sampled.size
SAMPLED_BLOCKS = 16384

# A cache's control slots in a flash port block (FL_IC_ON or FL_DC_ON is the first).
_cache = _record("cache control")
CACHE_ON = _cache.slot("CACHE_ON")
CACHE_SETS = _cache.slot("CACHE_SETS")
CACHE_WAYS = _cache.slot("CACHE_WAYS")
CACHE_TAGS = _cache.slot("CACHE_TAGS")   # offset of its tag array (FL_CACHE_LINE slots per line)
CACHE_CONTROL = _cache.size

# A line in a cache's tag array.
_line = _record("cache line")
LINE_TAG = _line.slot("LINE_TAG")            # the line + 1 (negated while dirty; 0: empty)
LINE_LAST_USE = _line.slot("LINE_LAST_USE")  # FL_USE_CLOCK at its last use (least recently used replacement)
FL_CACHE_LINE = _line.size

# An address range a flash port reads through (a literal range uses the first two fields).
_range = _record("port range")
RANGE_START = _range.slot("RANGE_START")
RANGE_END = _range.slot("RANGE_END")
RANGE_LINE_OFFSET = _range.slot("RANGE_LINE_OFFSET")  # line offset of its start (flash ranges)
FL_RANGE = _range.size
FL_LITERAL_RANGE = RANGE_END + 1

# What the executing block fetched from flash, per line that waited or missed.
_fetched = _record("fetched line")
REC_ADDRESS = _fetched.slot("REC_ADDRESS")
REC_STALL = _fetched.slot("REC_STALL")
REC_CONTENTION = _fetched.slot("REC_CONTENTION")
REC_MISSED = _fetched.slot("REC_MISSED")     # the missed line + 1, or 0
FL_RECORD = _fetched.size

# What the executing block's literal reads (F_LITERAL) cost, one record per read of flash.
_literal = _record("literal read")
LIT_INSN = _literal.slot("LIT_INSN")      # the reading instruction's address
LIT_WAIT = _literal.slot("LIT_WAIT")      # its wait cycles
LIT_PORT = _literal.slot("LIT_PORT")      # the port block it read through
LIT_MISSED = _literal.slot("LIT_MISSED")  # the data cache line it missed and allocated + 1, 0 on a hit, -1: no cache
LITERAL_RECORD = _literal.size

# Flash timing (flash_timing.py configures it; docs/timing.md "Memory timing"): one block of
# FL_PORT_SLOTS per flash port (a path from the core to the flash with its own caches: e.g. the
# STM32F7's AXIM and ITCM interfaces), whose slots are these offsets into the block.
FL_MAX_RANGES = 4
_port = _record("flash port")
FL_ACTIVE = _port.slot("FL_ACTIVE")            # 1 while instruction fetch from flash can stall
FL_RANGE_COUNT = _port.slot("FL_RANGE_COUNT")  # address ranges that read through the port ...
FL_RANGE_TABLE = _port.slot("FL_RANGE_TABLE", FL_RANGE * FL_MAX_RANGES)  # ... up to FL_MAX_RANGES of them
FL_LINE_SHIFT = _port.slot("FL_LINE_SHIFT")    # log2 of the flash line (one read)
FL_FETCH_WAIT = _port.slot("FL_FETCH_WAIT")    # cycles an instruction fetch from flash waits
FL_DATA_WAIT = _port.slot("FL_DATA_WAIT")      # cycles a data read from flash waits
FL_PREFETCH = _port.slot("FL_PREFETCH")        # 1: the next sequential line is read ahead
FL_IC_ON = _port.slot("FL_IC_ON", CACHE_CONTROL)  # instruction cache: enabled, sets, ways, tag array
FL_IC_SETS = FL_IC_ON + CACHE_SETS
FL_IC_WAYS = FL_IC_ON + CACHE_WAYS
FL_IC_TAGS = FL_IC_ON + CACHE_TAGS
FL_DC_ON = _port.slot("FL_DC_ON", CACHE_CONTROL)  # data cache: the same (the instruction cache's tags: unified)
FL_DC_SETS = FL_DC_ON + CACHE_SETS
FL_DC_WAYS = FL_DC_ON + CACHE_WAYS
FL_DC_TAGS = FL_DC_ON + CACHE_TAGS
FL_BUFFER_LINE = _port.slot("FL_BUFFER_LINE")        # the line the fetch buffer holds (-1: none)
FL_PREFETCH_LINE = _port.slot("FL_PREFETCH_LINE")    # the line being prefetched (-1: none) ...
FL_PREFETCH_READY = _port.slot("FL_PREFETCH_READY")  # ... the cycle it arrives ...
FL_PREFETCH_DELAY = _port.slot("FL_PREFETCH_DELAY")  # ... and how long data reads held it up
FL_IC_HITS = _port.slot("FL_IC_HITS")
FL_IC_MISSES = _port.slot("FL_IC_MISSES")
FL_DC_HITS = _port.slot("FL_DC_HITS")
FL_DC_MISSES = _port.slot("FL_DC_MISSES")
FL_NO_LINE_BUFFER = _port.slot("FL_NO_LINE_BUFFER")  # 1: a branch target is read again even if it is in the
#                                                      line last read
FL_RAM_WAIT = _port.slot("FL_RAM_WAIT")              # cycles a data read from the RAM behind the port's data
#                                                      cache waits (a miss, or the data cache off); its ranges are
#                                                      cached_ram.py's runs (RR_PORT), where lines are numbered by
#                                                      address
FL_WRITEBACK_WAIT = _port.slot("FL_WRITEBACK_WAIT")  # cycles a read miss also waits when the line it replaces is dirty
FL_DC_WRITEBACKS = _port.slot("FL_DC_WRITEBACKS")    # dirty data cache lines written back (replaced or cleaned)
FL_PORT_SLOTS = _port.size
FL_MAX_PORTS = 2
FL_MAX_CACHE_LINES = 2048  # per cache: sets x ways
FL_CACHE_SLOTS = FL_CACHE_LINE * FL_MAX_CACHE_LINES
FL_MAX_BLOCK_LINES = 512   # a translated block stays inside one 1 KB page: 512 lines of 2 bytes at most

# A branch target address cache entry (core_timing._predict).
_btac = _record("branch predictor entry")
BT_BRANCH = _btac.slot("BT_BRANCH")      # branch address + 1 (0 = empty)
BT_TARGET = _btac.slot("BT_TARGET")
BT_COUNTER = _btac.slot("BT_COUNTER")    # 2-bit counter
BT_LAST_USE = _btac.slot("BT_LAST_USE")  # the PREDICTED count at its last use
BTAC_ENTRY = _btac.size
MAX_PREDICTOR_ENTRIES = 1024

# Records of the tables Python reserves: a PC sample, a branch trace record, a power snapshot.
_sample = _record("PC sample")
SAMPLE_AT_CYCLE = _sample.slot("SAMPLE_AT_CYCLE")
SAMPLE_PC = _sample.slot("SAMPLE_PC")
SAMPLE_RECORD = _sample.size
_trace = _record("branch trace record")
TR_KIND_CYCLE = _trace.slot("TR_KIND_CYCLE")  # kind << 56 | cycle
TR_SOURCE = _trace.slot("TR_SOURCE")
TR_TARGET = _trace.slot("TR_TARGET")
TRACE_RECORD = _trace.size
_snapshot = _record("power snapshot")
SN_CYCLE = _snapshot.slot("SN_CYCLE")
SN_CORE = _snapshot.slot("SN_CORE")    # femtojoules so far per rail
SN_SRAM = _snapshot.slot("SN_SRAM")
SN_FLASH = _snapshot.slot("SN_FLASH")
SNAPSHOT = _snapshot.size

# DWT event counter packets (dwt_events.counter_events; analysis/swo.py CounterEvents): the table at
# COUNTER_EVENTS, then the records (flag << 56 | cycle).
_events = _record("counter event table")
EV_COUNT = _events.slot("EV_COUNT")                # records kept
EV_CAPACITY = _events.slot("EV_CAPACITY")          # how many fit
EV_DROPPED = _events.slot("EV_DROPPED")            # how many did not
EV_FIRST_DROPPED = _events.slot("EV_FIRST_DROPPED")  # the cycle of the first that did not
EV_SINCE = _events.slot("EV_SINCE")                # the cycle of the last counter_events call
EV_COUNTERS = _events.slot("EV_COUNTERS", 2 * 3)   # per counter (CPICNT, LSUCNT, FOLDCNT): EV_COUNTER slots
EV_RECORDS = _events.size
EV_NEVER = 1 << 62  # (EV_WRAP_AT of a counter whose event is off)
_counter = _record("counter event counter")
EV_WRAP_AT = _counter.slot("EV_WRAP_AT")           # the total at which it next wraps past 255 (EV_NEVER: off)
EV_LAST_TOTAL = _counter.slot("EV_LAST_TOTAL")     # its total at the last call
EV_COUNTER = _counter.size

# The exact profile's table (at PROFILE_TABLE; analysis/profile.py builds it): n, then n function
# starts and n ends (sorted), then n + PROFILE_EXTRA exclusive-cycle totals and as many call
# counts (the extra rows collect code outside every function, exception entry and return, and
# sleep). Then the call tree: these meta slots, the nodes, a hash table of (parent, function) ->
# node + 1 with twice as many slots as nodes, MAX_LINE_RANGES line ranges, the line counters and
# the per-function energy. (Those parts are sized by n and the tree's capacity at run time.)
PROFILE_EXTRA = 3
_meta = _record("call tree meta")
TREE_NODE = _meta.slot("TREE_NODE")            # the current node
TREE_COUNT = _meta.slot("TREE_COUNT")          # nodes in use
TREE_CAPACITY = _meta.slot("TREE_CAPACITY")
TREE_OVERFLOWS = _meta.slot("TREE_OVERFLOWS")  # calls that found the tree full
TREE_LINE_RANGES = _meta.slot("TREE_LINE_RANGES")  # the line counters (profile._count_lines): code ranges covered,
TREE_LINE_SLOT = _meta.slot("TREE_LINE_SLOT")      # and the block that ran last: its first and end slots,
TREE_LINE_END = _meta.slot("TREE_LINE_END")
TREE_LINE_START = _meta.slot("TREE_LINE_START")    # start cycle
TREE_LINE_STATIC = _meta.slot("TREE_LINE_STATIC")  # and static cycles
TREE_ENERGY = _meta.slot("TREE_ENERGY")        # where the per-function dynamic energy (femtojoules) is
TREE_RESUMING = _meta.slot("TREE_RESUMING")    # 1 between an exception return and the code it resumes
TREE_FULL_FROM = _meta.slot("TREE_FULL_FROM")  # the node below which the tree found no room
TREE_LOG = _meta.slot("TREE_LOG")              # the call log (0: none): (cycle, node) at each move of TREE_NODE,
TREE_LOG_CAPACITY = _meta.slot("TREE_LOG_CAPACITY")  # in time order (the evented profile, the timeline's
TREE_LOG_COUNT = _meta.slot("TREE_LOG_COUNT")        # functions: analysis/profile.py call_spans)
TREE_LOG_DROPPED = _meta.slot("TREE_LOG_DROPPED")
PROFILE_TREE_META = _meta.size
_log = _record("call log row")
LOG_CYCLE = _log.slot("LOG_CYCLE")  # the cycle the call tree moved at
LOG_NODE = _log.slot("LOG_NODE")    # the node it moved to
CALL_LOG_ROW = _log.size
_node = _record("call tree node")
NODE_PARENT = _node.slot("NODE_PARENT")
NODE_FUNCTION = _node.slot("NODE_FUNCTION")
NODE_CYCLES = _node.slot("NODE_CYCLES")        # exclusive cycles
NODE_CALLS = _node.slot("NODE_CALLS")
NODE_RETURNS_TO = _node.slot("NODE_RETURNS_TO")  # the return address of its last call
PROFILE_NODE = _node.size
_line_range = _record("line range")
LR_START = _line_range.slot("LR_START")
LR_END = _line_range.slot("LR_END")
LR_COUNTERS = _line_range.slot("LR_COUNTERS")  # offset of its counters (two per halfword)
LINE_RANGE = _line_range.size
MAX_LINE_RANGES = 8
_line_counter = _record("line counter")  # per halfword of a line range
LC_RUNS = _line_counter.slot("LC_RUNS")  # +1 where a block starts, -1 where it ends (running sum: times run)
LC_EXTRA_CYCLES = _line_counter.slot("LC_EXTRA_CYCLES")  # cycles of blocks starting here beyond their static cost
LINE_COUNTER = _line_counter.size

_traffic_range = _record("traffic range")
TRAFFIC_START = _traffic_range.slot("TRAFFIC_START")
TRAFFIC_END = _traffic_range.slot("TRAFFIC_END")    # (exclusive)
TRAFFIC_BANK = _traffic_range.slot("TRAFFIC_BANK")  # the bank it counts in (an alias: the bank it shows)
TRAFFIC_RANGE = _traffic_range.size
_traffic_counter = _record("traffic counter")
TRAFFIC_READ = _traffic_counter.slot("TRAFFIC_READ")        # bytes loaded from the bank
TRAFFIC_WRITTEN = _traffic_counter.slot("TRAFFIC_WRITTEN")  # bytes stored to it
TRAFFIC_COUNTER = _traffic_counter.size

# A run of flash pages that hold only data, mapped as MMIO (machine/flash_data_pages.py): the
# read callback's own small int64 array (its user_data), not a part of the buffer.
_data_run = _record("flash data run")
RUN_STATE = _data_run.slot("RUN_STATE")  # the buffer's address (updated when it moves)
RUN_BASE = _data_run.slot("RUN_BASE")    # the run's first address
RUN_BYTES = _data_run.slot("RUN_BYTES")  # host address of its bytes (in the flash's storage buffer)
RUN_TIMED = _data_run.slot("RUN_TIMED")  # 1 while its port times data reads (what the flash read hook did)
RUN_SAMPLED = _data_run.slot("RUN_SAMPLED")  # 1: a data page run, whose reads sampled data timing counts
RUN_PORT = _data_run.slot("RUN_PORT")    # the port block that reads it (-1: none; PORT_UNKNOWN until its first
#                                          timed read)
RUN_PORT_OFFSET = _data_run.slot("RUN_PORT_OFFSET")  # its first address's port offset (flash_offset), with RUN_PORT
DATA_RUN = _data_run.size
PORT_UNKNOWN = -2

# The console UART's page served natively (machine/console_uart.py): the read and write callbacks'
# own small int64 array (their user_data, not a part of the buffer). The two registers a polled
# printf touches, the status read and the transmit write, are answered here; any other access is
# passed to the Python models through a callback pointer.
_console = _record("console UART page")
U_STATE = _console.slot("U_STATE")          # the buffer's address (updated when it moves): its DEADLINE
U_STATUS = _console.slot("U_STATUS")        # offset in the page of the status word the firmware polls
U_STATUS_VALUE = _console.slot("U_STATUS_VALUE")  # what it reads (the model's value, refreshed by Python)
U_DATA = _console.slot("U_DATA")            # offset in the page of the transmit data word
U_TX_ON = _console.slot("U_TX_ON")          # 1: a write to it transmits (the model's enable bits)
U_READ_FALLBACK = _console.slot("U_READ_FALLBACK")    # address of the Python read callback (other words)
U_WRITE_FALLBACK = _console.slot("U_WRITE_FALLBACK")  # address of the Python write callback
U_BYTES = _console.slot("U_BYTES")          # host address of the transmitted bytes' buffer
U_LENGTH = _console.slot("U_LENGTH")        # bytes in it that Python has not taken yet
U_CAPACITY = _console.slot("U_CAPACITY")    # its size
U_STOP_AT = _console.slot("U_STOP_AT")      # at this length, stop at the next block so Python takes them
CONSOLE_PAGE = _console.size

# The table the TLB fill hook reads (hooks.code_page_tlb_fill; its user_data, not a part of the
# buffer): the flash code pages whose data reads go to an MMIO alias, a flash data run of their
# own mapped at CODE_ALIAS_OFFSET + their address (machine/flash_data_pages.py).
CODE_ALIAS_OFFSET = 1 << 32  # above the 32-bit address space the firmware can reach
PLAIN_ALIAS_OFFSET = 2 << 32  # the data pages' plain read-only aliases (FlashDataPages.sample_plain)
MAX_CODE_ALIASES = 16
MAX_PLAIN_RUNS = 16  # data page runs sampled data timing reads plain between its windows (the others: timed whole)
_alias = _record("code page alias")
AL_BEGIN = _alias.slot("AL_BEGIN")  # [begin, end) of the code pages
AL_END = _alias.slot("AL_END")
assert (AL_BEGIN, AL_END) == (RANGE_START, RANGE_END), "memory_model.in_ranges reads both tables alike"
CODE_ALIAS = _alias.size
# RAM behind a data cache (mcu-d's SRAM1 and SRAM2): while its port times its accesses, the TLB
# fill hook sends its loads and stores to an MMIO alias at RAM_ALIAS_OFFSET + their address, whose
# callbacks time them (machine/cached_ram.py). A memory hook did it before: while one is held,
# every load and store of the program takes Unicorn's slow path, and each in its range makes
# Unicorn re-derive the PC.
RAM_ALIAS_OFFSET = 3 << 32
ALIAS_ADDRESS_MASK = (1 << 32) - 1  # every alias above sits at k << 32 + the address it shows: this gives it back
MAX_RAM_ALIASES = 4
_ram_alias = _record("cached RAM alias")
RA_BEGIN = _ram_alias.slot("RA_BEGIN")  # [begin, end) of the RAM range
RA_END = _ram_alias.slot("RA_END")
RA_TIMED = _ram_alias.slot("RA_TIMED")  # 1: its loads and stores go to the alias now
RA_RUN = _ram_alias.slot("RA_RUN")      # host address of its run (RR_*)
RAM_ALIAS = _ram_alias.size
_aliases = _record("code alias table")
AT_COUNT = _aliases.slot("AT_COUNT")  # aliases in use (0: every page maps to itself)
AT_FILLS = _aliases.slot("AT_FILLS")  # TLB fills that mapped a page to its alias (a count, for measurements)
AT_SCRATCH = _aliases.slot("AT_SCRATCH")  # uc_reg_write reads the IT state the fill restores from here
AT_ENTRIES = _aliases.slot("AT_ENTRIES", CODE_ALIAS * MAX_CODE_ALIASES)
AT_RAM_COUNT = _aliases.slot("AT_RAM_COUNT")  # RAM ranges behind a data cache (machine/cached_ram.py)
AT_RAM_ENTRIES = _aliases.slot("AT_RAM_ENTRIES", RAM_ALIAS * MAX_RAM_ALIASES)
AT_PLAIN_COUNT = _aliases.slot("AT_PLAIN_COUNT")  # data page runs whose reads go to their plain aliases now
AT_PLAIN_ENTRIES = _aliases.slot("AT_PLAIN_ENTRIES", CODE_ALIAS * MAX_PLAIN_RUNS)  # (sampled data timing, between
#                                                 windows: machine/data_sampling.py), [begin, end) as AL_BEGIN, AL_END
ALIAS_TABLE = _aliases.size
_ram_run = _record("cached RAM run")  # the RAM alias's read and write callbacks' user_data
RR_STATE = _ram_run.slot("RR_STATE")  # the buffer's address (updated when it moves)
RR_BASE = _ram_run.slot("RR_BASE")    # the range's first address
RR_BYTES = _ram_run.slot("RR_BYTES")  # host address of its bytes (the RAM's storage buffer)
RR_PAGE_SHIFT = _ram_run.slot("RR_PAGE_SHIFT")  # log2 of Unicorn's page size
RR_PORT = _ram_run.slot("RR_PORT")    # the block of the port whose data cache serves the range
RAM_RUN = _ram_run.size  # followed by one slot per page of the range: 1 once code was fetched from it

# -- The buffer: header, then areas --------------------------------------------------------------
MAX_WINDOWS = 1024
CACHE_ENTRIES = 4096     # block cache entries, direct-mapped by block address
CLASS_NAMES = ("alu", "multiply", "simd", "fp", "branch", "load", "store")
_buffer = _record("buffer")

# Header: counters, requests between Python and the hooks, core constants.
CYCLES = _buffer.slot("CYCLES")
INSTRUCTIONS = _buffer.slot("INSTRUCTIONS")
DEADLINE = _buffer.slot("DEADLINE")            # stop before the first block that starts at cycles >= DEADLINE
STOP_REASON = _buffer.slot("STOP_REASON")
STOP_ADDRESS = _buffer.slot("STOP_ADDRESS")
STOP_SIZE = _buffer.slot("STOP_SIZE")
BLOCK_ADDRESS = _buffer.slot("BLOCK_ADDRESS")  # the block executing now (last one the hook let run)
BLOCK_SIZE = _buffer.slot("BLOCK_SIZE")
LAST_WINDOW = _buffer.slot("LAST_WINDOW")      # the window of the last block (checked first)
FPU_ENABLED = _buffer.slot("FPU_ENABLED")
WINDOW_COUNT = _buffer.slot("WINDOW_COUNT")
TOTAL_LENGTH = _buffer.slot("TOTAL_LENGTH")    # the buffer's length (the hooks see only a pointer)
PENDING_MASKED = _buffer.slot("PENDING_MASKED")  # an enabled exception is pending but masked: stop after unmasking
WATCH_ISB = _buffer.slot("WATCH_ISB")          # code was decoded from writable memory: stop after an ISB
CODE_PC = _buffer.slot("CODE_PC")              # PC of the executing instruction, where the exact-PC code hook is
#                                                installed (else -1)
REFILL_BRANCH = _buffer.slot("REFILL_BRANCH")      # core data: cycles a taken branch adds (P) ...
REFILL_WIDE_ODD = _buffer.slot("REFILL_WIDE_ODD")  # ... and again when its target is a 32-bit instruction at an
#                                                    odd halfword
LSU_TOTAL = _buffer.slot("LSU_TOTAL")          # DWT LSUCNT / CPICNT / FOLDCNT events, unwrapped
CPI_TOTAL = _buffer.slot("CPI_TOTAL")
FOLD_TOTAL = _buffer.slot("FOLD_TOTAL")
PREDICTOR_WAYS = _buffer.slot("PREDICTOR_WAYS")  # branch target address cache ways
REFILL_TOTAL = _buffer.slot("REFILL_TOTAL")    # cycles spent refilling the pipeline (taken branches, loads into PC)
ENDS_IN_BRANCH = _buffer.slot("ENDS_IN_BRANCH")  # F_REFILL of the last instruction of the block that ran last
BLOCK_ADJUSTED = _buffer.slot("BLOCK_ADJUSTED")  # 1 when the executing block was entered out of sequence
DIVIDE_TOTAL = _buffer.slot("DIVIDE_TOTAL")    # cycles divides took beyond their static minimum
DIVIDE_ZERO = _buffer.slot("DIVIDE_ZERO")      # core data for divide early termination (cores/*.toml)
DIVIDE_SHORT = _buffer.slot("DIVIDE_SHORT")
DIVIDE_BASE = _buffer.slot("DIVIDE_BASE")
DIVIDE_BITS_PER_CYCLE = _buffer.slot("DIVIDE_BITS_PER_CYCLE")
DIVIDE_MIN = _buffer.slot("DIVIDE_MIN")
SCRATCH = _buffer.slot("SCRATCH")              # uc_reg_read writes here
PREVIOUS_END = _buffer.slot("PREVIOUS_END")    # end address of the block that ran last (kept across Python stops)
INTERLOCK_TOTAL = _buffer.slot("INTERLOCK_TOTAL")  # address-interlock stall cycles
# The counters add_static and _start_adjust change besides INSTRUCTIONS: E_AGAIN_DELTAS, in this order.
AGAIN_COUNTERS = (CYCLES, LSU_TOTAL, CPI_TOTAL, FOLD_TOTAL, REFILL_TOTAL, INTERLOCK_TOTAL, DIVIDE_TOTAL)
assert len(AGAIN_COUNTERS) == _entry.fields[-1][2], "an E_AGAIN_DELTAS slot per counter"
DATA_WAIT_TOTAL = _buffer.slot("DATA_WAIT_TOTAL")  # wait cycles of data reads from slow memory
PREVIOUS_UNMASK = _buffer.slot("PREVIOUS_UNMASK")  # CPSIE/MSR-mask count of the block that ran last
PREVIOUS_ISB = _buffer.slot("PREVIOUS_ISB")    # ISB count of the block that ran last
LAZY_FP_PENDING = _buffer.slot("LAZY_FP_PENDING")  # 1: an exception reserved FP context space lazily (FPCCR.LSPACT);
#                                                    the next FP instruction stores it, costing LAZY_FP_CYCLES
LAZY_FP_CYCLES = _buffer.slot("LAZY_FP_CYCLES")
LAZY_FP_TOTAL = _buffer.slot("LAZY_FP_TOTAL")  # cycles spent on lazy FP context stores
LAZY_FP_AT = _buffer.slot("LAZY_FP_AT")        # address of the FP instruction of the executing block that stored it
PREDICTOR_SETS = _buffer.slot("PREDICTOR_SETS")  # branch target address cache sets (0: none, the refill rule)
MISPREDICT_PENALTY = _buffer.slot("MISPREDICT_PENALTY")
MISPREDICTS = _buffer.slot("MISPREDICTS")      # branches the predictor got wrong ...
PREDICTED = _buffer.slot("PREDICTED")          # ... of those it predicted
PREVIOUS_BRANCH_AT = _buffer.slot("PREVIOUS_BRANCH_AT")  # address of the last instruction of the block that ran last
PROFILE_TABLE = _buffer.slot("PROFILE_TABLE")  # offset of the exact profile's table (0: profiling off)
PROFILE_FUNCTION = _buffer.slot("PROFILE_FUNCTION")  # the function the cycles since PROFILE_SINCE belong to
PROFILE_SINCE = _buffer.slot("PROFILE_SINCE")
SAMPLE_TABLE = _buffer.slot("SAMPLE_TABLE")    # PC sampling (sampling._take_samples): where the samples go (0: off),
SAMPLE_PERIOD = _buffer.slot("SAMPLE_PERIOD")  # ... a sample every SAMPLE_PERIOD cycles, ...
SAMPLE_NEXT = _buffer.slot("SAMPLE_NEXT")      # ... the cycle of the next one, ...
SAMPLE_COUNT = _buffer.slot("SAMPLE_COUNT")    # ... how many are stored, ...
SAMPLE_CAPACITY = _buffer.slot("SAMPLE_CAPACITY")  # ... how many fit, ...
SAMPLE_DROPPED = _buffer.slot("SAMPLE_DROPPED")  # ... and how many did not
SAMPLE_BLOCK_START = _buffer.slot("SAMPLE_BLOCK_START")  # the cycle count when the block that ran last started
TRACE_TABLE = _buffer.slot("TRACE_TABLE")      # branch trace (branch_trace._trace): where the records go (0: off),
TRACE_COUNT = _buffer.slot("TRACE_COUNT")      # ... how many are stored, ...
TRACE_CAPACITY = _buffer.slot("TRACE_CAPACITY")  # ... how many fit, ...
TRACE_DROPPED = _buffer.slot("TRACE_DROPPED")  # ... how many did not, ...
TRACE_STATE = _buffer.slot("TRACE_STATE")      # ... waiting for the window (0), recording (1), window over (2), ...
TRACE_FROM = _buffer.slot("TRACE_FROM")        # ... the window: starts at this address (-1: at once) and cycle, ...
TRACE_FROM_CYCLE = _buffer.slot("TRACE_FROM_CYCLE")
TRACE_TO = _buffer.slot("TRACE_TO")            # ... and ends at this address (-1: never) or cycle
TRACE_TO_CYCLE = _buffer.slot("TRACE_TO_CYCLE")
TRACE_HELD = _buffer.slot("TRACE_HELD")        # a block whose incoming branch is recorded but has not run (else -1)
COUNTER_EVENTS = _buffer.slot("COUNTER_EVENTS")  # DWT event counter packets: the table (0: no event enabled)
CYCLE_LIMIT = _buffer.slot("CYCLE_LIMIT")      # the run's cycle limit: stop before a block that would reach it
#                                                before its last instruction
STEP_LIMIT = _buffer.slot("STEP_LIMIT")        # stop before the first block that starts with INSTRUCTIONS >=
#                                                STEP_LIMIT (as DEADLINE)
PREVIOUS_SP_WRITE = _buffer.slot("PREVIOUS_SP_WRITE")  # the block that ran last may have moved SP (or Python did)
SP_LOWEST = _buffer.slot("SP_LOWEST")          # the lowest SP a block started with since Python last reset it,
SP_LOWEST_AT = _buffer.slot("SP_LOWEST_AT")    # ... that block's address (-1: none yet), counting only an SP
SP_FLOOR = _buffer.slot("SP_FLOOR")            # ... at or above SP_FLOOR: the main stack's space (analysis/memory.py)
PSP_LOWEST = _buffer.slot("PSP_LOWEST")        # the same for the process stack (Thread mode with CONTROL.SPSEL set):
PSP_LOWEST_AT = _buffer.slot("PSP_LOWEST_AT")  # ... its lowest SP and that block over the whole run, and its highest
PSP_HIGHEST = _buffer.slot("PSP_HIGHEST")      # ... (-1: the process stack was never in use)
PAID_FROM = _buffer.slot("PAID_FROM")          # run control paused inside a block, already charged whole: a block
PAID_TO = _buffer.slot("PAID_TO")              # ... starting at PAID_FROM (up to PAID_TO) costs nothing (-1: none)
ON_PROCESS_STACK = _buffer.slot("ON_PROCESS_STACK")  # CONTROL.SPSEL as last read (after an MSR CONTROL, Python)
# A tight loop's held repeats (held_repeats.py)
HELD_KEY = _buffer.slot("HELD_KEY")            # the block whose repeats are held: address << 20 | size (0: none)
HELD_ROOM = _buffer.slot("HELD_ROOM")          # cycles before the first limit a repeat may not start at or past
HELD_COST = _buffer.slot("HELD_COST")          # ... less each repeat's cycles, held while the room is above 0
HELD_RUNS = _buffer.slot("HELD_RUNS")          # repeats held: not yet added to the counters
HELD_SEEN = _buffer.slot("HELD_SEEN")          # repeats the first path counted since the last block that was none
HELD_ENTRY = _buffer.slot("HELD_ENTRY")        # the block's cache entry
HELD_SLOT = _buffer.slot("HELD_SLOT")          # its branch predictor entry, predicted each repeat (-1: none)
HELD_REFILL = _buffer.slot("HELD_REFILL")      # the refill cycles each repeat adds before the block's own
HELD_REFUSED = _buffer.slot("HELD_REFUSED")    # the key of a block whose hold a hook ended: not held again
HELD_RECORD = _buffer.slot("HELD_RECORD")      # its sampled timing record, whose estimates each repeat adds (-1: none)
HELD_TOTAL = _buffer.slot("HELD_TOTAL")        # repeats held and released so far (tests, benchmarks) ...
HOLDS = _buffer.slot("HOLDS")                  # ... in this many holds
HOLD_REPEATS = _buffer.slot("HOLD_REPEATS")    # 1: hold repeats (0: count each in the first path; tests compare)
HOOK_TARGET = _buffer.slot("HOOK_TARGET")      # the block hook variant's address, which held_front.py calls
# (room for the regions, up to 16 code page aliases, 16 plain aliases and the RAM aliases)
MAX_TRAFFIC_RANGES = 48                        # memory traffic (--memory-traffic; analysis/roofline.py): the data
TRAFFIC_RANGE_COUNT = _buffer.slot("TRAFFIC_RANGE_COUNT")  # bytes loads and stores move per memory bank, counted
TRAFFIC_RANGES = _buffer.slot("TRAFFIC_RANGES", TRAFFIC_RANGE * MAX_TRAFFIC_RANGES)  # over these ranges ...
TRAFFIC_BYTES = _buffer.slot("TRAFFIC_BYTES", TRAFFIC_COUNTER * MAX_TRAFFIC_RANGES)  # ... into a counter per bank

# Header: the flash timing model's shared slots, then one block per port (flash_timing.py).
FL_FIRST_SLOT = _buffer.start + _buffer.size
FL_PORT_COUNT = _buffer.slot("FL_PORT_COUNT")  # ports in use
FL_CURRENT = _buffer.slot("FL_CURRENT")        # the block of the port the executing block reads (-1: none)
FL_FETCH_TOTAL = _buffer.slot("FL_FETCH_TOTAL")  # cycles of instruction-fetch waits
FL_CONTENTION_TOTAL = _buffer.slot("FL_CONTENTION_TOTAL")  # cycles instruction fetches lost to data reads of flash
FL_USE_CLOCK = _buffer.slot("FL_USE_CLOCK")    # counts cache accesses (least-recently-used replacement)
FL_IC_TAG_CHANGES = _buffer.slot("FL_IC_TAG_CHANGES")  # counts changes of instruction-cache tags (a line filled,
#                                                       invalidated, made dirty or clean; any port) ...
FL_IC_USES = _buffer.slot("FL_IC_USES")        # ... and writes of their last uses (memory_model._fetch)
FL_BLOCK_START = _buffer.slot("FL_BLOCK_START")  # cycle count when the executing block began
FL_BLOCK_LINES = _buffer.slot("FL_BLOCK_LINES")  # fetched-line records of the executing block
FL_LINE_RECORDS = _buffer.slot("FL_LINE_RECORDS")  # offset of those records in the buffer
FL_BLOCK_LITERALS = _buffer.slot("FL_BLOCK_LITERALS")  # literal read records of the executing block (at
#                                                        LITERAL_RECORD_AREA)
MAX_LITERAL_RANGES = 16
FL_LITERAL_RANGE_COUNT = _buffer.slot("FL_LITERAL_RANGE_COUNT")  # flash ranges (code pages) whose literal reads the
FL_LITERAL_RANGES = _buffer.slot("FL_LITERAL_RANGES", FL_LITERAL_RANGE * MAX_LITERAL_RANGES)  # block hook times
#                                                                                                (start, end each)
SAMPLING = _buffer.slot("SAMPLING")  # sampled data timing (machine/data_sampling.py): NOT_SAMPLED, LEARNING (a
#                                      window: the sampled memory is timed access by access) or ESTIMATING
SAMPLED_WAIT = _buffer.slot("SAMPLED_WAIT")    # wait cycles of the sampled memory's accesses, as timed; the flash
SAMPLED_READS = _buffer.slot("SAMPLED_READS")  # reads they and, in windows, the fetch model made; and the fetch
SAMPLED_FETCH = _buffer.slot("SAMPLED_FETCH")  # model's waits in windows (contention included)
LEARN_RECORD = _buffer.slot("LEARN_RECORD")    # in a window: the record of the block running (-1: none), its
LEARN_ADDRESS = _buffer.slot("LEARN_ADDRESS")  # address, and SAMPLED_WAIT, SAMPLED_READS and SAMPLED_FETCH as it began
LEARN_WAIT_AT = _buffer.slot("LEARN_WAIT_AT")
LEARN_READS_AT = _buffer.slot("LEARN_READS_AT")
LEARN_FETCH_AT = _buffer.slot("LEARN_FETCH_AT")
NEW_RECORD_AT = _buffer.slot("NEW_RECORD_AT")  # in a window: the cycle a block last took an empty record (new code)
WINDOW_USE_START = _buffer.slot("WINDOW_USE_START")  # FL_USE_CLOCK as the window opened
MISS_STALE = _buffer.slot("MISS_STALE")  # 1: the last data cache miss, of a cache that also holds code, replaced
#                                          a line not used since WINDOW_USE_START, or an empty one
WAIT_CARRY = _buffer.slot("WAIT_CARRY")        # between windows: the fractions not added yet, ...
READS_CARRY = _buffer.slot("READS_CARRY")
FETCH_CARRY = _buffer.slot("FETCH_CARRY")
ESTIMATED_WAIT = _buffer.slot("ESTIMATED_WAIT")    # ... the estimated wait cycles and flash reads added so far, ...
ESTIMATED_READS = _buffer.slot("ESTIMATED_READS")
ESTIMATED_FETCH = _buffer.slot("ESTIMATED_FETCH")
WAIT_PER_CYCLE = _buffer.slot("WAIT_PER_CYCLE")    # ... for a block not run in a window, the last window's wait and
READS_PER_CYCLE = _buffer.slot("READS_PER_CYCLE")  # reads and fetch wait per core cycle (units of
FETCH_PER_CYCLE = _buffer.slot("FETCH_PER_CYCLE")  # 2**-RATE_SHIFT), ...
REQUEST_AFTER = _buffer.slot("REQUEST_AFTER")      # ... and from this cycle on, such a block asks for a window:
WINDOW_REQUESTED = _buffer.slot("WINDOW_REQUESTED")  # it sets this and stops the run
RATE_SHIFT = 20
NOT_SAMPLED, LEARNING, ESTIMATING = 0, 1, 2
FL_PORTS = _buffer.slot("FL_PORTS", FL_MAX_PORTS * FL_PORT_SLOTS)  # the first port's block
FL_LAST_SLOT = _buffer.start + _buffer.size

# Header: power accounting (power/accounting.py; docs/power.md). Always counted: instructions per
# class and data words, from the blocks' summaries; the flash line reads; the dynamic energy of
# each rail in femtojoules (class and word energies come from the power model's coefficients, set
# by Python: a block's energy is summed once per summary).
POWER_FIRST_SLOT = FL_LAST_SLOT
P_COUNTS = _buffer.slot("P_COUNTS", len(CLASS_NAMES) + 1)  # per class in CLASS_NAMES, then the data words
P_WORDS = P_COUNTS + len(CLASS_NAMES)
P_FLASH_READS = _buffer.slot("P_FLASH_READS")  # flash line reads (instruction lines and data, not cache hits)
P_ENERGY_CORE = _buffer.slot("P_ENERGY_CORE")  # femtojoules so far: instruction classes ...
P_ENERGY_SRAM = _buffer.slot("P_ENERGY_SRAM")  # ... data words ...
P_ENERGY_FLASH = _buffer.slot("P_ENERGY_FLASH")  # ... flash line reads
P_COEFFICIENTS = _buffer.slot("P_COEFFICIENTS", len(CLASS_NAMES) + 2)  # femtojoules per class, per data word,
P_COEF_WORD = P_COEFFICIENTS + len(CLASS_NAMES)                        # per flash read
P_COEF_FLASH = P_COEF_WORD + 1
P_SNAPSHOT_TABLE = _buffer.slot("P_SNAPSHOT_TABLE")  # snapshots of the energies for the power trace (0: off): ...
P_SNAPSHOT_PERIOD = _buffer.slot("P_SNAPSHOT_PERIOD")  # ... one every so many cycles, ...
P_SNAPSHOT_NEXT = _buffer.slot("P_SNAPSHOT_NEXT")
P_SNAPSHOT_COUNT = _buffer.slot("P_SNAPSHOT_COUNT")
P_SNAPSHOT_CAPACITY = _buffer.slot("P_SNAPSHOT_CAPACITY")
P_SNAPSHOT_DROPPED = _buffer.slot("P_SNAPSHOT_DROPPED")  # times the table was thinned out
P_PROFILE_SINCE = _buffer.slot("P_PROFILE_SINCE")  # the energy total when the profile last switched function
P_ENABLED = _buffer.slot("P_ENABLED")          # 1: count (a board with a power model, unless turned off)
P_PACKED = _buffer.slot("P_PACKED", 3)         # the blocks' packed class sums since the last unpack ...
P_PACKED_BLOCKS = _buffer.slot("P_PACKED_BLOCKS")  # ... over this many blocks (unpacked every UNPACK_BLOCKS)
UNPACK_BLOCKS = 128                            # x at most 8192 data words a block < 2**21: no lane overflows
POWER_LAST_SLOT = _buffer.start + _buffer.size
HEADER_LENGTH = POWER_LAST_SLOT

# Areas after the header.
WINDOW_TABLE = _buffer.slot("WINDOW_TABLE", WINDOW * MAX_WINDOWS)
BLOCK_CACHE_PADDING = _buffer.slot("BLOCK_CACHE_PADDING", -(_buffer.start + _buffer.size + 1) % HOST_LINE_SLOTS + 1)
BLOCK_CACHE = _buffer.slot("BLOCK_CACHE", CACHE_ENTRY * CACHE_ENTRIES)  # cleared whenever decoding changes tables
assert BLOCK_CACHE % HOST_LINE_SLOTS == 0, "its entries start on host cache lines"
SAMPLED_TABLE = _buffer.slot("SAMPLED_TABLE", SAMPLED_BLOCK * SAMPLED_BLOCKS)  # (machine/data_sampling.py)
assert SAMPLED_TABLE % HOST_LINE_SLOTS == 0 and SAMPLED_BLOCK == HOST_LINE_SLOTS, "a record is one host cache line"
FLASH_AREA = _buffer.slot("FLASH_AREA", FL_MAX_PORTS * 2 * FL_CACHE_SLOTS)  # per port: instruction, data cache tags
LINE_RECORD_AREA = _buffer.slot("LINE_RECORD_AREA", FL_RECORD * FL_MAX_BLOCK_LINES)  # the executing block's fetches
LITERAL_RECORD_AREA = _buffer.slot("LITERAL_RECORD_AREA", 2 * LITERAL_RECORD * FL_MAX_BLOCK_LINES)  # its literal
#                                                                                    reads (two per LDRD at most)
FL_AREA_SLOTS = LITERAL_RECORD_AREA + 2 * LITERAL_RECORD * FL_MAX_BLOCK_LINES - FLASH_AREA
BTAC_AREA = _buffer.slot("BTAC_AREA", BTAC_ENTRY * MAX_PREDICTOR_ENTRIES)
DATA_START = _buffer.start + _buffer.size  # then the tables Python reserves, then the decode tables
