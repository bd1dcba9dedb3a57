#include "rt.h"
volatile uint32_t ram[4];
int main(void) {
  DEMCR |= 1u << 24; DWT_CTRL |= 1;
  uint32_t a, b, c, d, e;
  /* same block: RAM load through r3, then r3 re-pointed at DWT; CYCCNT read through r3 with the same offset */
  __asm__ volatile(
    "ldr r2, =0xE0001000\n"
    "ldr %0, [r2, #4]\n"         /* a: CYCCNT at this instruction */
    "mov r3, %2\n"
    "ldr %1, [r3, #4]\n"         /* RAM load (ram[1]) */
    "nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n"
    "ldr r3, =0xE0001000\n"
    "ldr %1, [r3, #4]\n"         /* b: CYCCNT, 14 instructions after a */
    "b 1f\n .ltorg\n 1:\n"
    : "=&r"(a), "=&r"(b) : "r"(ram) : "r2", "r3", "memory");
  CHECK("cyccnt delta with base reuse (expect 14)", b - a, 14);
  /* ldrd reading SysTick CVR twice-ish: ldm of CYCCNT then a later CYCCNT read in same block */
  __asm__ volatile(
    "ldr r2, =0xE0001004\n"
    "ldm r2, {r0, r1}\n"          /* CYCCNT, CPICNT */
    "nop\n nop\n nop\n"
    "ldr r3, [r2]\n"              /* CYCCNT 4 instructions later */
    "mov %0, r0\n mov %1, r1\n mov %2, r3\n"
    "b 1f\n .ltorg\n 1:\n"
    : "=&r"(c), "=&r"(d), "=&r"(e) :: "r0", "r1", "r2", "r3", "memory");
  CHECK("cyccnt after ldm (expect 4)", e - c, 4);
  exit_(fails);
}
