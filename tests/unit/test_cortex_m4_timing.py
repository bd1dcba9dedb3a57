"""Cortex-M4 timing rules on instruction sequences (TRM r0p1 3.3.1 and 3.3.2), no firmware."""
import pytest
from capstone import CS_ARCH_ARM, CS_MODE_MCLASS, CS_MODE_THUMB, Cs

from mcusim.config import load_core
from mcusim.config.loader import core_timing_table
from mcusim.timing.cortex_m4 import REFILL_ALWAYS, REFILL_IF_TAKEN, CortexM4Timing

# Assembled with arm-none-eabi-as -mcpu=cortex-m4 -mfpu=fpv4-sp-d16; offsets below.
CODE = bytes.fromhex(
    "086811688858586188589950485911685a680868026804310868012008bf1146f0b510bd21fb023091fbf2f030ee810a"
    "00ee810a80ee810a90ed000a2ded028a885023687047d0e801f0")
SEQUENCES = {
    "s1": (0x00, 0x04), "s2": (0x04, 0x08), "s3": (0x08, 0x0C), "s4": (0x0C, 0x12), "s5": (0x12, 0x16),
    "s6": (0x16, 0x1A), "s7": (0x1A, 0x20), "s8": (0x20, 0x22), "s9": (0x22, 0x24), "s10": (0x24, 0x2C),
    "s11": (0x2C, 0x40), "s12": (0x40, 0x44), "s13": (0x44, 0x4A),
}


@pytest.fixture(scope="module")
def timing():
    return CortexM4Timing(core_timing_table(load_core("cortex-m4")))


def costs(timing, name, code=CODE, sequences=SEQUENCES):
    """Each instruction's cost after the one that ran before it (a folded IT is skipped as a
    neighbour, as the decoder does)."""
    cs = Cs(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS)
    cs.detail = True
    start, end = sequences[name]
    previous, result = None, []
    for insn in cs.disasm(code[start:end], start):
        cost = timing.cost(insn, previous)
        result.append(cost)
        if not cost.folded:
            previous = insn
    return result


def cycles(timing, name):
    return [c.cycles for c in costs(timing, name)]


@pytest.mark.parametrize("name,expected", [
    ("s1", [2, 1]),      # ldr r0,[r1]; ldr r1,[r2]: "normally three cycles total" (TRM 3.3.2)
    ("s2", [2, 1]),      # ldr r0,[r1,r2]; str r0,[r3,#20]: three cycles
    ("s3", [2, 1]),      # ldr r0,[r1,r2]; str r1,[r3,r2]: three cycles
    ("s4", [2, 1, 1]),   # three loads: four cycles
    ("s5", [2, 2]),      # the second load's address is the first load's result: no pipelining
    ("s6", [1, 3]),      # adds r1,#4; ldr r0,[r1]: address interlock, +1 (no forwarding)
    ("s7", [1, 0, 1]),   # movs; it eq; moveq: the IT folds onto the 16-bit movs
    ("s8", [6]),         # push {r4-r7, lr}: 1 + N
    ("s9", [6]),         # pop {r4, pc}: 1 + N + 3 (pipeline reload)
    ("s10", [1, 2]),     # smlad 1; sdiv at its minimum (early termination is dynamic)
    ("s11", [1, 3, 14, 2, 3]),  # vadd 1, vmla 3, vdiv 14, vldr.32 2, vpush {s16,s17} 1 + 2
    ("s12", [2, 2]),     # str with register offset, then ldr: nothing pipelines after a store
])
def test_sequence_cycles(timing, name, expected):
    assert cycles(timing, name) == expected


def test_branches_get_the_refill_when_taken(timing):
    bx, tbb = costs(timing, "s13")
    assert (bx.cycles, bx.refill) == (1, REFILL_ALWAYS)  # 1 + P, always taken; P decided by the target
    assert (tbb.cycles, tbb.refill) == (6, 0)  # TBB: at least six, refill included


