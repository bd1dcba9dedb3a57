/*
 * random.c - diff-random: runs the random instruction sequences of a generated assembly file
 * (tests/integration/randprog.py writes it; the tests build this program with it) on several
 * inputs each, and prints one hash per sequence of its final registers, flags and RAM.
 */
#include <stdint.h>
#include <string.h>
#include "diff.h"

typedef void rand_function_t(uint32_t state[10]);
extern rand_function_t *const rand_functions[];
extern const uint32_t rand_function_count;

__attribute__((aligned(8))) uint8_t rand_ram[1024 + 16];

int main(void)
{
    diff_setup();
    uint32_t seed = 0x12345678u;
    for (uint32_t k = 0; k < rand_function_count; k++) {
        rand_function_t *function = (rand_function_t *)diff_code((void *)rand_functions[k]);
        uint32_t h = 2166136261u;
        for (int input = 0; input < 6; input++) {
            uint32_t state[10];
            for (int i = 0; i < 10; i++) {
                seed = seed * 1664525u + 1013904223u;
                state[i] = seed ^ (seed >> 13);
            }
            state[9] &= 0xF80F0000u;  /* NZCVQ and GE */
            for (size_t i = 0; i < sizeof rand_ram; i++)
                rand_ram[i] = (uint8_t)(i * 7u + k + (uint32_t)input);
            function(state);
            h = diff_hash(h, state, sizeof state);
            h = diff_hash(h, rand_ram, sizeof rand_ram);
        }
        char name[16] = "random ";
        name[7] = (char)('a' + k % 26);
        name[8] = (char)('a' + k / 26 % 26);
        diff_report(name, h);
    }
    return 0;
}
