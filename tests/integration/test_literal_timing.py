"""PC-relative data reads of flash code pages (literal loads, TBB/TBH tables) are timed by the
block hook from the decoded instruction, with no memory hook (timing/literal_loads.py). Every
literal load encoding must wait as a read of flash does, a read in an IT block that may not run
is not charged, and what the block hook charged ahead must not show before the instruction runs:
not in a CYCCNT read earlier in the block, not after a fault stops the block before it."""
import pytest
from unicorn.arm_const import UC_ARM_REG_R5, UC_ARM_REG_R6

import mcusim
from mcusim.machine import native as N
from asmbuild import build_elf

SOURCE = """
    .syntax unified
    .thumb
    .cpu cortex-m4
    .fpu fpv4-sp-d16
    .text
    .word 0x20008000
    .word reset + 1
    .word fault + 1            @ NMI
    .word fault + 1            @ HardFault
    .balign 8
    .type before, %object
    .size before, 8
before:                        @ behind the code: LDR.W with a negative offset
    .word 0x01020304, 0x05060708
    .global reset, near, before
    .thumb_func
reset:
    ldr r0, =0xE000ED88        @ CPACR: CP10 and CP11 full access (for VLDR)
    ldr r1, [r0]
    orr r1, r1, #0xF00000
    str r1, [r0]
    ldr r0, =0xE0001000        @ DWT_CTRL.CYCCNTENA
    ldr r1, [r0]
    orr r1, r1, #1
    str r1, [r0]
    ldr r7, =0x40022000        @ FLASH_ACR (RM0351 3.7.1): LATENCY 4, prefetch and caches off
    movs r1, #4
    str r1, [r7]
    dsb
    isb
    movw r2, #0x0100           @ r2: RAM (0x20000100), r7: nothing mapped (0x60000000), no literals
    movt r2, #0x2000
    movw r7, #0
    movt r7, #0x6000
    b 1f
1:  {body}
    movs r0, #0x18             @ SYS_EXIT
    movw r1, #0x0026
    movt r1, #0x0002
    bkpt 0xab
    .thumb_func
fault:
    movs r0, #0x18
    movw r1, #0x0026
    movt r1, #0x0002
    bkpt 0xab
    .balign 8
    .type near, %object
    .size near, 16
near:
    .word 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff01
"""
WAIT = 4  # LATENCY 4, caches off: every flash data read waits 4 cycles

LITERALS = {  # each after the ACR write; (its reads of flash)
    "ldr (16-bit)": ("ldr r3, near", 1),
    "ldr.w, negative offset": ("ldr.w r3, before", 1),
    "ldrb": ("ldrb r3, near + 1", 1),
    "ldrsb": ("ldrsb r3, near + 1", 1),
    "ldrh": ("ldrh r3, near + 2", 1),
    "ldrsh": ("ldrsh r3, near + 2", 1),
    "unaligned ldr.w": ("ldr.w r3, near + 1", 2),  # the two aligned reads around it, as an MMIO page sees it
    "ldrd": ("ldrd r3, r5, near", 2),
    "vldr.64": ("vldr d0, near", 2),
    "vldr.32": ("vldr s0, near + 4", 1),
    "tbb": ("movs r0, #1\n tbb [pc, r0]\n 2: .byte 0, (3f - 2b) / 2\n .balign 2\n 3: nop", 1),
    "tbh": ("movs r0, #1\n tbh [pc, r0, lsl #1]\n 2: .hword 0, (3f - 2b) / 2\n 3: nop", 1),
    "conditional, not run": ("cmp r0, r0\n it ne\n ldrne r3, near", 0),  # in an IT block: not charged
    "two": ("ldr r3, near\n ldr r4, near + 4\n adds r3, r4", 2),
}


def run(tmp_path, body):
    elf = build_elf(tmp_path, f"literal{abs(hash(body))}", SOURCE.replace("{body}", body))
    sim = mcusim.Simulator(elf, "mcu-m")
    return sim, sim.run()


@pytest.mark.parametrize("kind", list(LITERALS))
def test_a_literal_read_of_a_code_page_waits_as_a_flash_read(tmp_path, kind):
    body, reads = LITERALS[kind]
    sim, result = run(tmp_path, body)
    assert result.exit_code == 0
    assert not sim.machine.memory.in_mmio_piece(sim.image.symbol("near"), 16)  # a code page
    assert result.stalls["data_wait"] == reads * WAIT


def test_a_cyccnt_read_before_a_literal_load_in_its_block_does_not_include_its_wait(tmp_path):
    """The block hook charges the literal read when the block starts: a CYCCNT read before it
    must see the time without it, and the one after it with it."""
    cycles = {}
    for kind, load in (("literal", "ldr r3, near"), ("ram", "ldr r3, [r2]")):
        sim, result = run(tmp_path, f"ldr r5, [r0, #4]\n {load}\n ldr r6, [r0, #4]")
        assert result.exit_code == 0
        cycles[kind] = sim.machine.uc.reg_read(UC_ARM_REG_R5), sim.machine.uc.reg_read(UC_ARM_REG_R6)
    assert cycles["literal"][0] == cycles["ram"][0]
    assert cycles["literal"][1] - cycles["ram"][1] == WAIT


def test_a_fault_inside_a_block_takes_back_the_literal_reads_after_it(tmp_path):
    """A load from unmapped memory faults in the middle of the block: the literal load after it
    never runs, so neither its wait nor its data cache look-up may be counted."""
    results = {}
    for kind, load in (("literal", "ldr r3, near"), ("ram", "ldr r3, [r2]")):
        sim, result = run(tmp_path, f"ldr r4, near + 8\n ldr r5, [r7]\n {load}")
        assert result.exit_code == 0 and sim.machine.exceptions_taken  # the fault handler exited
        results[kind] = result
    assert results["literal"].stalls["data_wait"] == results["ram"].stalls["data_wait"] == WAIT
    assert results["literal"].cycles == results["ram"].cycles


def test_the_code_pages_are_in_the_literal_range_table(tmp_path):
    """The block hook times literal reads of the code pages (at their linked address and at the
    flash's boot alias), as long as flash data reads wait."""
    sim, _ = run(tmp_path, "ldr r3, near")
    state = sim.machine.state
    ranges = [(state[N.FL_LITERAL_RANGES + N.FL_LITERAL_RANGE * i + N.RANGE_START],
               state[N.FL_LITERAL_RANGES + N.FL_LITERAL_RANGE * i + N.RANGE_END])
              for i in range(state[N.FL_LITERAL_RANGE_COUNT])]
    assert any(start <= sim.image.symbol("near") < end for start, end in ranges)
