/*
 * memory-traffic: a region that moves a known number of bytes, for mcusim's memory traffic and
 * roofline (--memory-traffic, run.json `roofline`). Inside the region "traffic" it reads the
 * constant table `table` (WORDS words, in flash where the board has flash) one word at a time
 * and writes `buffer` (WORDS / 2 words, in RAM) one word at a time; the table
 * `mcusim_region_info` gives the region WORDS MACs. Exit status 0 when the sums are right.
 */
#include <stdint.h>

#include "mcusim.h"

#ifndef WORDS
#define WORDS 1024
#endif

const uint32_t table[WORDS] = {1, 2, 3};  /* the rest zero: in .rodata all the same */
uint32_t buffer[WORDS / 2];

const mcusim_region_info_t mcusim_region_info[] = {{"traffic", WORDS, 6 * WORDS}, {0, 0, 0}};

int main(void)
{
    __asm__ volatile("" : : "r"(mcusim_region_info));  /* keep the table for mcusim (--gc-sections) */
    const volatile uint32_t *source = table;
    volatile uint32_t *destination = buffer;
    uint32_t sum = 0;
    mcusim_region_begin("traffic");
    for (int i = 0; i < WORDS; i++)
        sum += source[i];
    for (int i = 0; i < WORDS / 2; i++)
        destination[i] = sum + (uint32_t)i;
    mcusim_region_end("traffic");
    return sum == 6 && buffer[WORDS / 2 - 1] == 6 + WORDS / 2 - 1 ? 0 : 1;
}
