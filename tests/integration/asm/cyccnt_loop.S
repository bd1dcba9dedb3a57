@ A loop of 1,056 runs that reads CYCCNT in every 64th from its 33rd on, into the words from
@ 0x20000000 (a load made conditional by an IT block: the same block every run). The block hook
@ counts its first runs without adding them one by one (native/core_timing.py, count_repeats), and
@ the first read, made inside such a run before any code hook marks the block as one that reads
@ time, must see them added (tests/integration/test_hook_variants.py).
    .syntax unified
    .thumb
    .include "fp_timing.inc"
    .text
    svc_vectors
    .thumb_func
svc_handler:
    bx lr
    .thumb_func
cyccnt_on:                     @ (a block of its own: the code hook its reads bring covers it alone)
    fp_cyccnt_on
    bx lr
    .ltorg
    .thumb_func
reset:
    bl cyccnt_on
    mov r1, #1056
    ldr r2, =0x20000000
loop:
    tst r1, #63
    itt eq
    ldreq r3, [r4]
    streq r3, [r2], #4
    subs r1, r1, #1
    bne loop
    movs r0, #0x18             @ semihosting SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    .ltorg
