/*
 * irq.c - diff-irq: SysTick interrupts arrive every 997 core cycles while the main program
 * reads constant tables from flash (loads.S: loads that wait with flash wait states on), runs an
 * IT block that a block boundary splits (loads.S diff_it_across_pages), keeps
 * floating-point values in registers across the interrupts (the handler uses the FPU: lazy FP
 * stacking) and relies on the SIMD GE flags across them. The handler checks its own work. What
 * is printed does not depend on where or how often the interrupts land: the main program's
 * hashes and the handler's error count (0). (The tests check from mcusim's exception count
 * that interrupts did arrive during the work.)
 */
#include <stdint.h>
#include <stdio.h>
#include "diff.h"
#include "mcusim.h"

uint32_t diff_it_loads(const uint8_t *table, uint32_t rounds, uint32_t seed);
uint32_t diff_it_across_pages(uint32_t rounds);

static volatile uint32_t ticks, handler_errors;

void SysTick_Handler(void)
{
    uint32_t k = ticks + 1;
    volatile float x = (float)(k & 1023);        /* FP in the handler: the lazy context store */
    float y = x * 0.5f + 2.0f;
    if ((uint32_t)(y * 2.0f) != (k & 1023) + 4)
        handler_errors++;
    uint32_t ge;                                 /* the handler's own GE flags */
    __asm volatile("usub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(ge) : "r"(k), "r"(~k));
    if (ge != ((((k & 0xff) >= (~k & 0xff)) ? (k & 0xff) : (~k & 0xff))
               | (((k >> 8 & 0xff) >= (~k >> 8 & 0xff)) ? (k & 0xff00) : (~k & 0xff00))
               | (((k >> 16 & 0xff) >= (~k >> 16 & 0xff)) ? (k & 0xff0000) : (~k & 0xff0000))
               | (((k >> 24 & 0xff) >= (~k >> 24 & 0xff)) ? (k & 0xff000000) : (~k & 0xff000000))))
        handler_errors++;
    if (diff_table[k & 1023] != (uint8_t)(((k & 1023) * 37u + 11u) ^ ((k & 1023) >> 3)))
        handler_errors++;
    ticks = k;
}

/* GE flags set before and used after a block boundary (the branch), where an interrupt may come. */
static uint32_t simd(uint32_t rounds)
{
    uint32_t h = 2166136261u, a = 0x80ff7f01u, b = 0x7f01807fu, r;
    for (uint32_t i = 0; i < rounds; i++) {
        __asm volatile("sadd8 %0, %1, %2\n\t"
                       "b 1f\n"
                       "1:\tnop\n\tnop\n\t"
                       "sel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b));
        h = diff_hash_word(h, r);
        a = a * 1664525u + 1013904223u;
        b ^= a >> 7;
    }
    return h;
}

/* Single-precision values live in s-registers across many interrupts. */
static uint32_t floats(uint32_t rounds)
{
    float acc0 = 1.0f, acc1 = 0.25f, acc2 = -3.5f, acc3 = 7.0f;
    for (uint32_t i = 0; i < rounds; i++) {
        acc0 = acc0 * 0.999f + 0.001f * (float)(i & 15);
        acc1 = acc1 + acc0 * 0.0001f;
        acc2 = acc2 * 0.5f + acc1;
        acc3 = acc3 - acc2 * 0.01f;
    }
    float all[4] = {acc0, acc1, acc2, acc3};
    return diff_hash(2166136261u, all, sizeof all);
}

int main(void)
{
    diff_setup();
    REG32(SYST_RVR) = 997 - 1;
    REG32(SYST_CVR) = 0;
    REG32(SYST_CSR) = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
    uint32_t (*loads)(const uint8_t *, uint32_t, uint32_t) = diff_code((void *)diff_it_loads);
    uint32_t tables = 2166136261u;
    for (uint32_t seed = 1; seed < 5; seed++)
        tables = diff_hash_word(tables, loads(diff_rodata(diff_table), 2000, seed * 0x9e3779b9u));
    uint32_t ge = simd(4000);
    uint32_t pages = (*(uint32_t (*)(uint32_t))diff_code((void *)diff_it_across_pages))(30000);
    uint32_t fp = floats(20000);
    REG32(SYST_CSR) = 0;
    diff_report("tables", tables);
    diff_report("simd", ge);
    diff_report("it-across-pages", pages);
    diff_report("floats", fp);
    printf("handler errors %lu\n", (unsigned long)handler_errors);
    return 0;
}
