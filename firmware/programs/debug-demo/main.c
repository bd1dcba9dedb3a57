/*
 * debug-demo: a small program to debug under `mcusim run --gdb` (docs/debugging.md):
 * a global counter written in a loop (a watchpoint's target), a function with
 * locals, and, when a debugger sets make_fault to 1, an undefined instruction
 * that raises a UsageFault, escalated to HardFault (the default handler exits
 * with 131). The call is a region ("squares") and its result also goes to ITM
 * stimulus port 1, for the Python API's event callbacks. Built with -Og so
 * every local can be printed.
 */
#include <stdio.h>
#include "board.h"
#include "mcusim.h"

volatile unsigned int counter;  /* written once per loop iteration */
int checksum = -1;
volatile int make_fault;        /* set from the debugger: `set var make_fault = 1` */

static int __attribute__((noinline)) sum_of_squares(int limit)
{
    int total = 0;
    for (int i = 1; i <= limit; i++) {
        total += i * i;
        counter = (unsigned int)i;
    }
    return total;
}

static void __attribute__((noinline)) undefined_instruction(void)
{
    __asm volatile ("udf #0");
}

int main(void)
{
    mcusim_region_begin("squares");
    int squares = sum_of_squares(10);
    mcusim_region_end("squares");
    mcusim_itm_word(1, (uint32_t)squares);
    checksum = squares;
    printf("sum of squares 1..10 = %d\n", squares);
    if (make_fault)
        undefined_instruction();
    return squares == 385 ? 0 : 1;
}
