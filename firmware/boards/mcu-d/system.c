/*
 * mcu-d system: STM32F746ZG. HSI 16 MHz (reset) -> PLL (source HSI,
 * M = 8, N = 216, P = 2, Q = 9) -> SYSCLK 216 MHz with over-drive,
 * voltage scale 1, 7 flash wait states, ART accelerator + prefetch,
 * AHB /1, APB1 /4 (54 MHz), APB2 /2 (108 MHz).
 * Source: ST RM0385 rev 8 (sections in boards/REGISTERS.md, section 5).
 */
#include "board.h"
#include "mcusim.h"

#define RCC_BASE       0x40023800u            /* RM0385 2.2.2 */
#define RCC_CR         (RCC_BASE + 0x00u)     /* 5.3.1 */
#define RCC_CR_HSIRDY  (1u << 1)
#define RCC_CR_PLLON   (1u << 24)
#define RCC_CR_PLLRDY  (1u << 25)
#define RCC_PLLCFGR    (RCC_BASE + 0x04u)     /* 5.3.2 */
#define PLLCFGR_M(m)   ((m) << 0)             /* PLLM[5:0] */
#define PLLCFGR_N(n)   ((n) << 6)             /* PLLN[14:6] */
#define PLLCFGR_P_DIV2 (0u << 16)             /* PLLP[17:16] = 00 -> /2 */
#define PLLCFGR_SRC_HSI (0u << 22)
#define PLLCFGR_Q(q)   ((q) << 24)            /* PLLQ[27:24] */
#define PLLCFGR_RSVD   (1u << 29)             /* reserved, 1 at reset (0x24003010) */
#define RCC_CFGR       (RCC_BASE + 0x08u)     /* 5.3.3 */
#define CFGR_SW_MASK   (3u << 0)
#define CFGR_SW_PLL    (2u << 0)
#define CFGR_SWS_MASK  (3u << 2)
#define CFGR_SWS_PLL   (2u << 2)
#define CFGR_HPRE_MASK  (0xFu << 4)
#define CFGR_PPRE1_MASK (7u << 10)
#define CFGR_PPRE1_DIV4 (5u << 10)
#define CFGR_PPRE2_MASK (7u << 13)
#define CFGR_PPRE2_DIV2 (4u << 13)
#define RCC_APB1ENR    (RCC_BASE + 0x40u)     /* 5.3.13 */
#define APB1ENR_PWREN  (1u << 28)

#define PWR_BASE       0x40007000u
#define PWR_CR1        (PWR_BASE + 0x00u)     /* 4.4.1 */
#define PWR_CR1_VOS_SCALE1 (3u << 14)
#define PWR_CR1_ODEN   (1u << 16)
#define PWR_CR1_ODSWEN (1u << 17)
#define PWR_CSR1       (PWR_BASE + 0x04u)     /* 4.4.2 */
#define PWR_CSR1_ODRDY   (1u << 16)
#define PWR_CSR1_ODSWRDY (1u << 17)

#define FLASH_ACR      0x40023C00u            /* 3.7.1 */
#define ACR_LATENCY_MASK (0xFu << 0)
#define ACR_LATENCY_7WS  (7u << 0)            /* table 5: 210-216 MHz, 2.7-3.6 V */
#define ACR_PRFTEN     (1u << 8)
#define ACR_ARTEN      (1u << 9)
#define ACR_ARTRST     (1u << 11)
#define FLASH_AXIM     0x08000000u            /* RM0385 2.4: the flash over AXIM ... */
#define FLASH_ITCM     0x00200000u            /* ... and over the ITCM interface */
#define FLASH_SIZE     0x00100000u

/* Cortex-M7 L1 caches (ARMv7-M ARM B3.2.8 CCR, B2.2.7 maintenance, B4.8 CCSIDR). */
#define SCB_CCR        0xE000ED14u
#define CCR_DC         (1u << 16)
#define CCR_IC         (1u << 17)
#define SCB_CCSIDR     0xE000ED80u
#define SCB_CSSELR     0xE000ED84u
#define SCB_ICIALLU    0xE000EF50u
#define SCB_DCISW      0xE000EF60u
#define SCB_DCCISW     0xE000EF74u

uint32_t SystemCoreClock = 16000000u;         /* HSI after reset */

