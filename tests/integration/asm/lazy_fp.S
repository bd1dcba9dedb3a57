@ Exception round trips (SVC) timed with CYCCNT, with and without FP context, lazy stacking on
@ and off: results in r7-r11 at the semihosting exit, and the cycles of the handler's FP
@ instruction at 0x20000004 (no FP context) and 0x20000008 (lazy store)
@ (tests/integration/test_exception_timing.py).
    .syntax unified
    .thumb
    .include "fp_timing.inc"
    .text
    svc_vectors
    .thumb_func
svc_handler:                   @ r0 = 0: no FP; r0 = 1 or 2: time an FP instruction into word r0
    cbz r0, 1f
    ldr r2, [r4]               @ CYCCNT just before the FP instruction, in the same block
    vmov s1, r0
    ldr r3, [r4]
    subs r3, r3, r2
    ldr r2, =0x20000000
    str r3, [r2, r0, lsl #2]
1:  bx lr
    .ltorg
    .thumb_func
reset:
    fp_cyccnt_on
    movs r0, #0                @ r7: no FP context, handler without FP
    ldr r5, [r4]
    svc 0
    ldr r6, [r4]
    subs r7, r6, r5
    movs r0, #1                @ r11: no FP context, handler with FP
    ldr r5, [r4]
    svc 0
    ldr r6, [r4]
    sub r11, r6, r5
    vmov s0, r0                @ Thread mode now has FP context (CONTROL.FPCA)
    movs r0, #0                @ r8: lazy stacking, handler without FP
    ldr r5, [r4]
    svc 0
    ldr r6, [r4]
    sub r8, r6, r5
    movs r0, #2                @ r9: lazy stacking, handler with FP
    ldr r5, [r4]
    svc 0
    ldr r6, [r4]
    sub r9, r6, r5
    ldr r1, =0xE000EF34        @ FPCCR.LSPEN off: the FP context is stored at entry
    ldr r2, [r1]
    bic r2, r2, #(1 << 30)
    str r2, [r1]
    vmov s0, r0
    movs r0, #0                @ r10: FP context stored at once, handler without FP
    ldr r5, [r4]
    svc 0
    ldr r6, [r4]
    sub r10, r6, r5
    movs r0, #0x18             @ SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    b .
    .ltorg
