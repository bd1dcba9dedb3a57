"""Code translated before the firmware set its flash wait states waits like code translated
after: adding the data-read memory hook flushes Unicorn's translations (docs/timing.md).

The loop below runs once at reset settings (LATENCY 0: no hook; Unicorn translates its loads
without one), then FLASH_ACR = LATENCY 4 with the caches off, then the same loop again: each
of its 10 flash loads must wait 4 cycles, the only data reads from flash after the write."""
import mcusim
from asmbuild import build_elf

SOURCE = """
    .syntax unified
    .thumb
    .text
    .word 0x20008000
    .word reset + 1
    .global reset
    .thumb_func
reset:
    ldr r2, =table             @ (at LATENCY 0: no wait)
    bl loads                   @ translated now, at LATENCY 0
    ldr r0, =0x40022000        @ FLASH_ACR (RM0351 3.7.1): LATENCY 4, prefetch and caches off
    movs r1, #4
    str r1, [r0]
    dsb
    isb
    bl loads                   @ the same code: its 10 loads wait now
    movs r0, #0x18             @ SYS_EXIT, ADP_Stopped_ApplicationExit in r1 (no memory read)
    movw r1, #0x0026
    movt r1, #0x0002
    bkpt 0xab
loads:
    .rept 10
    ldr r3, [r2]
    .endr
    bx lr
    .pool
    .section .rodata           @ on the page where the code ends: read through the memory hook
    .balign 4
table:
    .word 0x12345678
"""


def test_a_loop_translated_before_the_wait_states_were_set_waits_after(tmp_path):
    elf = build_elf(tmp_path, "hooks", SOURCE)
    result = mcusim.run(elf, "mcu-m")
    assert result.exit_code == 0, result.exit_detail
    assert result.stalls["data_wait"] == 10 * 4
