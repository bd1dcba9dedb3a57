/*
 * dwt: measure a fixed loop with the DWT cycle counter.
 * Exit status: 0 = counter works and the count is plausible ("dwt: ok"),
 * 1 = counter present but the count is implausible,
 * 2 = no usable cycle counter (DWT access faults, NOCYCCNT set, or the
 *     counter does not move), e.g. on QEMU 7.2.
 *
 * Accesses to DEMCR/DWT run with a HardFault handler that skips a
 * faulting load/store, so a target without DWT cannot hang the program.
 */
#include <stdio.h>
#include "board.h"
#include "mcusim.h"

#define LOOP_ITERATIONS 1000u

static volatile uint32_t g_probing, g_probe_faults;

MCUSIM_HARDFAULT_WITH_FRAME(hardfault_handler_c)

__attribute__((used)) void hardfault_handler_c(uint32_t *frame)
{
    if (!g_probing)
        mcusim_exit(128 + 3);
    /* Skip the faulting instruction: 32-bit if the first halfword starts
     * with 0b11101, 0b11110 or 0b11111 (ARMv7-M ARM A5.1). */
    uint16_t hw = *(const uint16_t *)frame[6];
    frame[6] += ((hw >> 11) >= 0x1Du) ? 4u : 2u;
    g_probe_faults++;
    REG32(SCB_HFSR) = HFSR_FORCED;          /* clear (write 1) */
    REG32(SCB_CFSR) = REG32(SCB_CFSR);      /* clear all fault status */
}

/* 1000 iterations of nop; subs; bne - at least one cycle each. */
static void fixed_loop(void)
{
    uint32_t n = LOOP_ITERATIONS;
    __asm volatile(
        "1: nop\n"
        "subs %0, %0, #1\n"
        "bne 1b\n"
        : "+r"(n) : : "cc");
}

int main(void)
{
    uint32_t start = 0, end = 0, cycles = 0;
    int have;

    printf("dwt: board %s\n", BOARD_NAME);

    g_probing = 1;
    have = mcusim_cyccnt_enable() == 0;
    if (have) {
        start = mcusim_cyccnt();
        fixed_loop();
        end = mcusim_cyccnt();
    }
    g_probing = 0;

    if (g_probe_faults) {
        printf("dwt: DWT/DEMCR access faulted, no cycle counter\n");
        return 2;
    }
    if (!have) {
        printf("dwt: DWT_CTRL.NOCYCCNT set, no cycle counter\n");
        return 2;
    }
    cycles = end - start;
    if (cycles == 0) {
        printf("dwt: CYCCNT does not count\n");
        return 2;
    }
    printf("dwt: %u loop iterations took %lu cycles\n", LOOP_ITERATIONS,
           (unsigned long)cycles);
    if (cycles < LOOP_ITERATIONS / 2u || cycles > 100u * LOOP_ITERATIONS) {
        printf("dwt: count not plausible\n");
        return 1;
    }
    printf("dwt: ok\n");
    return 0;
}
