/*
 * startup.c - the differential programs' reset code: plain, board-independent startup as
 * generic firmware has it (no clock set-up), so one ELF runs on every board of its memory
 * layout and on QEMU. Vector table: the 16 core entries (ARMv7-M ARM B1.5.2, B1.5.3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "mcusim.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void __libc_init_array(void);
void initialise_monitor_handles(void);
void _init(void) {}
void _fini(void) {}

/* A fault is a failure of the program under test: say which, and stop with 128 + IPSR. */
void Fault_Handler(void)
{
    uint32_t ipsr;
    __asm volatile ("mrs %0, ipsr" : "=r"(ipsr));
    printf("fault: exception %lu\n", (unsigned long)(ipsr & 0x1FF));
    mcusim_exit(128 + (int)(ipsr & 0x7F));
}

void SysTick_Handler(void) __attribute__((weak, alias("Fault_Handler")));
void Reset_Handler(void);

typedef void (*vector_t)(void);
__attribute__((section(".isr_vector"), used))
const vector_t diff_vectors[16] = {
    (vector_t)(uintptr_t)&_estack, Reset_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0,
    Fault_Handler, Fault_Handler, 0, Fault_Handler, SysTick_Handler,
};

void Reset_Handler(void)
{
    REG32(SCB_CPACR) |= CPACR_CP10_CP11_FULL;  /* FPU on before any FP instruction */
    mcusim_dsb();
    mcusim_isb();
    for (uint32_t *s = &_sidata, *d = &_sdata; d < &_edata;)
        *d++ = *s++;
    for (uint32_t *d = &_sbss; d < &_ebss;)
        *d++ = 0;
    initialise_monitor_handles();
    __libc_init_array();   /* C++ constructors run here */
    exit(main());
}
