/*
 * stack-heap: a known stack depth and known heap use, for mcusim's memory peaks (run.json
 * `memory`). Recurses DEPTH levels, each frame writing non-zero locals; the deepest level saves
 * its SP in `deepest_sp`. Then mallocs three blocks, fills them, and saves the program break
 * (newlib's sbrk) in `heap_break`. Exit status 0. The test reads both after the run; the regions
 * "recurse" and "allocate" give it a deep and a shallow stack peak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include "mcusim.h"

void *sbrk(ptrdiff_t increment);  /* newlib (unistd.h declares it outside strict C11) */

#ifndef DEPTH
#define DEPTH 64
#endif

volatile uint32_t deepest_sp, heap_break;

__attribute__((noinline)) static int recurse(int n)
{
    volatile int locals[6];
    for (int i = 0; i < 6; i++)
        locals[i] = n * 8 + i + 1;
    if (n == 0) {
        uint32_t sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        deepest_sp = sp;
        return locals[0];
    }
    return recurse(n - 1) + locals[5];
}

int main(void)
{
    mcusim_region_begin("recurse");
    int depth_sum = recurse(DEPTH);
    mcusim_region_end("recurse");
    mcusim_region_begin("allocate");
    static const size_t sizes[] = {100, 200, 1000};
    char *blocks[3];
    for (int i = 0; i < 3; i++) {
        blocks[i] = malloc(sizes[i]);
        if (blocks[i] == 0)
            return 2;
        memset(blocks[i], 0x5A, sizes[i]);
    }
    mcusim_region_end("allocate");
    heap_break = (uint32_t)sbrk(0);
    return depth_sum > 0 && blocks[2][999] == 0x5A ? 0 : 1;
}