def test_block_start_loses_neighbour_effects(timing):
    first, second = costs(timing, "s1")
    assert second.start_adjust == 1  # as a block's first instruction the load is not pipelined
    interlocked = costs(timing, "s6")[1]
    assert interlocked.cycles + interlocked.start_adjust == 2  # no previous result to wait for


def test_counters_split_extra_cycles(timing):
    it = costs(timing, "s7")[1]
    assert it.folded == 1
    push = costs(timing, "s8")[0]
    assert push.lsu == 5 and push.cpi == 0
    vdiv = costs(timing, "s11")[2]
    assert vdiv.cpi == 13 and vdiv.lsu == 0


# More sequences (offsets into MORE): TRM 3.3.2 and 7.2.3 rules found in review.
MORE = bytes.fromhex("18bf10bd003191ed000a003191e80c00486808bf8a68486851e8002f30ee810a70ee011a30ee810a01ee820a"
                     "d1e90023106810ee100a")
MORE_SEQUENCES = {"r1": (0x00, 0x04), "r2": (0x04, 0x0A), "r3": (0x0A, 0x10), "r4": (0x10, 0x16),
                  "r5": (0x16, 0x1C), "r6": (0x1C, 0x24), "r7": (0x24, 0x2C), "r8": (0x2C, 0x32),
                  "r9": (0x32, 0x36)}


def more_costs(timing, name):
    return costs(timing, name, MORE, MORE_SEQUENCES)


@pytest.mark.parametrize("name,expected", [
    ("r2", [1, 3]),      # adds r1; vldr s0,[r1]: any load's address interlock, VLDR 2 + 1
    ("r3", [1, 4]),      # adds r1; ldm r1,{r2,r3}: LDM 1 + N + the interlock
    ("r4", [2, 0, 1]),   # ldr; it eq (folded); ldreq: the load still pipelines across the folded IT
    ("r5", [2, 1]),      # ldr; ldrex: LDREX pipelines exactly as LDR
    ("r6", [1, 2]),      # vadd s0; vadd s3,s0: FP result used by the next instruction, +1
    ("r7", [1, 3]),      # vadd s0; vmla s0,...: the MAC reads its addend late, no stall
    ("r8", [3, 2]),      # ldrd; ldr [r2]: no data-processing producer, no interlock
    ("r9", [2]),         # vmov r0, s0: 2 (TRM table 7-1)
])
def test_review_rules(timing, name, expected):
    assert [c.cycles for c in more_costs(timing, name)] == expected


def test_conditional_return_pays_the_reload_only_when_it_runs(timing):
    it, pop = more_costs(timing, "r1")
    assert pop.cycles == 3                    # popne {r4, pc}: 1 + N, as if not taken
    assert pop.refill == REFILL_IF_TAKEN | 3 << 2  # + the 3-cycle reload when the next block is not in sequence


def test_fold_is_taken_back_at_a_block_start(timing):
    it = more_costs(timing, "r4")[1]
    assert (it.folded, it.start_fold, it.cycles + it.start_adjust) == (1, 1, 1)


def test_a_memoised_cost_tells_an_fp_result_from_a_move_to_the_same_register(timing):
    """cost() memoises by what it reads of the neighbour: VADD reading s0 waits after a VMUL
    that wrote it (TRM 7.2.3) and not after a VMOV that moved a core register into it."""
    from mcusim.timing.instruction import disassemble
    code = bytes.fromhex("00ee101a20ee810a70ee021a")  # vmov s0, r1; vmul.f32 s0, s1, s2; vadd.f32 s3, s0, s4
    found = disassemble(code, 0x100, 0x100 + len(code))
    move, multiply, add = found[0x100], found[0x104], found[0x108]
    model = CortexM4Timing(core_timing_table(load_core("cortex-m4")))
    after_move, after_multiply = model.cost(add, move), model.cost(add, multiply)
    assert after_multiply.cycles == after_move.cycles + model.t["fp_result_dependency"]
    assert after_multiply.stall_interlock == model.t["fp_result_dependency"] and after_move.stall_interlock == 0
