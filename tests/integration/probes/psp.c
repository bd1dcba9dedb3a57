#include "rt.h"
static uint32_t pstack[256] __attribute__((aligned(8)));
volatile uint32_t h_sp, h_msp, h_psp, h_lr, h_control, count;
__attribute__((naked)) void SysTick_Handler(void) {
  __asm__ volatile(
   "ldr r0, =h_sp\n str sp, [r0]\n"
   "mrs r1, msp\n ldr r0, =h_msp\n str r1, [r0]\n"
   "mrs r1, psp\n ldr r0, =h_psp\n str r1, [r0]\n"
   "ldr r0, =h_lr\n str lr, [r0]\n"
   "mrs r1, control\n ldr r0, =h_control\n str r1, [r0]\n"
   "push {r4, lr}\n sub sp, sp, #64\n mov r4, #0x55\n str r4, [sp]\n add sp, sp, #64\n pop {r4, lr}\n"
   "ldr r0, =count\n ldr r1, [r0]\n adds r1, #1\n str r1, [r0]\n bx lr\n");
}
int main(void) {
  uint32_t msp0; __asm__ volatile("mrs %0, msp" : "=r"(msp0));
  uint32_t top = (uint32_t)&pstack[256];
  __asm__ volatile("msr psp, %0\n movs r0, #2\n msr control, r0\n isb" :: "r"(top) : "r0");
  uint32_t sp1; __asm__ volatile("mov %0, sp" : "=r"(sp1));
  CHECK("thread sp == psp top", sp1, top);
  ICSR = 1u << 26; __asm__ volatile("dsb\n isb");
  uint32_t sp2, psp2, msp2, ctl; __asm__ volatile("mov %0, sp\n mrs %1, psp\n mrs %2, msp\n mrs %3, control" : "=r"(sp2), "=r"(psp2), "=r"(msp2), "=r"(ctl));
  CHECK("handler ran", count, 1);
  CHECK("handler sp == msp", h_sp, h_msp);
  CHECK("handler msp == thread msp", h_msp, msp0);
  CHECK("handler psp == top-32", h_psp, top - 32);
  CHECK("handler lr", h_lr, 0xFFFFFFFD);
  CHECK("handler control", h_control & 2, 0);
  CHECK("thread sp after", sp2, top);
  CHECK("psp after", psp2, top);
  CHECK("msp after", msp2, msp0);
  CHECK("control after", ctl & 2, 2);
  exit_(fails);
}
