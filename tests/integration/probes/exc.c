#include "rt.h"
volatile uint32_t order[16], n, svc_lr, hf, hfsr, systick_lr, pend_in_systick;
void SVC_Handler(void) { order[n++] = 11; __asm__ volatile("mov %0, lr" : "=r"(svc_lr)); }
void HardFault_Handler(void) {
  hfsr = REG(0xE000ED2C); REG(0xE000ED2C) = hfsr; hf++; order[n++] = 3;
  /* skip the svc: stacked pc */
  uint32_t *sp; __asm__ volatile("mrs %0, msp" : "=r"(sp)); /* frame at sp + 0 (no push in naked? not naked) */
}
void PendSV_Handler(void) { order[n++] = 14; if (pend_in_systick == 2) { ICSR = 1u << 26; } }
void SysTick_Handler(void) {
  __asm__ volatile("mov %0, lr" : "=r"(systick_lr));
  order[n++] = 15;
  if (pend_in_systick == 1) __asm__ volatile("svc 1");
}
void IRQ0_Handler(void) { order[n++] = 16; }
static void reset(void) { for (int i=0;i<16;i++) order[i]=0; n=0; }
int main(void) {
  /* A: SVC from SysTick handler where SVCall (0x40) > SysTick (0x80) -> nested */
  SHPR2 = 0x40u << 24; SHPR3 = (0xC0u << 16) | (0x80u << 24);
  reset(); pend_in_systick = 1; ICSR = 1u << 26; __asm__ volatile("dsb\n isb");
  CHECK("A order0", order[0], 15); CHECK("A order1", order[1], 11); CHECK("A n", n, 2); CHECK("A svc lr", svc_lr, 0xFFFFFFF1);
  /* B: PendSV (0xC0 lower) pended from thread along with SysTick (0x80): SysTick first, then tail-chain to PendSV */
  reset(); pend_in_systick = 0; ICSR = (1u << 26) | (1u << 28); __asm__ volatile("dsb\n isb");
  CHECK("B order0", order[0], 15); CHECK("B order1", order[1], 14); CHECK("B n", n, 2);
  /* C: PendSV (higher: 0x40) pends SysTick (0x80) inside; SysTick tail-chains after PendSV returns */
  SHPR3 = (0x40u << 16) | (0x80u << 24);
  reset(); pend_in_systick = 2; ICSR = 1u << 28; __asm__ volatile("dsb\n isb");
  CHECK("C order0", order[0], 14); CHECK("C order1", order[1], 15); CHECK("C n", n, 2);
  CHECK("C systick lr", systick_lr, 0xFFFFFFF9);
  /* D: BASEPRI masks IRQ0 (prio 0xA0); msr basepri,0 must take it at once */
  NVIC_IPR(0) = 0xA0; NVIC_ISER0 = 1;
  reset(); pend_in_systick = 0;
  uint32_t bp = 0x80; __asm__ volatile("msr basepri, %0" :: "r"(bp));
  NVIC_ISPR0 = 1; __asm__ volatile("dsb\n isb");
  CHECK("D masked", n, 0);
  uint32_t got;
  __asm__ volatile("movs r1, #0\n msr basepri, r1\n ldr %0, [%1]" : "=r"(got) : "r"(&n) : "r1", "memory");
  CHECK("D taken after msr basepri", got, 1);
  /* E: PRIGROUP=7 (no group bits) BASEPRI=0xF0 masks everything configurable incl. prio 0x00? */
  /* F: PRIMASK + pend via STIR, then cpsie in the middle of a longer block */
  reset();
  __asm__ volatile("cpsid i");
  REG(0xE000EF00) = 0; __asm__ volatile("dsb\n isb");
  CHECK("F masked", n, 0);
  __asm__ volatile("cpsie i\n ldr %0, [%1]" : "=r"(got) : "r"(&n) : "memory");
  CHECK("F taken after cpsie", got, 1);
  /* G: SVC with PRIMASK set -> HardFault (escalation) */
  reset(); __asm__ volatile("cpsid i\n svc 2\n cpsie i");
  CHECK("G hardfault", hf, 1); CHECK("G hfsr forced", hfsr, 1u << 30); CHECK("G order0", order[0], 3);
  /* H: FAULTMASK lowering with cpsie f */
  reset(); __asm__ volatile("cpsid f"); NVIC_ISPR0 = 1; __asm__ volatile("dsb\n isb");
  CHECK("H masked", n, 0);
  __asm__ volatile("cpsie f\n ldr %0, [%1]" : "=r"(got) : "r"(&n) : "memory");
  CHECK("H taken after cpsie f", got, 1);
  exit_(fails);
}
