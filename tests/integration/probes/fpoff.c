#include "rt.h"
void HardFault_Handler(void) { puts_("hardfault cfsr="); puthex(REG(0xE000ED28)); exit_(61); }
int main(void) {
  __asm__ volatile("ldr r1, =0x90000000\n ldr r0, [r1]\n vmov s0, r0\n b 1f\n .ltorg\n 1:" ::: "r0", "r1", "s0");
  exit_(0);
}
