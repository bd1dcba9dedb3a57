"""firmware/bench/isa on zero-wait memory (mps2-an386): each sequence's Cortex-M4 cycles.

Expected values: Cortex-M4 TRM r0p1 (ARM DDI 0439D) table 3-1 / table 7-1 and 3.3.2, and
the published branch measurements behind cores/cortex-m4.toml (branch_refill).
"""
import re

import pytest

import mcusim
from conftest import BOARDS

CORTEX_M4 = {
    "alu x4": 4,                        # data processing: 1 each
    "mul x4": 4,                        # MUL: 1
    "smlad x4": 4,                      # DSP MAC: 1
    "ldr": 2,                           # LDR: 2
    "ldr flash": 2,                     # the same from code memory: zero-wait SSRAM on MPS2
    "ldr x4 independent": 5,            # 3.3.2: N pipelined loads take N + 1
    "ldr dependent": 4,                 # the second address is the first load's result: 2 + 2
    "address interlock": 4,             # ALU result as the next address: 1 + (2 + 1)
    "str x4": 4,                        # 3.3.2: STR with an immediate offset is one cycle
    "ldr then str": 3,                  # 3.3.2: "LDR R0,[R1,R2]; STR R0,[R3,#20]" three cycles
    "str register offset then ldr": 4,  # nothing pipelines after a store: 2 + 2
    "ldrd": 3,                          # LDRD: 1 + 2
    "ldm x4": 5,                        # LDM: 1 + N
    "push pop x4": 10,                  # PUSH/POP: 1 + N each
    "it folded": 2,                     # IT folds onto the preceding 16-bit MOVS
    "b taken": 2,                       # B: 1 + P, P = 1
    "bne not taken": 3,                 # CMP 1, BNE not taken 1, NOP 1
    "cbz taken": 3,                     # MOVS 1, CBZ taken 1 + P
    "bne not taken then literal load": 4,  # CMP 1, BNE 1, LDR literal 2: a branch computes no address
    "tbb switch": 9,                    # CMP 1, BHI not taken 1, TBB 6 (refill included), NOP 1
    "branch to a folded it": 6,         # CMP 1, B 1 + P, IT not folded at a block start 1, LDREQ 2
    "semihosting call then it": 3,      # CMP 1, BKPT 1, IT folded 0, MOVEQ 1
    "vadd x4": 4,                       # table 7-1: VADD 1
    "vmla": 3,                          # table 7-1: VMLA 3
    "vdiv": 14,                         # table 7-1: VDIV 14
    "vldr": 2,                          # table 7-1: VLDR.32 2
    "vpush vpop": 6,                    # table 7-1: VPUSH/VPOP 1 + N
}


def measured(result):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^isa (.+): (-?\d+)$", result.stdout, re.M)}


def test_cortex_m4_sequences_take_their_documented_cycles(firmware_build):
    result = mcusim.run(firmware_build / "mps2-an386" / "isa.elf", "mps2-an386")
    assert result.exit_code == 0, result.stdout
    assert measured(result) == CORTEX_M4


@pytest.mark.parametrize("board", [board for board in BOARDS if board != "mps2-an386"])  # (an386: above)
def test_isa_runs_on_every_board(firmware_build, board):
    result = mcusim.run(firmware_build / board / "isa.elf", board)
    assert result.exit_code == 0, result.stdout
    assert set(measured(result)) == set(CORTEX_M4)


def test_a_load_from_flash_takes_5_cycles_on_mcu_s(firmware_build):
    """The paper (Zhang et al., ICCD 2022, Section VII-A) measured a 4-byte flash load at 5 cycles on MCU-S."""
    result = mcusim.run(firmware_build / "mcu-s" / "isa.elf", "mcu-s")
    counts = measured(result)
    assert counts["ldr flash"] == 5
    assert counts["ldr"] == 2  # the same load from RAM
    assert result.stalls["data_wait"] >= 3
