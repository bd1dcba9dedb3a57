/*
 * isa: instruction sequences timed with DWT CYCCNT, one line each: "isa <name>: <cycles>".
 * The cycles are those of the sequence alone: the measuring LDR and the NOP after it (3
 * cycles on a Cortex-M4, which tests/integration/test_isa.py checks exactly on zero-wait
 * memory) are taken off. Values differ per core; exit 0, or 2 without a cycle counter.
 */
#include <stdint.h>
#include <stdio.h>
#include "mcusim.h"

uint32_t isa_buffer[16] __attribute__((aligned(8))) = { 1, 2, 3, 4, 5, 6, 7, 8 };
uint32_t *isa_pointer = isa_buffer;
float isa_floats[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
const uint32_t isa_constant = 0x12345678u;  /* .rodata: in flash on the boards with flash */

#define MEASURE_OVERHEAD 3  /* ldr r10, [r12] (2) + nop (1) */

/* setup runs before the first CYCCNT read; body runs between the reads. Each sequence runs
 * twice and the second run is reported, so code fetched through a flash cache is warm. */
#define TIME(name, setup, body) do {                                                   \
    uint32_t t0 = 0, t1 = 0;                                                          \
    for (volatile int pass = 0; pass < 2; pass++)                                      \
        __asm__ volatile(".syntax unified\n" setup "\n"                              \
                         "ldr r12, =0xE0001004\n"                                     \
                         "ldr r10, [r12]\n nop\n" body "\n ldr r11, [r12]\n"          \
                         "mov %0, r10\n mov %1, r11\n b 9f\n .ltorg\n 9:\n"           \
                         : "=r"(t0), "=r"(t1) :                                       \
                         : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r10", "r11", \
                           "r12", "s0", "s1", "s2", "s3", "s16", "s17", "cc", "memory"); \
    printf("isa %s: %ld\n", name, (long)(t1 - t0 - MEASURE_OVERHEAD));                \
} while (0)

int main(void)
{
    if (!mcusim_cyccnt_counts()) {
        printf("isa: CYCCNT does not count\n");
        return 2;
    }
    TIME("alu x4", "", "adds r0, #1\n adds r0, #1\n adds r0, #1\n adds r0, #1");
    TIME("mul x4", "", "mul r0, r1, r2\n mul r0, r1, r2\n mul r0, r1, r2\n mul r0, r1, r2");
    TIME("smlad x4", "", "smlad r0, r1, r2, r0\n smlad r0, r1, r2, r0\n smlad r0, r1, r2, r0\n"
                         "smlad r0, r1, r2, r0");
    TIME("ldr", "ldr r1, =isa_buffer", "ldr r0, [r1]");
    TIME("ldr flash", "ldr r1, =isa_constant", "ldr r0, [r1]");
    TIME("ldr x4 independent", "ldr r1, =isa_buffer",
         "ldr r0, [r1]\n ldr r2, [r1, #4]\n ldr r3, [r1, #8]\n ldr r4, [r1, #12]");
    TIME("ldr dependent", "ldr r1, =isa_pointer", "ldr r0, [r1]\n ldr r2, [r0]");
    TIME("address interlock", "ldr r1, =isa_buffer", "adds r1, #0\n ldr r0, [r1]");
    TIME("str x4", "ldr r1, =isa_buffer", "str r0, [r1]\n str r0, [r1, #4]\n str r0, [r1, #8]\n"
                                          "str r0, [r1, #12]");
    TIME("ldr then str", "ldr r1, =isa_buffer", "ldr r0, [r1]\n str r0, [r1, #4]");
    TIME("str register offset then ldr", "ldr r1, =isa_buffer\n movs r2, #4",
         "str r0, [r1, r2]\n ldr r3, [r1]");
    TIME("ldrd", "ldr r1, =isa_buffer", "ldrd r2, r3, [r1]");
    TIME("ldm x4", "ldr r1, =isa_buffer", "ldm r1, {r2, r3, r4, r5}");
    TIME("push pop x4", "", "push {r4, r5, r6, r7}\n pop {r4, r5, r6, r7}");
    TIME("it folded", "", "movs r0, #0\n it eq\n moveq r2, r3");
    TIME("b taken", "", "b 2f\n 2:");
    TIME("bne not taken", "", "cmp r0, r0\n bne 2f\n nop\n 2:");
    TIME("cbz taken", "", "movs r0, #0\n cbz r0, 2f\n nop\n 2:");
    TIME("bne not taken then literal load", "", "cmp r0, r0\n bne 2f\n ldr r1, =0x12345678\n 2:");
    TIME("tbb switch", "movs r0, #1", "cmp r0, #3\n bhi 3f\n tbb [pc, r0]\n"
                                      ".byte 2, 2, 2, 2\n 3: nop");
    TIME("branch to a folded it", "ldr r1, =isa_buffer",
         "cmp r0, r0\n b 2f\n ldr r2, [r1]\n 2: it eq\n ldreq r3, [r1]");
    TIME("semihosting call then it", "movs r0, #0x10", "cmp r2, r2\n bkpt 0xab\n it eq\n moveq r2, r3");
    TIME("vadd x4", "", "vadd.f32 s0, s1, s2\n vadd.f32 s0, s1, s2\n vadd.f32 s0, s1, s2\n"
                        "vadd.f32 s0, s1, s2");
    TIME("vmla", "", "vmla.f32 s0, s1, s2");
    TIME("vdiv", "vmov.f32 s2, #1.0", "vdiv.f32 s0, s1, s2");
    TIME("vldr", "ldr r1, =isa_floats", "vldr s0, [r1]");
    TIME("vpush vpop", "", "vpush {s16, s17}\n vpop {s16, s17}");
    return 0;
}
