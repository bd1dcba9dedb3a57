"""The Cortex-M7 scheduling rules (cores/cortex-m7.toml, docs/timing.md), on short instruction
streams scheduled from an empty pipeline: the cycles from one issue to the next (0 = dual-issued)."""

import pytest
from capstone import CS_ARCH_ARM, CS_MODE_MCLASS, CS_MODE_THUMB, Cs

from mcusim.config import load_core
from mcusim.config.loader import core_timing_table
from mcusim.machine import native as N
from mcusim.timing.cortex_m7 import CortexM7Timing

# Assembled once with arm-none-eabi-as -mcpu=cortex-m7 (the source is in each comment).
CODE = {
    "independent_pair": "01300131",          # adds r0, #1; adds r1, #1
    "dependent_chain": "01300130",           # adds r0, #1; adds r0, #1
    "load_use": "08680130",                  # ldr r0, [r1]; adds r0, #1
    "narrow_load_use": "08780130",           # ldrb r0, [r1]; adds r0, #1
    "post_index_walk": "51f8040b51f8042b",   # ldr r0, [r1], #4; ldr r2, [r1], #4
    "address_from_alu": "04310868",          # adds r1, #4; ldr r0, [r1]
    "older_slot_only": "b1fa81f001320133b5fa85f4",  # clz r0, r1; adds r2, #1; adds r3, #1; clz r4, r5
    "mac_chain": "01fb020001fb0200",         # mla r0, r1, r2, r0; mla r0, r1, r2, r0
    "mul_chain": "00fb01f000fb01f0",         # mul r0, r0, r1; mul r0, r0, r1
    "single_issue": "10b40130",              # push {r4}; adds r0, #1
    "two_stores": "08604a60",                # str r0, [r1]; str r2, [r1, #4]
    "two_loads": "08684a68",                 # ldr r0, [r1]; ldr r2, [r1, #4]
    "flags_to_branch": "0138fdd1",           # subs r0, #1; bne .-2
    "fp_flags_to_branch": "b4ee600af1ee10faffdc00bf",  # vcmp.f32 s0, s1; vmrs APSR_nzcv, fpscr; bgt; nop
    "fp_latency": "30ee810a70ee201a",        # vadd.f32 s0, s1, s2; vadd.f32 s3, s0, s1
    "store_data_late": "08681060",           # ldr r0, [r1]; str r0, [r2]
    "load_into_multiply": "086800fb03f2",    # ldr r0, [r1]; mul r2, r0, r3
    "load_into_address": "08680268",         # ldr r0, [r1]; ldr r2, [r0]
    "load_into_offset": "08681a58",          # ldr r0, [r1]; ldr r2, [r3, r0]
    "load_into_shifted": "086800eb8302",     # ldr r0, [r1]; add.w r2, r0, r3, lsl #2
    "shifted_pair": "01eb820004eb8503",      # add.w r0, r1, r2, lsl #2; add.w r3, r4, r5, lsl #2
    "shifted_constants": "01f4fc6083f4fe52",  # and r0, r1, #0x7e0; eor r2, r3, #0x1fc0
    "pattern_constants": "81f01b3003f0ff02",  # eor r0, r1, #0x1b1b1b1b; and r2, r3, #0xff
    "extend_then_shifted": "c8b203eb8402",   # uxtb r0, r1; add.w r2, r3, r4, lsl #2
    "multiply_and_store": "01fb02f02360",    # mul r0, r1, r2; str r3, [r4]
    "load_store_pair": "08681a60",           # ldr r0, [r1]; str r2, [r3]
    "bitfield_source": "d118c1f30710",       # adds r1, r2, r3; ubfx r0, r1, #4, #8
    "late_source_stays_late": "116804310868",  # ldr r1, [r2]; adds r1, #4; ldr r0, [r1]
    "dependent_chain_of_three": "013001300130",  # adds r0, #1; adds r0, #1; adds r0, #1
    # subs r0, #1; add.w r1, r1, #1 (and r2 ... r6: no flags); bne .-26
    "flags_early": "013801f1010102f1010203f1010304f1010405f1010506f10106f1d1",
    "direct_branches": "02e000f002f87047",   # b .+8; bl .+8; bx lr
}
EXPECTED = {
    "independent_pair": [1, 0],       # two ALUs: dual issue
    "dependent_chain": [1, 0],        # the first ADD runs in the early ALU: the second uses it in the same cycle
    "load_use": [1, 1],               # word load latency 1 (LLVM WriteLd, jnk0le)
    "narrow_load_use": [1, 2],        # byte load latency 2
    "post_index_walk": [1, 1],        # the written-back base bypasses from the address stage to the next address
    "address_from_alu": [1, 1],       # an address is read a cycle early, and an early-ALU ADD is there in time
    "older_slot_only": [1, 0, 1, 1],  # CLZ pairs as the older instruction, never as the younger
    "mac_chain": [1, 1],              # the accumulator is read a cycle late: one MLA a cycle
    "mul_chain": [1, 2],              # a multiply result through a normal operand: latency 2
    "single_issue": [1, 1],           # PUSH issues alone
    "two_stores": [1, 1],             # one store a cycle
    "two_loads": [1, 0],              # two loads a cycle
    "flags_to_branch": [1, 0],        # a branch pairs with the instruction that sets its flags
    "fp_flags_to_branch": [1, 3, 2, 1],  # VCMP 3 to VMRS (alone); VMRS 3 to the branch, read 1 early; NOP alone
    "fp_latency": [1, 3],             # FP add latency 3
    "store_data_late": [1, 0],        # store data read a cycle late: the load's result in time to pair
    "load_into_multiply": [1, 2],     # a word load cannot bypass into a multiply (LLVM, jnk0le)
    "load_into_address": [1, 2],      # an address is read a cycle early
    "load_into_offset": [1, 3],       # ... and an offset register from a word load a cycle later still (LLVM)
    "load_into_shifted": [1, 2],      # the unshifted operand of a shifted-operand instruction: no bypass (LLVM, jnk0le)
    "shifted_pair": [1, 1],           # one shifted-operand instruction a cycle (one early shifter)
    "shifted_constants": [1, 1],      # a rotated immediate uses the shifter too (jnk0le)
    "pattern_constants": [1, 0],      # ... a repeated-byte pattern or an 8-bit value does not
    "extend_then_shifted": [1, 1],    # extends (and bitfield, REV, PKH) use it as well
    "multiply_and_store": [1, 1],     # a multiply and a store do not pair (jnk0le)
    "load_store_pair": [1, 0],        # a load and a store do
    "bitfield_source": [1, 1],        # UBFX reads its source a cycle early (LLVM M7Read_ISS, jnk0le): the early ALU's
    "flags_early": [1, 0, 1, 0, 1, 0, 1, 0],  # the flags set 3 cycles before the branch
    "late_source_stays_late": [1, 1, 2],  # the load's result is not there early: the ADD runs late, the address waits
    "dependent_chain_of_three": [1, 0, 1],  # the second ran in the late ALU: the third follows a cycle later
}


