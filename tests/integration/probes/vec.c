#include "rt.h"
extern uint32_t _estack, _sbss, _ebss;
int main(void) __attribute__((noinline));
int fails;
void Reset_Handler(void) { for (uint32_t *p=&_sbss; p<&_ebss; p++) *p=0;
#ifdef FPU_ON
 REG(0xE000ED88) |= 0xF<<20; __asm__ volatile("dsb\n isb");
#endif
 exit_(main()); }
static void Default_Handler(void) { uint32_t i; __asm__ volatile("mrs %0, ipsr" : "=r"(i)); puts_("unexpected exception "); puthex(i); puthex(REG(0xE000ED28)); exit_(99); }
#define W __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) W; void HardFault_Handler(void) W; void MemManage_Handler(void) W; void BusFault_Handler(void) W;
void UsageFault_Handler(void) W; void SVC_Handler(void) W; void PendSV_Handler(void) W; void SysTick_Handler(void) W;
void IRQ0_Handler(void) W; void IRQ1_Handler(void) W; void IRQ2_Handler(void) W;
__attribute__((section(".isr_vector"), used)) void (*const vectors[16+32])(void) = {
 (void(*)(void))&_estack, Reset_Handler, NMI_Handler, HardFault_Handler, MemManage_Handler, BusFault_Handler, UsageFault_Handler,
 0,0,0,0, SVC_Handler, 0, 0, PendSV_Handler, SysTick_Handler, IRQ0_Handler, IRQ1_Handler, IRQ2_Handler };
