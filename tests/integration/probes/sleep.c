#include "rt.h"
volatile uint32_t ticks;
void SysTick_Handler(void) { ticks++; if (ticks == 5) SCR &= ~2u; }
int main(void) {
  DEMCR |= 1u << 24; DWT_CTRL |= 1;
  SYST_RVR = 9999; SYST_CVR = 0; SYST_CSR = 7;
  uint32_t t0 = DWT_CYCCNT;
  __asm__ volatile("sev");
  uint32_t t1 = DWT_CYCCNT;
  puts_("sev;wfe took cycles: "); puthex(t1 - t0);
  if (t1 - t0 > 1000) fails++;
  uint32_t k0 = ticks;
  SCR |= 2u; /* sleep on exit */
  __asm__ volatile("wfi");
  CHECK("ticks after sleep-on-exit", ticks - k0, 5);
  /* WFI while PRIMASK set: wake, do not take */
  __asm__ volatile("cpsid i");
  uint32_t k1 = ticks;
  __asm__ volatile("wfi");
  CHECK("primask wfi not taken", ticks - k1, 0);
  __asm__ volatile("cpsie i\n isb");
  CHECK("primask wfi taken after cpsie", ticks - k1, 1);
  exit_(fails);
}
