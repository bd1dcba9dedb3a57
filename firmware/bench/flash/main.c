/*
 * flash-timing: the same loops timed from flash with each flash accelerator setting the
 * board offers, and from RAM. One line each:
 *   "flash <loop> <where> <setting>: <cycles per iteration>"
 * <where> is flash, ram, or alias (the board's second path to the flash, e.g. the STM32F7's
 * ITCM interface, with its own accelerators: prefetch, icache = its cache).
 * where <setting> is "none" or a '+'-joined list of prefetch, icache, dcache. The cycles
 * per iteration are mcusim_cycles_per_100() / 100 (include/mcusim.h): call overhead and cold
 * misses cancel. Exit 0, or 2 without a cycle counter.
 *
 * Loops (hand-written, 8-byte aligned, 32 bytes of code per iteration):
 *   alu:  14 x adds, subs, bne          (no data access)
 *   load: 12 x adds, ldr from flash (a constant), subs, bne
 *   mid:  6 x adds, ldr from flash, cmp, beq (never taken: the next block follows on), 5 x adds,
 *         subs, bne -- the load competes with the prefetch of the code after it
 */
#include <stdint.h>
#include <stdio.h>
#include "board.h"
#include "mcusim.h"

const uint32_t flash_constant = 0x5A5A5A5Au;  /* .rodata: in flash */

/* r0 = iterations, r1 = address to load from (load loop). */
#define LOOPS(prefix)                                                              \
    "    .balign 8\n"                                                              \
    "    .global " prefix "_alu\n"                                                 \
    "    .type " prefix "_alu, %function\n"                                        \
    "    .thumb_func\n"                                                            \
    prefix "_alu:\n"                                                               \
    "1:  .rept 14\n    adds r2, #1\n    .endr\n"                                   \
    "    subs r0, #1\n"                                                            \
    "    bne 1b\n"                                                                 \
    "    bx lr\n"                                                                  \
    "    .balign 8\n"                                                              \
    "    .global " prefix "_load\n"                                                \
    "    .type " prefix "_load, %function\n"                                       \
    "    .thumb_func\n"                                                            \
    prefix "_load:\n"                                                              \
    "1:  .rept 12\n    adds r2, #1\n    .endr\n"                                   \
    "    ldr r3, [r1]\n"                                                           \
    "    subs r0, #1\n"                                                            \
    "    bne 1b\n"                                                                 \
    "    bx lr\n"                                                                  \
    "    .balign 8\n"                                                              \
    "    .global " prefix "_mid\n"                                                 \
    "    .type " prefix "_mid, %function\n"                                        \
    "    .thumb_func\n"                                                            \
    prefix "_mid:\n"                                                               \
    "1:  .rept 6\n    adds r2, #1\n    .endr\n"                                    \
    "    ldr r3, [r1]\n"                                                           \
    "    cmp r3, #0\n"                                                             \
    "    beq 2f\n"                                                                 \
    "    .rept 5\n    adds r2, #1\n    .endr\n"                                    \
    "    subs r0, #1\n"                                                            \
    "    bne 1b\n"                                                                 \
    "2:  bx lr\n"

__asm__(".syntax unified\n .thumb\n .section .text.flash_loops,\"ax\",%progbits\n" LOOPS("flash")
        " .section .ramfunc.loops,\"ax\",%progbits\n" LOOPS("ram") " .text\n");

extern mcusim_loop_fn flash_alu, flash_load, flash_mid, ram_alu, ram_load, ram_mid;

static long per_iteration(mcusim_loop_fn *loop)
{
    return mcusim_cycles_per_100(loop, &flash_constant) / 100;
}

static long via_alias(mcusim_loop_fn *loop)
{
    return per_iteration((mcusim_loop_fn *)board_flash_alias(loop));
}

static void setting_name(uint32_t features, char *out, size_t size)
{
    static const char *const names[] = { "prefetch", "icache", "dcache" };
    int n = 0;
    out[0] = 0;
    for (int i = 0; i < 3; i++)
        if (features & (1u << i))
            n += snprintf(out + n, size - n, "%s%s", n ? "+" : "", names[i]);
    if (!n)
        snprintf(out, size, "none");
}

int main(void)
{
    if (!mcusim_cyccnt_counts()) {
        printf("flash-timing: CYCCNT does not count\n");
        return 2;
    }
    char name[32];
    for (uint32_t features = 0; features < 8; features++) {
        if (board_flash_features(features) != 0)
            continue;
        setting_name(features, name, sizeof name);
        printf("flash alu flash %s: %ld\n", name, per_iteration(flash_alu));
        printf("flash load flash %s: %ld\n", name, per_iteration(flash_load));
        printf("flash mid flash %s: %ld\n", name, per_iteration(flash_mid));
        if (features == 0) {
            printf("flash alu ram %s: %ld\n", name, per_iteration(ram_alu));
            printf("flash load ram %s: %ld\n", name, per_iteration(ram_load));
            printf("flash mid ram %s: %ld\n", name, per_iteration(ram_mid));
        }
    }
    if (board_flash_alias(flash_alu)) {  /* the same loops through the board's second flash path */
        for (uint32_t features = 0; features < 4; features++) {
            if (board_flash_alias_features(features) != 0)
                continue;
            setting_name(features, name, sizeof name);
            printf("flash alu alias %s: %ld\n", name, via_alias(flash_alu));
            printf("flash load alias %s: %ld\n", name, via_alias(flash_load));
            printf("flash mid alias %s: %ld\n", name, via_alias(flash_mid));
        }
        board_flash_alias_features(BOARD_FLASH_PREFETCH | BOARD_FLASH_ICACHE);
    }
    return 0;
}
