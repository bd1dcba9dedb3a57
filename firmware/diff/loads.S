/*
 * loads.S - loads of every width from a table in flash, inside and outside IT blocks, the
 * patterns compilers emit for constant tables (GCC's `ite ls; ldrbls; ldrhhi`, conditional
 * LDRD into its own base register, LDM, POP into PC, literal pools, TBB/TBH).
 *
 * uint32_t diff_it_loads(const uint8_t *table, uint32_t rounds, uint32_t seed)
 *   table: 1 KB, 8-byte aligned. Returns a hash of everything loaded.
 */
    .syntax unified
    .thumb
    .text

    .global diff_it_loads
    .type diff_it_loads, %function
    .p2align 2
diff_it_loads:
    push    {r4-r11, lr}
    mov     r11, r0                 @ table
    mov     r10, r1                 @ rounds
    mov     r9, r2                  @ hash (seed)
    movs    r7, #0                  @ (read before the first LDM writes it)
1:
    @ index = (hash >> 5) & 0x3f0: a 16-byte aligned window in the table
    lsrs    r4, r9, #5
    and     r4, r4, #0x3f0
    add     r5, r11, r4
    and     r6, r9, #0xff
    cmp     r6, #128                @ flags for the IT blocks below
    ite     ls
    ldrbls  r2, [r5, #3]
    ldrhhi  r2, [r5, #6]
    eor     r9, r9, r2
    itt     hi
    ldrdhi  r2, r3, [r5]
    eorhi   r9, r9, r3
    ittee   eq
    ldreq   r2, [r5, #4]
    ldrsheq r3, [r5, #2]
    ldrsbne r2, [r5, #1]
    ldrne   r3, =0x9e3779b9         @ literal pool load inside an IT block
    add     r9, r9, r2
    eor     r9, r9, r3
    tst     r9, #1
    it      ne
    ldmne   r5, {r2, r3, r6, r7}
    add     r9, r9, r6
    eor     r9, r9, r7
    @ conditional LDRD whose destination is its own base (as in __ieee754_rem_pio2)
    mov     r3, r5
    cmp     r6, r7
    ite     cc
    ldrdcc  r2, r3, [r3]
    movcs   r3, #0                  @ (no address enters the hash: the output is layout-free)
    add     r9, r9, r2
    eor     r9, r9, r3
    @ a conditional branch right after an IT block
    cmp     r2, r3
    it      gt
    addgt   r9, r9, #7
    bls     2f
    ror     r9, r9, #3
2:
    @ post-indexed and pre-indexed loads with writeback, inside an IT block
    mov     r3, r5
    tst     r9, #2
    itt     eq
    ldreq   r2, [r3], #4
    ldrheq  r6, [r3, #2]!
    sub     r3, r3, r5              @ how far the writebacks moved the base
    eor     r9, r9, r3
    add     r9, r9, r6
    @ table branch on a value from flash
    and     r6, r9, #3
    tbb     [pc, r6]
3:
    .byte   (4f - 3b) / 2, (5f - 3b) / 2, (6f - 3b) / 2, (7f - 3b) / 2
4:  ldrb    r2, [r5, #9]
    b       8f
5:  ldrh    r2, [r5, #10]
    b       8f
6:  ldr     r2, [r5, #12]
    b       8f
7:  ldrsb   r2, [r5, #15]
8:
    eor     r9, r9, r2
    movw    r2, #0x0193
    movt    r2, #0x0100             @ FNV prime
    mul     r9, r9, r2
    subs    r10, r10, #1
    bne     1b
    bl      diff_pop_pc
    eor     r0, r9, r0
    pop     {r4-r11, pc}
    .pool
    .size diff_it_loads, . - diff_it_loads

    @ returns through POP {pc} from a conditional path: r0 = 0x5a5a
    .type diff_pop_pc, %function
    .p2align 1
diff_pop_pc:
    push    {r4, lr}
    movs    r4, #1
    cmp     r4, #1
    ittt    eq
    moveq   r0, #0x5a
    orreq   r0, r0, r0, lsl #8
    popeq   {r4, pc}
    movs    r0, #0
    pop     {r4, pc}
    .size diff_pop_pc, . - diff_pop_pc

/*
 * uint32_t diff_it_across_pages(uint32_t rounds)
 *   An IT block that crosses a 1 KB boundary: QEMU (and so Unicorn) ends a translated block
 *   there, so the next block starts inside the IT block and an interrupt can arrive between
 *   its instructions. The interrupted code must resume with its IT state and flags, and the
 *   handler must start outside any IT block (ARMv7-M ARM B1.5.6, B1.5.8). Returns a count that
 *   depends only on `rounds`.
 */
    .type diff_it_across_pages, %function
    .global diff_it_across_pages
    .p2align 10
diff_it_across_pages:
    push    {r4-r6, lr}
    movs    r1, #0
    movs    r2, #0
    movs    r3, #0
    movs    r4, #0
    b       1f
    .space  1024 - 14 - 2 - 16, 0   @ pad so the ITTTT below sits at offset 1016
1:  ands    r5, r0, #3              @ offset 1004 .. (the loop: 6 instructions before the IT)
    cmp     r5, #1
    nop
    nop
    nop
    nop
    itttt   ls                      @ offset 1016
    addls   r1, r1, #1              @ 1018
    addls   r2, r2, #3              @ 1020
    addls   r3, r3, #5              @ 1022 | the next instruction starts a new 1 KB page
    addls   r4, r4, #7              @ 1024
    subs    r0, r0, #1
    bne     1b
    add     r0, r1, r2, lsl #8
    add     r0, r0, r3, lsl #16
    add     r0, r0, r4, lsl #24
    pop     {r4-r6, pc}
    .size diff_it_across_pages, . - diff_it_across_pages
