#include "rt.h"
/* placed at 0xFFF8: a 32-bit instruction straddles the 64 KB boundary at 0x10000 */
__attribute__((naked, section(".straddle"), noinline)) int straddle(int x) {
  __asm__ volatile(".syntax unified\n movs r1, #0\n nop\n nop\n movw r2, #5\n adds r0, r2\n bx lr\n");
}
int main(void) {
  int r = straddle(1);
  CHECK("straddle result", r, 6);
  exit_(fails);
}
