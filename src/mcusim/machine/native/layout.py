"""Where everything the native hooks share lives in the one int64 buffer: header slots,
the flash port blocks, the power slots, the window table, the block cache and its entry
fields, and the areas after them. numba freezes these module-level ints into the compiled
hooks (no look-ups at run time); Python reads and writes the same slots through them."""
from __future__ import annotations



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
