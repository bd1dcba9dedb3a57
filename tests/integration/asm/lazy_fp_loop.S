@ A loop whose first run in an SVC handler stores the lazy FP context (its FP instruction is the
@ handler's first) and whose later runs repeat it. Each run reads CYCCNT just before its FP
@ instruction, into the words from 0x20000000; Thread mode runs the loop first, so that the read
@ is hooked and the handler's runs do not stop (tests/integration/test_hook_variants.py).
    .syntax unified
    .thumb
    .include "fp_timing.inc"
    .text
    svc_vectors
    .thumb_func
loop:                          @ r1 runs, CYCCNT readings to r2 on
    ldr r3, [r4]
    vadd.f32 s1, s1, s2
    str r3, [r2], #4
    subs r1, r1, #1
    bne loop
    bx lr
    .thumb_func
svc_handler:
    push {lr}
    movs r1, #6
    ldr r2, =0x20000000
    bl loop
    pop {pc}
    .ltorg
    .thumb_func
reset:
    fp_cyccnt_on
    movs r1, #3                @ the loop in Thread mode: FP context (CONTROL.FPCA), its read hooked
    ldr r2, =0x20000100
    bl loop
    svc 0                      @ stacks the FP context lazily
    movs r0, #0x18             @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    .ltorg
