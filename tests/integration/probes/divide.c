#include "rt.h"
/* CYCCNT around one divide: t1 - t0 = 2 (the ldr that reads t0, after a literal load of its
   base) + the divide's cycles. */
#define TIME_DIVIDE(op, a, b) ({ uint32_t t0, t1; __asm__ volatile( \
    "ldr r0, =" #a "\n ldr r1, =" #b "\n ldr r2, =0xE0001004\n" \
    "ldr r3, [r2]\n " op " r5, r0, r1\n ldr r4, [r2]\n mov %0, r3\n mov %1, r4\n b 1f\n .ltorg\n 1:\n" \
    : "=r"(t0), "=r"(t1) :: "r0", "r1", "r2", "r3", "r4", "r5", "memory"); t1 - t0 - 2; })
int main(void) {
  DEMCR |= 1u << 24; DWT_CTRL |= 1;
  /* Cortex-M4 early termination (cores/cortex-m4.toml): 2 with a zero operand, 3 when the
     dividend is shorter than the divisor, else 5 + (bits(dividend) - bits(divisor)) / 4 */
  CHECK("udiv 100/0", TIME_DIVIDE("udiv", 100, 0), 2);
  CHECK("udiv 5/1000", TIME_DIVIDE("udiv", 5, 1000), 3);
  CHECK("udiv 1000/5", TIME_DIVIDE("udiv", 1000, 5), 6);
  CHECK("udiv 0xffffffff/1", TIME_DIVIDE("udiv", 0xffffffff, 1), 12);
  CHECK("sdiv -1000/5", TIME_DIVIDE("sdiv", -1000, 5), 6);
  CHECK("udiv 7/7", TIME_DIVIDE("udiv", 7, 7), 5);
  exit_(fails);
}
