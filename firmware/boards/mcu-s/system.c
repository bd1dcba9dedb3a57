/*
 * mcu-s system: nRF52840. The CPU always runs at 64 MHz (HFCLK); start the
 * 64 MHz crystal oscillator (HFXO) as the HFCLK source and enable the
 * NVMC instruction cache.
 * Source: Nordic nRF52840 Product Specification v1.7, 5.4 CLOCK and
 * 4.3 NVMC (details in boards/REGISTERS.md, section 2).
 */
#include "board.h"
#include "mcusim.h"

#define CLOCK_BASE               0x40000000u
#define CLOCK_TASKS_HFCLKSTART   (CLOCK_BASE + 0x000u)
#define CLOCK_EVENTS_HFCLKSTARTED (CLOCK_BASE + 0x100u)

#define NVMC_BASE                0x4001E000u
#define NVMC_ICACHECNF           (NVMC_BASE + 0x540u)
#define ICACHECNF_CACHEEN        (1u << 0)

uint32_t SystemCoreClock = 64000000u;

void SystemInit(void)
{
    REG32(CLOCK_EVENTS_HFCLKSTARTED) = 0;
    REG32(CLOCK_TASKS_HFCLKSTART) = 1;
    mcusim_poll(CLOCK_EVENTS_HFCLKSTARTED, 1u, 1u);
    REG32(CLOCK_EVENTS_HFCLKSTARTED) = 0;

    REG32(NVMC_ICACHECNF) |= ICACHECNF_CACHEEN;
}

/* The NVMC cache serves instruction fetches only (PS 4.3 NVMC); there is no prefetch switch. */
int board_flash_features(uint32_t features)
{
    if (features & ~BOARD_FLASH_ICACHE)
        return -1;
    if (features & BOARD_FLASH_ICACHE)
        REG32(NVMC_ICACHECNF) |= ICACHECNF_CACHEEN;
    else
        REG32(NVMC_ICACHECNF) &= ~ICACHECNF_CACHEEN;
    return 0;
}
