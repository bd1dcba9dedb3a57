/*
 * mcu-b startup: Apollo3 Blue, Cortex-M4F, linked at 0xC000 behind the bootloader.
 * Vector table: 16 core entries + 32 external IRQs (Apollo3 apollo3.svd / AmbiqSuite apollo3.h IRQn 0..31, BROWNOUT..CLKGEN).
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
