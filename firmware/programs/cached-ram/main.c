/*
 * cached-ram: a steady load on RAM behind a data cache, for mcusim's sampled data timing
 * (--data-timing; tests/integration/test_data_sampling.py). It sweeps a 16 KB buffer in the
 * board's cached RAM (board_cached_ram: SRAM1 on mcu-d, four times its L1 data cache), reading
 * and updating one word per 32-byte line, PASSES times, so every pass misses on every line and
 * writes back what the pass before dirtied. It prints a checksum that does not depend on timing
 * and exits 0. Boards without cached RAM sweep a buffer in .bss instead.
 */
#include <stdint.h>
#include <stdio.h>
#include "board.h"

#ifndef PASSES
#define PASSES 400
#endif
#define BYTES 16384u
#define LINE_WORDS 8u

static uint32_t fallback[BYTES / 4];

int main(void)
{
    volatile uint32_t *buffer = board_cached_ram(BYTES);
    if (buffer == NULL)
        buffer = fallback;
    for (uint32_t i = 0; i < BYTES / 4; i++)
        buffer[i] = i * 2654435761u;
    uint32_t sum = 0;
    for (uint32_t pass = 0; pass < PASSES; pass++) {
        for (uint32_t i = 0; i < BYTES / 4; i += LINE_WORDS) {
            uint32_t value = buffer[i];
            sum = (sum ^ value) * 16777619u + pass;
            buffer[i] = value + sum;
        }
    }
    printf("cached-ram sum %08lx\n", (unsigned long)sum);
    return 0;
}