void SystemInit(void)
{
    if (mcusim_poll(RCC_CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY))
        return;

    /* Power interface clock; scale 1 (reset value). */
    REG32(RCC_APB1ENR) |= APB1ENR_PWREN;
    (void)REG32(RCC_APB1ENR);
    REG32(PWR_CR1) |= PWR_CR1_VOS_SCALE1;

    /* PLL: 16 MHz / 8 = 2 MHz, * 216 = 432 MHz VCO, / 2 = 216 MHz. */
    REG32(RCC_CR) &= ~RCC_CR_PLLON;
    if (mcusim_poll(RCC_CR, RCC_CR_PLLRDY, 0))
        return;
    REG32(RCC_PLLCFGR) = PLLCFGR_M(8) | PLLCFGR_N(216) | PLLCFGR_P_DIV2
                         | PLLCFGR_SRC_HSI | PLLCFGR_Q(9) | PLLCFGR_RSVD;
    REG32(RCC_CR) |= RCC_CR_PLLON;
    if (mcusim_poll(RCC_CR, RCC_CR_PLLRDY, RCC_CR_PLLRDY))
        return;

    /* Over-drive (RM0385 4.1.4): ODEN -> ODRDY, then ODSWEN -> ODSWRDY. */
    REG32(PWR_CR1) |= PWR_CR1_ODEN;
    if (mcusim_poll(PWR_CSR1, PWR_CSR1_ODRDY, PWR_CSR1_ODRDY))
        return;
    REG32(PWR_CR1) |= PWR_CR1_ODSWEN;
    if (mcusim_poll(PWR_CSR1, PWR_CSR1_ODSWRDY, PWR_CSR1_ODSWRDY))
        return;

    /* Flash: 7 wait states, ART + prefetch, before raising the clock. */
    REG32(FLASH_ACR) = (REG32(FLASH_ACR) & ~ACR_LATENCY_MASK)
                       | ACR_LATENCY_7WS | ACR_PRFTEN | ACR_ARTEN;
    if (mcusim_poll(FLASH_ACR, ACR_LATENCY_MASK, ACR_LATENCY_7WS))
        return;

    /* Bus prescalers, then SYSCLK = PLL. */
    REG32(RCC_CFGR) = (REG32(RCC_CFGR)
                       & ~(CFGR_HPRE_MASK | CFGR_PPRE1_MASK | CFGR_PPRE2_MASK))
                      | CFGR_PPRE1_DIV4 | CFGR_PPRE2_DIV2;
    REG32(RCC_CFGR) = (REG32(RCC_CFGR) & ~CFGR_SW_MASK) | CFGR_SW_PLL;
    if (mcusim_poll(RCC_CFGR, CFGR_SWS_MASK, CFGR_SWS_PLL))
        return;

    SystemCoreClock = 216000000u;

    /* L1 caches on, as STM32Cube's CPU_CACHE_Enable() and Mbed OS do (CMSIS
     * SCB_EnableICache/SCB_EnableDCache sequences). */
    board_flash_features(BOARD_FLASH_ICACHE | BOARD_FLASH_DCACHE);
}

/* Every line of the data cache by set and way: `op` is DCISW (invalidate) or DCCISW. */
static void dcache_all_lines(uint32_t op)
{
    REG32(SCB_CSSELR) = 0;  /* level 1 data cache */
    mcusim_dsb();
    uint32_t ccsidr = REG32(SCB_CCSIDR);
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1, ways = ((ccsidr >> 3) & 0x3FFu) + 1;
    for (uint32_t set = 0; set < sets; set++)
        for (uint32_t way = 0; way < ways; way++)
            REG32(op) = (set << 5) | (way << 30);
    mcusim_dsb();
}

/* The L1 instruction and data caches (the ITCM-path ART and prefetch are SystemInit's). */
int board_flash_features(uint32_t features)
{
    if (features & BOARD_FLASH_PREFETCH)
        return -1;
    uint32_t ccr = REG32(SCB_CCR);
    if (ccr & CCR_DC) {  /* clean and invalidate before switching the data cache off */
        REG32(SCB_CCR) = ccr & ~CCR_DC;
        dcache_all_lines(SCB_DCCISW);
    }
    REG32(SCB_CCR) = ccr & ~(CCR_IC | CCR_DC);
    mcusim_dsb();
    mcusim_isb();
    REG32(SCB_ICIALLU) = 0;
    dcache_all_lines(SCB_DCISW);
    mcusim_isb();
    ccr &= ~(CCR_IC | CCR_DC);
    if (features & BOARD_FLASH_ICACHE) ccr |= CCR_IC;
    if (features & BOARD_FLASH_DCACHE) ccr |= CCR_DC;
    REG32(SCB_CCR) = ccr;
    mcusim_dsb();
    mcusim_isb();
    return 0;
}

/* SRAM1 (RM0385 2.2.2: 0x20010000, 240 KB), over AXIM and so through the L1 data cache. The
 * kit's linker script fills RAM from 0x20000000 (DTCM) and puts the stack at the top of SRAM2:
 * the start of SRAM1 is free while .bss ends below it. */
#define SRAM1_BASE 0x20010000u
#define SRAM1_FREE 0x20000u  /* leaves the upper 112 KB of SRAM1 and SRAM2 to the stack */
extern uint32_t _ebss[];

void *board_cached_ram(size_t bytes)
{
    if ((uintptr_t)_ebss > SRAM1_BASE || bytes > SRAM1_FREE)
        return NULL;
    return (void *)SRAM1_BASE;
}

uintptr_t board_flash_alias(const void *code)
{
    uintptr_t address = (uintptr_t)code;
    if (address - FLASH_AXIM < FLASH_SIZE)
        return address - FLASH_AXIM + FLASH_ITCM;
    return 0;
}

/* The ITCM path: PRFTEN (prefetch) and ARTEN (the ART, reset with ARTRST while off). */
int board_flash_alias_features(uint32_t features)
{
    if (features & BOARD_FLASH_DCACHE)
        return -1;
    uint32_t acr = REG32(FLASH_ACR) & ~(ACR_PRFTEN | ACR_ARTEN);
    REG32(FLASH_ACR) = acr;
    REG32(FLASH_ACR) = acr | ACR_ARTRST;
    REG32(FLASH_ACR) = acr;
    if (features & BOARD_FLASH_PREFETCH) acr |= ACR_PRFTEN;
    if (features & BOARD_FLASH_ICACHE)   acr |= ACR_ARTEN;
    REG32(FLASH_ACR) = acr;
    return 0;
}
