/*
 * sram-timing: data loops over RAM the core reaches through its data cache (the STM32F7's
 * SRAM1 over AXIM) against the same loops over tightly coupled RAM. One line each:
 *   "sram <loop> <span> <where> <setting>: <cycles>"
 * <where> is "cached" (board_cached_ram) or "tcm" (this program's .bss, which the kit's mcu-d
 * places in DTCM); <setting> is "none" or "dcache". The loop lines give the steady-state cycles
 * of one iteration (per_iteration: the call and the first passes cancel); the "cold-read"
 * and "written-read" lines give the cycles of one pass over <span> bytes right after the data
 * cache was emptied, without and with a pass of stores first (write-allocate). Exit 0 (also when
 * the board has no RAM behind a data cache: nothing to time), or 2 without a cycle counter.
 *
 * Loops (hand-written; r1 points at {base, span - 1}; one access per 32-byte line, wrapping):
 *   read:  ldr r3, [r1, r2]; adds r2, #32; ands r2, r12; subs r0, #1; bne
 *   write: str instead of ldr
 *   rmw:   ldr, adds r3, #1, str to the same word, then as above
 */
#include <stdint.h>
#include <stdio.h>
#include "board.h"
#include "mcusim.h"

#define LINE 32u
#define LOOP(name, body)                                                   \
    "    .balign 8\n"                                                      \
    "    .global sram_" name "\n"                                          \
    "    .type sram_" name ", %function\n"                                 \
    "    .thumb_func\n"                                                    \
    "sram_" name ":\n"                                                     \
    "    ldr r12, [r1, #4]\n"                                              \
    "    ldr r1, [r1]\n"                                                   \
    "    movs r2, #0\n"                                                    \
    "1:  " body                                                            \
    "    adds r2, #32\n"                                                   \
    "    ands r2, r2, r12\n"                                               \
    "    subs r0, #1\n"                                                    \
    "    bne 1b\n"                                                         \
    "    bx lr\n"

__asm__(".syntax unified\n .thumb\n .section .text.sram_loops,\"ax\",%progbits\n"
        LOOP("read", "ldr r3, [r1, r2]\n")
        LOOP("write", "str r3, [r1, r2]\n")
        LOOP("rmw", "ldr r3, [r1, r2]\n    adds r3, #1\n    str r3, [r1, r2]\n")
        " .text\n");

extern mcusim_loop_fn sram_read, sram_write, sram_rmw;

static uint32_t tcm_buffer[8192 / 4] __attribute__((aligned(32)));

/* The loops' arguments, in .bss (DTCM on the kit's mcu-d): reading them touches no cache. */
static struct span { uintptr_t base; uint32_t mask; } in_cached, in_tcm;

/* Cycles of one iteration in the steady state: 2048 iterations minus 1024, after 1024 to warm up
 * (each pass sweeps an 8 KB span 4 times over, so every line is in the state the loop keeps
 * it), rounded: a branch the predictor gets wrong once more in one of the calls moves the
 * total by a few cycles, not the iteration. */
static long per_iteration(mcusim_loop_fn *loop, const struct span *arg)
{
    mcusim_time_loop(loop, 1024, arg);
    uint32_t once = mcusim_time_loop(loop, 1024, arg);
    return ((long)mcusim_time_loop(loop, 2048, arg) - (long)once + 512) / 1024;
}

static const char *setting(uint32_t features)
{
    return features & BOARD_FLASH_DCACHE ? "dcache" : "none";
}

int main(void)
{
    if (!mcusim_cyccnt_counts()) {
        printf("sram-timing: CYCCNT does not count\n");
        return 2;
    }
    void *cached = board_cached_ram(sizeof tcm_buffer);
    if (!cached) {
        printf("sram-timing: no RAM behind a data cache on %s\n", BOARD_NAME);
        return 0;
    }
    static const struct { const char *name; mcusim_loop_fn *loop; } loops[] = {
        { "read", sram_read }, { "write", sram_write }, { "rmw", sram_rmw } };
    static const uint32_t spans[] = { 2048, 8192 };
    const uint32_t features[] = { BOARD_FLASH_ICACHE, BOARD_FLASH_ICACHE | BOARD_FLASH_DCACHE };
    for (unsigned f = 0; f < 2; f++) {
        if (board_flash_features(features[f]) != 0)
            continue;
        for (unsigned s = 0; s < 2; s++)
            for (unsigned k = 0; k < 3; k++) {
                in_cached = (struct span){ (uintptr_t)cached, spans[s] - 1 };
                in_tcm = (struct span){ (uintptr_t)tcm_buffer, spans[s] - 1 };
                printf("sram %s %lu cached %s: %ld\n", loops[k].name, (unsigned long)spans[s], setting(features[f]),
                       per_iteration(loops[k].loop, &in_cached));
                printf("sram %s %lu tcm %s: %ld\n", loops[k].name, (unsigned long)spans[s], setting(features[f]),
                       per_iteration(loops[k].loop, &in_tcm));
            }
    }
    /* One pass over 2 KB from an empty data cache: every line misses, unless a pass of stores
     * allocated them first. The loop runs once beforehand (instruction cache warm). */
    in_cached = (struct span){ (uintptr_t)cached, 2048 - 1 };
    in_tcm = (struct span){ (uintptr_t)tcm_buffer, 2048 - 1 };
    const uint32_t lines = 2048 / LINE;
    for (int written = 0; written < 2; written++) {
        board_flash_features(BOARD_FLASH_ICACHE | BOARD_FLASH_DCACHE);  /* both caches cleaned and emptied */
        if (written)
            mcusim_time_loop(sram_write, lines, &in_cached);
        mcusim_time_loop(sram_read, lines, &in_tcm);  /* the loop's code cached, its branch predicted */
        uint32_t from_cached = mcusim_time_loop(sram_read, lines, &in_cached);
        uint32_t from_tcm = mcusim_time_loop(sram_read, lines, &in_tcm);
        const char *name = written ? "written-read" : "cold-read";
        printf("sram %s 2048 cached dcache: %lu\n", name, (unsigned long)from_cached);
        printf("sram %s 2048 tcm dcache: %lu\n", name, (unsigned long)from_tcm);
    }
    return 0;
}
