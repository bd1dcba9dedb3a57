#include "rt.h"
void SysTick_Handler(void) { }
int main(void) {
  SYST_RVR = 9999; SYST_CVR = 0; SYST_CSR = 7;
  __asm__ volatile("nop\n wfe\n nop");
  puts_("after wfe\n");
  exit_(0);
}
