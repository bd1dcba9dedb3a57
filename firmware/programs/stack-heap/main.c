/*
 * stack-heap: a known stack depth and known heap use, for mcusim's memory peaks (run.json
 * `memory`). Recurses DEPTH levels, each frame writing non-zero locals; the deepest level saves
 * its SP in `deepest_sp`. Then mallocs three blocks, fills them, and saves the program break
 * (newlib's sbrk) in `heap_break`. Then runs PROCESS_DEPTH levels of the same recursion in Thread
 * mode on the process stack (PSP = `process_stack_top`, CONTROL.SPSEL set), its deepest SP in
 * `deepest_psp`. Exit status 0. The test reads them after the run; the regions "recurse" and
 * "allocate" give it a deep and a shallow stack peak.
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

#ifndef PROCESS_DEPTH
#define PROCESS_DEPTH 16
#endif

volatile uint32_t deepest_sp, heap_break, deepest_psp, process_stack_top;
static volatile uint32_t *deepest = &deepest_sp;  /* where the deepest level records its SP */
static uint32_t process_stack[256] __attribute__((aligned(8)));

__attribute__((noinline)) static int recurse(int n)
{
    volatile int locals[6];
    for (int i = 0; i < 6; i++)
        locals[i] = n * 8 + i + 1;
    if (n == 0) {
        uint32_t sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        *deepest = sp;
        return locals[0];
    }
    return recurse(n - 1) + locals[5];
}

__attribute__((noinline, used)) int recurse_on_process_stack(void)
{
    deepest = &deepest_psp;
    return recurse(PROCESS_DEPTH);
}

/* Switch Thread mode to the process stack at `top`, call recurse_on_process_stack, switch back. */
__attribute__((naked, noinline)) static int on_process_stack(uint32_t top __attribute__((unused)))
{
    __asm__ volatile(
        "push {r4, lr}\n"
        "msr psp, r0\n"
        "mrs r4, control\n"
        "orr r1, r4, #2\n"
        "msr control, r1\n"
        "isb\n"
        "bl recurse_on_process_stack\n"
        "msr control, r4\n"
        "isb\n"
        "pop {r4, pc}\n");
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
    process_stack_top = (uint32_t)(uintptr_t)(process_stack + 256);
    int process_sum = on_process_stack(process_stack_top);
    return depth_sum > 0 && process_sum > 0 && blocks[2][999] == 0x5A ? 0 : 1;
}
