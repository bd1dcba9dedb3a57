#include "rt.h"
#define BOOTS REG(0x2003E000)
volatile uint32_t hf;
void UsageFault_Handler(void) { puts_("usagefault\n"); exit_(60); }
void HardFault_Handler(void) { puts_("hardfault\n"); exit_(61); }
__attribute__((noinline)) uint32_t divide(uint32_t a, uint32_t b) { return a / b; }
int main(void) {
  if (BOOTS != 0x1234) {
    BOOTS = 0x1234;
    REG(0xE000ED14) |= 1u << 4;  /* DIV_0_TRP */
    __asm__ volatile("dsb");
    AIRCR = 0x05FA0004; __asm__ volatile("dsb");
    for (;;) ;
  }
  puts_("after reset, CCR="); puthex(REG(0xE000ED14));
  volatile uint32_t zero = 0;
  uint32_t q = divide(7, zero);
  CHECK("7/0 without trap", q, 0);
  exit_(fails);
}
