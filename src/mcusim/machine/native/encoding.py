"""What the numbers stored in some slots mean: stop reasons, halfword kinds, and the packing
of the decode tables' fields (lanes, branch flags). Kept apart from the layout: these are
values, not places."""
from __future__ import annotations

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

# F_REFILL (layout.py): branch kind | refill cycles << 2 | CALL_FLAG | STATIC_TAKEN | static cycles << STATIC_SHIFT.
CALL_FLAG = 1 << 16
REFILL_CYCLES_MASK = (1 << 14) - 1
STATIC_TAKEN = 1 << 17
STATIC_SHIFT = 18
STATIC_CYCLES_MASK = 15
LANE = 21           # packed fields: three 21-bit lanes (a window's sums stay far below 2**21)
LANE_MASK = (1 << LANE) - 1

# F_LITERAL (layout.py; timing/literal_loads.py fills it): 1 | aligned base << 1 | log2(read size) << 2
# | (accesses - 1) << 4 | (a table's index register + 1) << LITERAL_INDEX_SHIFT
# | (offset + LITERAL_OFFSET_BIAS) << LITERAL_OFFSET_SHIFT.
LITERAL_INDEX_SHIFT = 5
LITERAL_OFFSET_BIAS = 1 << 12
LITERAL_OFFSET_SHIFT = 9
