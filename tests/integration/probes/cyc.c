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
    "ldr %1, [r3, #4]\n"         /* b: CYCCNT, 14 instructions and 18 Cortex-M4 cycles after a */
    "b 1f\n .ltorg\n 1:\n"
    : "=&r"(a), "=&r"(b) : "r"(ram) : "r2", "r3", "memory");
  /* a's ldr 2 (its base comes from the literal load before it), mov 1, the RAM ldr 3 (address
     interlock on r3), 10 nops, the literal ldr 2: 18 cycles (Cortex-M4 TRM 3.3.1/3.3.2) */
  CHECK("cyccnt delta with base reuse (expect 18)", b - a, 18);
  /* ldrd reading SysTick CVR twice-ish: ldm of CYCCNT then a later CYCCNT read in same block */
  __asm__ volatile(
    "ldr r2, =0xE0001004\n"
    "ldm r2, {r0, r1}\n"          /* CYCCNT, CPICNT */
    "nop\n nop\n nop\n"
    "ldr r3, [r2]\n"              /* CYCCNT 4 instructions (ldm 1 + 2 cycles, 3 nops) later */
    "mov %0, r0\n mov %1, r1\n mov %2, r3\n"
    "b 1f\n .ltorg\n 1:\n"
    : "=&r"(c), "=&r"(d), "=&r"(e) :: "r0", "r1", "r2", "r3", "memory");
  CHECK("cyccnt after ldm (expect 6)", e - c, 6);
  exit_(fails);
}
