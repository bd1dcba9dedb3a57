"""Which instructions the decoder flags as moving SP (timing/decoder.may_move_sp): after such a
block the block hook reads SP for the stack peak, so one left out could hide the deepest frame."""
import pytest

from mcusim.timing.decoder import may_move_sp


@pytest.mark.parametrize("mnemonic, operands", [
    ("push", "{r4, r5, r7, lr}"), ("push.w", "{r4, r5, r6, r7, r8, lr}"), ("vpush", "{d8, d9}"),
    ("sub", "sp, #0x10"), ("sub.w", "sp, sp, #0x400"), ("sub", "sp, sp, r3"), ("mov", "sp, r0"),
    ("ldr.w", "sp, [r0]"), ("stmdb", "sp!, {r4, r5}"), ("str", "lr, [sp, #-4]!"), ("msr", "msp, r0"),
    ("msr", "psp, r1"), ("add", "sp, #8")])
def test_instructions_that_may_move_sp_are_flagged(mnemonic, operands):
    assert may_move_sp(mnemonic, operands)


@pytest.mark.parametrize("mnemonic, operands", [
    ("ldr", "r0, [sp, #4]"), ("str", "r1, [sp, #8]"), ("add", "r0, sp, #4"), ("mov", "r7, sp"), ("bl", "#0x800"),
    ("smlad", "r0, r1, r2, r0"), ("msr", "basepri, r0")])
def test_instructions_that_leave_sp_alone_are_not(mnemonic, operands):
    assert not may_move_sp(mnemonic, operands)


def test_msr_control_makes_the_next_block_read_control():
    """MSR CONTROL may switch Thread mode between the main and the process stack: its weight
    tells the block hook to read CONTROL, and a block's sum still reads as a flag."""
    from mcusim.machine.native import SP_SELECT

    assert may_move_sp("msr", "control, r1") == SP_SELECT
    assert may_move_sp("push", "{r4, lr}") == 1 and 32 * may_move_sp("push", "{lr}") < SP_SELECT
