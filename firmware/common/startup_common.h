/*
 * startup_common.h - included once by each boards/<board>/startup.c.
 * Provides the weak exception/IRQ handlers, the core part of the vector
 * table and Reset_Handler (the reset sequence). The board file sets
 * NUM_IRQS and lists its IRQ vectors.
 *
 * Handler names: the architectural ones (Reset_Handler, NMI_Handler, ...)
 * and IRQ<n>_Handler for external interrupt n (n = 0..NUM_IRQS-1).
 */
#ifndef STARTUP_COMMON_H
#define STARTUP_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include "board.h"
#include "mcusim.h"

/* Linker script symbols (common/sections.ld). */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

int main(void);
void __libc_init_array(void);
/* Defined only when librdimon is linked (semihosting stdio). */
void initialise_monitor_handles(void) __attribute__((weak));

/* crti.o/crtn.o are not linked (-nostartfiles): __libc_init_array calls
 * _init, exit calls _fini. */
void _init(void) {}
void _fini(void) {}

/* Unexpected exception: stop the program through semihosting with exit
 * status 128 + exception number (IPSR), e.g. 131 for HardFault. */
void Default_Handler(void)
{
    uint32_t ipsr;
    __asm volatile ("mrs %0, ipsr" : "=r"(ipsr));
    mcusim_exit(128 + (int)(ipsr & 0x7F));
}

#define WEAK_ALIAS __attribute__((weak, alias("Default_Handler")))
void Reset_Handler(void);
void NMI_Handler(void) WEAK_ALIAS;
void HardFault_Handler(void) WEAK_ALIAS;
void MemManage_Handler(void) WEAK_ALIAS;
void BusFault_Handler(void) WEAK_ALIAS;
void UsageFault_Handler(void) WEAK_ALIAS;
void SVC_Handler(void) WEAK_ALIAS;
void DebugMon_Handler(void) WEAK_ALIAS;
void PendSV_Handler(void) WEAK_ALIAS;
void SysTick_Handler(void) WEAK_ALIAS;

/* IRQ<n>_Handler for n = 0..99, all weak aliases of Default_Handler. */
#define IRQ_DECL(n) void IRQ##n##_Handler(void) WEAK_ALIAS;
#define IRQ_DECADE(M, d) M(d##0) M(d##1) M(d##2) M(d##3) M(d##4) \
                         M(d##5) M(d##6) M(d##7) M(d##8) M(d##9)
IRQ_DECADE(IRQ_DECL, ) IRQ_DECADE(IRQ_DECL, 1) IRQ_DECADE(IRQ_DECL, 2)
IRQ_DECADE(IRQ_DECL, 3) IRQ_DECADE(IRQ_DECL, 4) IRQ_DECADE(IRQ_DECL, 5)
IRQ_DECADE(IRQ_DECL, 6) IRQ_DECADE(IRQ_DECL, 7) IRQ_DECADE(IRQ_DECL, 8)
IRQ_DECADE(IRQ_DECL, 9)

/* Vector table entries. */
typedef void (*vector_t)(void);
#define IRQ_VEC(n) IRQ##n##_Handler,
/* ARMv7-M ARM B1.5.2/B1.5.3: word 0 = initial SP, 1..15 = exceptions. */
#define CORE_VECTORS                                    \
    (vector_t)(uintptr_t)&_estack, Reset_Handler,       \
    NMI_Handler, HardFault_Handler, MemManage_Handler,  \
    BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0,   \
    SVC_Handler, DebugMon_Handler, 0, PendSV_Handler,   \
    SysTick_Handler

/* Reset sequence shared by all boards. */
void Reset_Handler(void)
{
    /* FPU first (CP10/CP11 full access), so that no later code can trip a
     * NOCP UsageFault; DSB+ISB as required after a CPACR write. */
    REG32(SCB_CPACR) |= CPACR_CP10_CP11_FULL;
    mcusim_dsb();
    mcusim_isb();

    for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;)
        *d++ = *s++;
    for (uint32_t *d = &_sbss; d < &_ebss;)
        *d++ = 0;

    SystemInit();
    if (initialise_monitor_handles)
        initialise_monitor_handles();
    __libc_init_array();
    exit(main());
}

#endif /* STARTUP_COMMON_H */
