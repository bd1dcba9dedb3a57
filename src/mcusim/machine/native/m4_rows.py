"""The Cortex-M4 decode rows of a code range in one native call, from each instruction's
descriptor (timing/m4_descriptors.py makes them, one per encoding met): the static row, the
cost with no instruction before it, and what the neighbour rules of timing/cortex_m4.py read
of it and of the instruction before (IT folding, load pipelining, address and FP-result
interlocks). Python then runs once per encoding met, not once per instruction.
"""
from __future__ import annotations

from .encoding import KIND_CONTINUATION, KIND_SELF_LOOP, KIND_START, LANE
from .jit import njit
from .layout import (F_COUNTS, F_CYCLES, F_INSTRUCTIONS, F_LITERAL, F_REFILL, F_STALLS, F_START_ADJUST,
                     F_START_FLAGS, FIELDS, KIND)

# A descriptor's fields (one int64 row per encoding; D_STATIC.. holds its static row of FIELDS).
D_DECODABLE = 0     # 0: capstone cannot decode it (a fixed cost; it changes nothing around it)
D_SIZE = 1          # bytes
D_IT = 2            # an IT (folded after a 16-bit instruction)
D_CYCLES = 3        # the Cost with no instruction before it: cycles, LSU and CPI extra cycles, ...
D_LSU = 4
D_CPI = 5
D_STALL_REFILL = 6
D_STALL_DIVIDE = 7
D_REFILL = 8
D_PIPELINABLE = 9   # a load/store that saves a cycle right after a load that pipelines with it
D_MEMORY = 10       # a memory access (an address interlock is charged as LSU)
D_ADDRESS = 11      # its address registers (core register bits)
D_FP_READS = 12     # the registers it reads whose names start with s or d (a MAC's addend left out)
D_LOAD = 13         # as the instruction before: a load (pipelining)
D_WRITES = 14       # as the instruction before: the registers it writes (core register bits)
D_FP_PRODUCER = 15  # as the instruction before: an FP operation whose result the next waits for
D_FP_WRITES = 16    # as the instruction before: the s/d-named registers it writes
D_LITERAL = 17      # F_LITERAL (literal_loads.literal_read of its bytes), 0: none
D_SELF_LOOP = 18    # a B to itself
D_STATIC = 19       # .. D_STATIC + FIELDS: the static row (decoder._static_row)
DESCRIPTOR = D_STATIC + FIELDS
D_MASKS = (D_ADDRESS, D_WRITES, D_FP_READS, D_FP_WRITES)  # the register bit masks (bits of their Descriptors)

# The timing table's values the rules read (m4_constants gives them in this order).
C_IT_FOLDED = 0
C_PIPELINE_SAVING = 1   # load - load_pipelined
C_ADDRESS_DEPENDENCY = 2
C_FP_RESULT_DEPENDENCY = 3
C_INSTRUCTION_CYCLES = 4  # an undecodable instruction's cost
C_PC_BIT = 5            # the core register bit of PC
CONSTANTS = 6


@njit
def m4_rows(descriptors, instructions, previous, constants, rows):
    """Fill `rows` (zeros, one per halfword, FIELDS each) with the decode rows of a range whose
    instructions are the descriptors at `instructions`, after the one at `previous` (-1: none
    known), as Decoder._decode_fresh and CortexM4Timing.cost make them. (It returns nothing: a
    native function that returns an array cannot be run from the object store.)"""
    pc_bit = constants[C_PC_BIT]
    folded_it = -1  # the row of a folded IT: the next instruction pairs with the one before it
    at = 0
    for i in range(instructions.shape[0]):
        d = descriptors[instructions[i]]
        if d[D_DECODABLE] == 0:
            rows[at, KIND] = KIND_START
            rows[at, F_CYCLES] = constants[C_INSTRUCTION_CYCLES]
            rows[at, F_INSTRUCTIONS] = 1
        else:
            for field in range(FIELDS):
                rows[at, field] = d[D_STATIC + field]
            cycles, lsu, cpi = d[D_CYCLES], d[D_LSU], d[D_CPI]
            stall_refill, stall_divide, refill = d[D_STALL_REFILL], d[D_STALL_DIVIDE], d[D_REFILL]
            interlock = start_adjust = folded = start_fold = 0
            if d[D_IT] != 0:
                if previous >= 0 and descriptors[previous, D_SIZE] == 2:
                    cycles, start_adjust, folded, start_fold = constants[C_IT_FOLDED], 1 - constants[C_IT_FOLDED], 1, 1
            elif previous >= 0:
                p = descriptors[previous]
                if d[D_PIPELINABLE] != 0 and p[D_LOAD] != 0 and p[D_WRITES] & pc_bit == 0 \
                        and p[D_WRITES] & d[D_ADDRESS] == 0:
                    cycles -= constants[C_PIPELINE_SAVING]
                    lsu -= constants[C_PIPELINE_SAVING]
                    start_adjust = constants[C_PIPELINE_SAVING]
                if d[D_MEMORY] != 0 and p[D_MEMORY] == 0 and p[D_WRITES] & ~pc_bit & d[D_ADDRESS] != 0:
                    interlock = constants[C_ADDRESS_DEPENDENCY]
                elif p[D_FP_PRODUCER] != 0 and p[D_FP_WRITES] & d[D_FP_READS] != 0:
                    interlock = constants[C_FP_RESULT_DEPENDENCY]
                cycles += interlock
                if d[D_MEMORY] != 0:
                    lsu += interlock
                else:
                    cpi += interlock
                start_adjust -= interlock
            rows[at, F_CYCLES] = cycles
            rows[at, F_COUNTS] = lsu | cpi << LANE | folded << 2 * LANE
            rows[at, F_STALLS] = stall_refill | interlock << LANE | stall_divide << 2 * LANE
            rows[at, F_START_ADJUST] = start_adjust
            rows[at, F_START_FLAGS] |= interlock | start_fold << 4
            rows[at, F_REFILL] |= refill
            if d[D_LITERAL] != 0:
                rows[at, F_LITERAL] = d[D_LITERAL]
            if d[D_SELF_LOOP] != 0:
                rows[at, KIND] = KIND_SELF_LOOP
            if folded_it >= 0:  # a block entered at the folded IT also loses this one's neighbour effects
                rows[folded_it, F_START_ADJUST] += rows[at, F_START_ADJUST]
                rows[folded_it, F_START_FLAGS] |= rows[at, F_START_FLAGS] & ~(1 << 4)
                folded_it = -1
            if start_fold != 0:
                folded_it = at
            else:
                previous = instructions[i]
        at += 1
        if d[D_SIZE] == 4:
            rows[at, KIND] = KIND_CONTINUATION
            at += 1
