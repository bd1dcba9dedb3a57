/*
 * mcu-b system: Apollo3 Blue. HFRC 48 MHz core clock, flash timing as
 * AmbiqSuite's am_hal_pwrctrl_low_power_init() sets it, then TurboSPOT
 * burst mode (96 MHz) requested as am_hal_burst_mode_initialize() and
 * am_hal_burst_mode_enable() do. Stays at 48 MHz if burst is unavailable.
 * Registers: Apollo3 datasheet / apollo3.svd (details and sources in
 * boards/REGISTERS.md, section 4).
 */
#include "board.h"
#include "mcusim.h"

#define CLKGEN_BASE        0x40004000u
#define CLKGEN_CLKKEY      (CLKGEN_BASE + 0x14u)
#define CLKKEY_VALUE       0x47u
#define CLKGEN_CCTRL       (CLKGEN_BASE + 0x18u)   /* CORESEL bit 0: 0 = HFRC */
#define CLKGEN_FREQCTRL    (CLKGEN_BASE + 0x34u)
#define FREQCTRL_BURSTREQ    (1u << 0)
#define FREQCTRL_BURSTACK    (1u << 1)
#define FREQCTRL_BURSTSTATUS (1u << 2)

#define MCUCTRL_BASE       0x40020000u
#define MCUCTRL_FEATUREENABLE (MCUCTRL_BASE + 0x18u)
#define FEATURE_BURSTREQ   (1u << 4)
#define FEATURE_BURSTACK   (1u << 5)
#define FEATURE_BURSTAVAIL (1u << 6)

#define CACHECTRL_BASE     0x40018000u
#define CACHECTRL_FLASHCFG (CACHECTRL_BASE + 0x04u)
#define FLASHCFG_TIMING_MASK 0x0F7Fu               /* LPM_RD_WAIT, SEDELAY, RD_WAIT */
#define FLASHCFG_RD_WAIT(n)     ((n) << 0)
#define FLASHCFG_SEDELAY(n)     ((n) << 4)
#define FLASHCFG_LPM_RD_WAIT(n) ((n) << 8)

uint32_t SystemCoreClock = 48000000u;

void SystemInit(void)
{
    /* Core clock = HFRC, undivided (48 MHz). */
    REG32(CLKGEN_CLKKEY) = CLKKEY_VALUE;
    REG32(CLKGEN_CCTRL) = 0;
    REG32(CLKGEN_CLKKEY) = 0;

    /* Flash: RD_WAIT 1, SEDELAY 5 (datasheet-recommended), LPM_RD_WAIT 7. */
    REG32(CACHECTRL_FLASHCFG) = (REG32(CACHECTRL_FLASHCFG) & ~FLASHCFG_TIMING_MASK)
                                | FLASHCFG_RD_WAIT(1) | FLASHCFG_SEDELAY(5)
                                | FLASHCFG_LPM_RD_WAIT(7);

    /* Burst feature: request, wait for the acknowledge, check available. */
    REG32(MCUCTRL_FEATUREENABLE) |= FEATURE_BURSTREQ;
    if (mcusim_poll(MCUCTRL_FEATUREENABLE, FEATURE_BURSTACK, FEATURE_BURSTACK))
        return;
    if (!(REG32(MCUCTRL_FEATUREENABLE) & FEATURE_BURSTAVAIL))
        return;

    /* Burst mode: request 96 MHz, wait for BURSTSTATUS. */
    REG32(CLKGEN_FREQCTRL) = FREQCTRL_BURSTREQ;
    if (mcusim_poll(CLKGEN_FREQCTRL, FREQCTRL_BURSTSTATUS, FREQCTRL_BURSTSTATUS))
        return;
    if (REG32(CLKGEN_FREQCTRL) & FREQCTRL_BURSTACK)
        SystemCoreClock = 96000000u;
}
