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
#define CACHECTRL_CACHECFG (CACHECTRL_BASE + 0x00u)
#define CACHECFG_ENABLE         (1u << 0)
#define CACHECFG_CONFIG_MASK    (0xFu << 4)
#define CACHECFG_CONFIG_1WAY_1024 (8u << 4)          /* direct-mapped, 1024 x 16 bytes */
#define CACHECFG_ICACHE_ENABLE  (1u << 8)
#define CACHECFG_DCACHE_ENABLE  (1u << 9)
#define CACHECFG_CACHE_CLKGATE  (1u << 10)
#define CACHECFG_DATA_CLKGATE   (1u << 20)
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

    /* Flash cache as AmbiqSuite's am_hal_cachectrl_config(&am_hal_cachectrl_defaults) and
     * am_hal_cachectrl_enable() set it: 16 KB direct-mapped, instructions and data. */
    board_flash_features(BOARD_FLASH_ICACHE | BOARD_FLASH_DCACHE);

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

/* One cache for instructions and data (CACHECFG ICACHE_ENABLE, DCACHE_ENABLE); no prefetch switch. */
int board_flash_features(uint32_t features)
{
    if (features & BOARD_FLASH_PREFETCH)
        return -1;
    uint32_t cfg = REG32(CACHECTRL_CACHECFG) & ~(CACHECFG_ENABLE | CACHECFG_CONFIG_MASK | CACHECFG_ICACHE_ENABLE
                                                 | CACHECFG_DCACHE_ENABLE);
    REG32(CACHECTRL_CACHECFG) = cfg;
    if (!(features & (BOARD_FLASH_ICACHE | BOARD_FLASH_DCACHE)))
        return 0;
    cfg |= CACHECFG_CONFIG_1WAY_1024 | CACHECFG_CACHE_CLKGATE | CACHECFG_DATA_CLKGATE;
    if (features & BOARD_FLASH_ICACHE) cfg |= CACHECFG_ICACHE_ENABLE;
    if (features & BOARD_FLASH_DCACHE) cfg |= CACHECFG_DCACHE_ENABLE;
    REG32(CACHECTRL_CACHECFG) = cfg;
    REG32(CACHECTRL_CACHECFG) = cfg | CACHECFG_ENABLE;
    return 0;
}
