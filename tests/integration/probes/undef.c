#include "rt.h"
volatile uint32_t cfsr, hf, pc_at;
void HardFault_Handler(void) { hf++; cfsr = REG(0xE000ED28); puts_("hardfault, cfsr="); puthex(cfsr); exit_(fails + 40); }
void UsageFault_Handler(void) { cfsr = REG(0xE000ED28); puts_("usagefault, cfsr="); puthex(cfsr); exit_(fails + 50); }
int main(void) {
  REG(0xE000ED24) |= 7u << 16; /* enable usage/bus/mem faults */
  __asm__ volatile("b 1f\n 1: .inst.w 0xe8000000\n");
  exit_(1);
}
