/*
 * mcu-m startup: STM32L476RG, Cortex-M4F.
 * Vector table: 16 core entries + 82 external IRQs (RM0351 rev 9 table 58, positions 0..81, WWDG..FPU).
 */
#define NUM_IRQS 82
#include "startup_common.h"

__attribute__((section(".isr_vector"), used))
const vector_t g_vectors[16 + NUM_IRQS] = {
    CORE_VECTORS,
    IRQ_DECADE(IRQ_VEC, ) IRQ_DECADE(IRQ_VEC, 1) IRQ_DECADE(IRQ_VEC, 2)
    IRQ_DECADE(IRQ_VEC, 3) IRQ_DECADE(IRQ_VEC, 4) IRQ_DECADE(IRQ_VEC, 5)
    IRQ_DECADE(IRQ_VEC, 6) IRQ_DECADE(IRQ_VEC, 7)
    IRQ_VEC(80) IRQ_VEC(81)
};

_Static_assert(sizeof(g_vectors) == 4 * (16 + NUM_IRQS), "vector table size");
