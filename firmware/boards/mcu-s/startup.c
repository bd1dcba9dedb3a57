/*
 * mcu-s startup: nRF52840, Cortex-M4F.
 * Vector table: 16 core entries + 48 external IRQs (nRF52840 PS v1.7, instantiation table: IDs 0..47, POWER_CLOCK..SPIM3).
 */
#define NUM_IRQS 48
#include "startup_common.h"

__attribute__((section(".isr_vector"), used))
const vector_t g_vectors[16 + NUM_IRQS] = {
    CORE_VECTORS,
    IRQ_DECADE(IRQ_VEC, ) IRQ_DECADE(IRQ_VEC, 1) IRQ_DECADE(IRQ_VEC, 2)
    IRQ_DECADE(IRQ_VEC, 3)
    IRQ_VEC(40) IRQ_VEC(41) IRQ_VEC(42) IRQ_VEC(43) IRQ_VEC(44) IRQ_VEC(45) IRQ_VEC(46) IRQ_VEC(47)
};

_Static_assert(sizeof(g_vectors) == 4 * (16 + NUM_IRQS), "vector table size");
