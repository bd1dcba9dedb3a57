"""The Cortex-M7 branch predictor on small hand-written programs whose every branch is known, so
that what the predictor gets wrong, and what it charges, follows by hand from its rules
(docs/timing.md "Branch prediction", cores/cortex-m7.toml):

- a BTAC of `branch_predictor_entries` entries, `branch_predictor_ways`-way set associative by
  halfword address, least recently used; a branch enters it when taken, weakly taken (2-bit
  counter 2); a hit with the counter at 2 or 3 predicts taken to the stored target;
- on a miss, B and BL are taken by the static predictor at decode (`branch_static_taken`
  cycles, not a misprediction); any other branch is predicted not taken;
- a wrong prediction costs `branch_mispredict` (8; every branch here has its condition set
  just before it, or is indirect), `branch_mispredict_early` when the flags were set early.

Each program runs N loop turns and exits through semihosting: no other branch runs, so the
run's branches_predicted, branch_mispredicts and branch_refill stall are exactly these.
"""
import pytest

import mcusim
from asmbuild import build_elf
from mcusim.config import load_core
from mcusim.config.loader import core_timing_table

T = core_timing_table(load_core("cortex-m7"))
MISS, STATIC = T["branch_mispredict"], T["branch_static_taken"]
SETS = T["branch_predictor_entries"] // T["branch_predictor_ways"]
WAYS = T["branch_predictor_ways"]
N = 40  # loop turns (a multiple of 4)

PROGRAM = """
    .syntax unified
    .cpu cortex-m7
    .thumb
    .text
    .word 0x20001000
    .word reset
    .global reset
    .thumb_func
    .type reset, %function
reset:
    movs r4, #{n}
{body}
    movs r0, #0x18           @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    .ltorg
    .thumb_func
f:  bx lr
"""

# name: (loop body, branches predicted, mispredicted, branch_refill cycles). Every loop ends with
# `subs r4, #1; bne 1b`: N predictions, wrong on the first turn (a miss, not taken predicted) and
# at the exit (the counter at 3): 2 mispredictions, 2 * MISS cycles.
LOOP = "    subs r4, #1\n    bne 1b"
CASES = {
    # the loop alone
    "loop": ("1:\n" + LOOP, N, 2, 2 * MISS),
    # B skips a NOP every turn: taken statically the first time, from the BTAC after
    "jump": ("1:  b 2f\n    nop\n2:\n" + LOOP, 2 * N, 2, STATIC + 2 * MISS),
    # BNE taken every other turn (r4 odd): not taken first (a miss: right), then the 2-bit counter
    # swings between 2 and 1 and every turn after the first is wrong
    "alternate": ("1:  tst r4, #1\n    bne 2f\n    nop\n2:\n" + LOOP, 2 * N, (N - 1) + 2, (N - 1 + 2) * MISS),
    # one call site: BL static once, then the BTAC; BX LR wrong once (a miss), then right
    "call_one_site": ("1:  bl f\n" + LOOP, 3 * N, 1 + 2, STATIC + 3 * MISS),
    # two call sites: BX LR's stored target is always the other site's (no return stack)
    "call_two_sites": ("1:  bl f\n    bl f\n" + LOOP, 5 * N, 2 * N + 2, 2 * STATIC + (2 * N + 2) * MISS),
    # TBB to a new case each turn (r4 & 3 counts down): always wrong; the three Bs to the join
    # are static once each; the fourth case falls through
    "switch": ("""1:  and r0, r4, #3
    tbb [pc, r0]
table:
    .byte (c0 - table) / 2, (c1 - table) / 2, (c2 - table) / 2, (c3 - table) / 2
c0: adds r5, #1
    b 2f
c1: adds r5, #2
    b 2f
c2: adds r5, #3
    b 2f
c3: adds r5, #4
2:
""" + LOOP, N + 3 * N // 4 + N, N + 2, 3 * STATIC + (N + 2) * MISS),
}


def aliasing(branches: int) -> str:
    """`branches` always-taken BEQs 2 * SETS bytes apart: all in one BTAC set."""
    unit = 6  # cmp (2) + beq (2) + the nop it skips (2)
    pad = (2 * SETS - unit) // 2
    parts = ["    .balign {}\n1:".format(2 * SETS)]
    for k in range(branches):
        parts.append(f"    cmp r4, r4\n    beq 5{k}f\n    nop\n5{k}:")
        if k < branches - 1:
            parts.append(f"    .rept {pad}\n    nop\n    .endr")
    return "\n".join(parts) + "\n" + LOOP


# WAYS branches share a set: each wrong only the first time. One more: least recently used
# replacement evicts, every turn, the branch that comes next, so every one of them is wrong.
CASES["set_fits"] = (aliasing(WAYS), (WAYS + 1) * N, WAYS + 2, (WAYS + 2) * MISS)
CASES["set_thrashes"] = (aliasing(WAYS + 1), (WAYS + 2) * N, (WAYS + 1) * N + 2, ((WAYS + 1) * N + 2) * MISS)

TEXT = {"mps2-an500": 0x00000000, "mcu-d": 0x08000000}


@pytest.mark.parametrize("board", sorted(TEXT))
@pytest.mark.parametrize("name", sorted(CASES))
def test_predictor_counts_follow_from_its_rules(tmp_path, board, name):
    body, predicted, wrong, refill = CASES[name]
    elf = build_elf(tmp_path, name, PROGRAM.format(n=N, body=body), TEXT[board])
    result = mcusim.run(elf, board)
    assert result.exit_code == 0, result.exit_detail
    assert (result.branches_predicted, result.branch_mispredicts) == (predicted, wrong)
    assert result.stalls["branch_refill"] == refill
