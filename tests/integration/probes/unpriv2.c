#include "rt.h"
volatile uint32_t svc_count;
void SVC_Handler(void) { svc_count++; __asm__ volatile("movs r0, #0\n msr control, r0\n isb" ::: "r0"); /* back to privileged */ }
int main(void) {
  __asm__ volatile("movs r0, #1\n msr control, r0\n isb" ::: "r0");  /* unprivileged, still on MSP */
  __asm__ volatile("svc 0");
  exit_(svc_count == 1 ? 0 : 1);
}
