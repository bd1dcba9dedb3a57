/*
 * mcu-d startup: STM32F746ZG, Cortex-M7F.
 * Vector table: 16 core entries + 98 external IRQs (RM0385 rev 8, 10.1.2 "Interrupt and exception vectors", positions 0..97, WWDG..SPDIF_RX).
 */
#define NUM_IRQS 98
#include "startup_common.h"

__attribute__((section(".isr_vector"), used))
const vector_t g_vectors[16 + NUM_IRQS] = {
    CORE_VECTORS,
    IRQ_DECADE(IRQ_VEC, ) IRQ_DECADE(IRQ_VEC, 1) IRQ_DECADE(IRQ_VEC, 2)
    IRQ_DECADE(IRQ_VEC, 3) IRQ_DECADE(IRQ_VEC, 4) IRQ_DECADE(IRQ_VEC, 5)
    IRQ_DECADE(IRQ_VEC, 6) IRQ_DECADE(IRQ_VEC, 7) IRQ_DECADE(IRQ_VEC, 8)
    IRQ_VEC(90) IRQ_VEC(91) IRQ_VEC(92) IRQ_VEC(93) IRQ_VEC(94) IRQ_VEC(95) IRQ_VEC(96) IRQ_VEC(97)
};

_Static_assert(sizeof(g_vectors) == 4 * (16 + NUM_IRQS), "vector table size");
