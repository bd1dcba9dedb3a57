/*
 * pipeline: hand-written loops that show how the core issues instructions, one line each:
 *   "pipeline <loop>: <cycles per 100 iterations>"
 * (mcusim_cycles_per_100() in include/mcusim.h). Every loop is its body, then `subs r0, #1;
 * bne 1b`; r1 points at `data` (r3 = data[1] for the branch loops). The expected counts per
 * core, with the rule behind each, are in tests/integration/test_pipeline.py.
 *   empty        the loop alone
 *   alu_pairs    6 independent ADDs (a dual-issue core pairs them)
 *   alu_chain    6 ADDs, each using the one before
 *   mac_chain    6 MLAs accumulating into one register (the accumulator is read late)
 *   mul_chain    6 MULs, each multiplying the one before's result
 *   load_use     3 x (LDR, then an ADD of what it loaded)
 *   clz_only     6 independent CLZs (only the older slot of a pair)
 *   branch_never a conditional branch that is never taken
 *   branch_alt   the same branch taken every other iteration (a 2-bit predictor always misses)
 * Exit 0, or 2 without a cycle counter.
 */
#include <stdint.h>
#include <stdio.h>
#include "mcusim.h"

static uint32_t data[2];

#define LOOP(name, body)                                                         \
    "    .balign 8\n    .global " name "\n    .type " name ", %function\n"      \
    "    .thumb_func\n" name ":\n"                                              \
    "    push {r4, r5, r6, r7}\n"                                               \
    "    ldr r3, [r1, #4]\n"                                                    \
    "    .balign 8\n"                                                           \
    "1:  " body "\n"                                                            \
    "    subs r0, #1\n"                                                         \
    "    bne 1b\n"                                                              \
    "    pop {r4, r5, r6, r7}\n"                                                \
    "    bx lr\n"

#define SIX(insn) insn "\n" insn "\n" insn "\n" insn "\n" insn "\n" insn "\n"

__asm__(".syntax unified\n .thumb\n .section .text.pipeline_loops,\"ax\",%progbits\n"
    LOOP("empty", "")
    LOOP("alu_pairs", "adds r2, #1\n adds r3, #1\n adds r4, #1\n adds r5, #1\n adds r6, #1\n adds r7, #1")
    LOOP("alu_chain", SIX("adds r2, #1"))
    LOOP("mac_chain", SIX("mla r2, r4, r5, r2"))
    LOOP("mul_chain", SIX("mul r2, r2, r4"))
    LOOP("load_use", "ldr r2, [r1]\n adds r2, #1\n ldr r4, [r1]\n adds r4, #1\n ldr r5, [r1]\n adds r5, #1")
    LOOP("clz_only", "clz r2, r1\n clz r3, r1\n clz r4, r1\n clz r5, r1\n clz r6, r1\n clz r7, r1")
    LOOP("branch_never", "tst r0, r3\n bne 2f\n adds r2, #1\n2:")
    LOOP("branch_alt", "tst r0, r3\n bne 2f\n adds r2, #1\n2:")
    " .text\n");

extern mcusim_loop_fn empty, alu_pairs, alu_chain, mac_chain, mul_chain, load_use, clz_only, branch_never,
    branch_alt;

static void report(const char *name, mcusim_loop_fn *loop, uint32_t mask)
{
    data[1] = mask;
    printf("pipeline %s: %ld\n", name, mcusim_cycles_per_100(loop, data));
}

int main(void)
{
    if (!mcusim_cyccnt_counts()) {
        printf("pipeline: CYCCNT does not count\n");
        return 2;
    }
    report("empty", empty, 0);
    report("alu_pairs", alu_pairs, 0);
    report("alu_chain", alu_chain, 0);
    report("mac_chain", mac_chain, 0);
    report("mul_chain", mul_chain, 0);
    report("load_use", load_use, 0);
    report("clz_only", clz_only, 0);
    report("branch_never", branch_never, 0);
    report("branch_alt", branch_alt, 1);
    return 0;
}