@pytest.fixture(scope="module")
def timing():
    return CortexM7Timing(core_timing_table(load_core("cortex-m7")))


def instructions(name):
    cs = Cs(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS)
    cs.detail = True
    return list(cs.disasm(bytes.fromhex(CODE[name]), 0x1000))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_issue_distances(timing, name):
    assert [delta for delta, _ in timing.fresh_schedule(instructions(name))] == EXPECTED[name]


def test_dual_issued_instruction_counts_as_folded(timing):
    first, second = instructions("independent_pair")
    timing.begin_run()
    assert timing.cost(first, None).folded == 0
    cost = timing.cost(second, first)
    assert (cost.cycles, cost.folded) == (0, 1)


def test_block_start_takes_back_the_wait_for_code_that_did_not_run(timing):
    """Entered at the ADD, the load before it did not run: the ADD issues at once."""
    run = instructions("narrow_load_use")
    timing.begin_run()
    previous = None
    for insn in run:
        timing.cost(insn, previous)
        previous = insn
    (at_load, _, _), (at_add, interlock, lost) = timing.start_adjustments(run)
    assert at_load == 0
    assert at_add == -1 and interlock == 1 and lost == 0


def costed(timing, name):
    """The in-sequence cost of each instruction of CODE[name]."""
    timing.begin_run()
    costs, previous = [], None
    for insn in instructions(name):
        costs.append(timing.cost(insn, previous))
        previous = insn
    return costs


def mispredict_cycles(cost):
    return (cost.refill >> 2) & N.REFILL_CYCLES_MASK


def test_a_branch_resolves_early_when_its_flags_were_set_three_cycles_before(timing):
    """jnk0le: a wrong prediction costs 8, or 6 with flag forwarding (TRM 1.2.3)."""
    assert mispredict_cycles(costed(timing, "flags_to_branch")[-1]) == timing.t["branch_mispredict"] == 8
    assert mispredict_cycles(costed(timing, "flags_early")[-1]) == timing.t["branch_mispredict_early"] == 6


def test_only_direct_unconditional_branches_are_predicted_statically(timing):
    b, bl, bx = costed(timing, "direct_branches")
    for branch in (b, bl):
        assert branch.refill & N.STATIC_TAKEN
        assert (branch.refill >> N.STATIC_SHIFT) & N.STATIC_CYCLES_MASK == timing.t["branch_static_taken"]
    assert not bx.refill & N.STATIC_TAKEN and mispredict_cycles(bx) == timing.t["branch_mispredict"]
    assert not costed(timing, "flags_to_branch")[-1].refill & N.STATIC_TAKEN
