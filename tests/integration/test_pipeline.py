"""How each core issues instructions: firmware/bench/pipeline's loops, in cycles per 100 iterations.

Every loop is its body plus `subs r0, #1; bne 1b`. The expected counts follow from the rules
in cores/*.toml and docs/timing.md, derived by hand below.

Cortex-M4 (TRM r0p1 tables 3-1/3-2): one instruction at a time; SUBS 1 + taken BNE 1 + P (P = 1).
Cortex-M7 (dual issue, cores/cortex-m7.toml latencies): the loop top starts a block from an
empty pipeline; SUBS and the predicted BNE pair in one cycle (flag forwarding); a wrong
prediction costs 8 when the flags were set less than 3 cycles before the branch (jnk0le).
"""
import re

import pytest

import mcusim

CORTEX_M4 = {
    "empty": 300,          # SUBS 1 + BNE taken 2
    "alu_pairs": 900,      # 6 ADDs 1 each + 3
    "alu_chain": 900,      # the same: no forwarding penalty
    "mac_chain": 900,      # MLA 1 (TRM table 3-1)
    "mul_chain": 900,      # MUL 1
    "load_use": 1200,      # 3 x (LDR 2 + ADD 1) + 3
    "clz_only": 900,       # CLZ 1
    "branch_never": 600,   # TST 1, BNE not taken 1, ADDS 1 + 3
    "branch_alt": 600,     # taken: TST 1 + BNE 2 + 3; not taken: 6
}
CORTEX_M7 = {
    "empty": 100,          # SUBS + BNE paired: 1
    "alu_pairs": 400,      # 6 independent ADDs in 3 cycles, SUBS + BNE in the 4th
    "alu_chain": 600,      # the first ADD runs in the early ALU and the second pairs with it, then one dependent
    #                        ADD a cycle (cycles 1-5); SUBS pairs with the last; BNE in the 6th
    "mac_chain": 700,      # MLA latency 2 but the accumulator is read a cycle late: one a cycle, as alu_chain
    "mul_chain": 1200,     # MUL latency 2 through a normal operand: cycles 1, 3, .., 11; SUBS pairs; BNE 12
    "load_use": 500,       # LDR latency 1: ADDs at 2, 3, 4, each paired with the next LDR; SUBS pairs; BNE 5
    "clz_only": 700,       # CLZ only in the older slot: 6 cycles; SUBS pairs with the last; BNE 7
    "branch_never": 300,   # TST + BNE (1), then ADDS + SUBS (2), BNE (3): predicted not taken
    "branch_alt": 1050,    # half the iterations 3, half 2 (the taken path skips ADDS), + 8 each mispredict (TST
    #                        sets the flags just before BNE)
}


def counts(result):
    return {m[1]: int(m[2]) for m in re.finditer(r"^pipeline (\w+): (-?\d+)$", result.stdout, re.M)}


@pytest.mark.parametrize("board,expected", [("mps2-an386", CORTEX_M4), ("mcu-m", CORTEX_M4),
                                            ("mcu-d", CORTEX_M7), ("mps2-an500", CORTEX_M7)])
def test_loops_take_what_the_core_rules_say(firmware_build, board, expected):
    result = mcusim.run(firmware_build / board / "pipeline.elf", board)
    assert result.exit_code == 0, result.stdout
    assert counts(result) == expected


def test_dual_issue_and_prediction_are_reported(firmware_build):
    m7 = mcusim.run(firmware_build / "mcu-d" / "pipeline.elf", "mcu-d")
    m4 = mcusim.run(firmware_build / "mps2-an386" / "pipeline.elf", "mps2-an386")
    assert m7.ipc > m4.ipc
    assert 0 < m7.dual_issue_fraction < 1 and m4.dual_issue_fraction == 0
    assert m7.dual_issued == m7.dwt["foldcnt"]  # the DWT counts a dual-issued instruction as folded
    # branch_alt runs 100 + 100 + 200 iterations, every one mispredicted
    assert m7.branch_mispredicts >= 400 and m7.branches_predicted > m7.branch_mispredicts
    assert m4.branch_mispredicts == m4.branches_predicted == 0
    assert m7.to_dict()["branch_mispredicts"] == m7.branch_mispredicts
