/*
 * mps2-an386 and mps2-an500 system: QEMU models a fixed 25 MHz SYSCLK (hw/arm/mps2.c,
 * SYSCLK_FRQ 25000000); there is no clock tree to set up.
 */
#include "board.h"

uint32_t SystemCoreClock = 25000000u;

void SystemInit(void)
{
}
