/*
 * mps2-an386 startup: QEMU MPS2 AN386, Cortex-M4F.
 * Vector table: 16 core entries + 32 external IRQs (QEMU 7.2 hw/arm/mps2.c: num-irq = 32).
 */
#define NUM_IRQS 32
#include "startup_common.h"

__attribute__((section(".isr_vector"), used))
const vector_t g_vectors[16 + NUM_IRQS] = {
    CORE_VECTORS,
    IRQ_DECADE(IRQ_VEC, ) IRQ_DECADE(IRQ_VEC, 1) IRQ_DECADE(IRQ_VEC, 2)
    IRQ_VEC(30) IRQ_VEC(31)
};

_Static_assert(sizeof(g_vectors) == 4 * (16 + NUM_IRQS), "vector table size");
