#include "rt.h"
static const uint16_t codeA[] = { 0xbf00,0xbf00,0xbf00,0xbf00,0xbf00,0xbf00,0xbf00,0xbf00, 0x4770 };       /* 8 nop; bx lr */
static const uint16_t codeB[] = { 0xf3af,0x8000, 0xf3af,0x8000, 0xf3af,0x8000, 0xf3af,0x8000, 0x4770 };  /* 4 nop.w; bx lr */
static uint16_t ramcode[16] __attribute__((aligned(4)));
static void load(const uint16_t *c) { for (int i = 0; i < 9; i++) ramcode[i] = c[i]; __asm__ volatile("dsb\n isb" ::: "memory"); }
int main(void) {
  DEMCR |= 1u << 24; DWT_CTRL |= 1;
  void (*f)(void) = (void (*)(void))((uint32_t)ramcode | 1);
#ifdef WITH_A
  load(codeA); f();
#endif
  load(codeB);
  uint32_t t0 = DWT_CYCCNT;
  for (int i = 0; i < 1000; i++) f();
  uint32_t t1 = DWT_CYCCNT;
  puts_("cycles for 1000 calls of B: "); puthex(t1 - t0);
  exit_(0);
}
