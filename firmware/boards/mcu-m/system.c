/*
 * mcu-m system: STM32L476RG. MSI 4 MHz (reset) -> PLL (source MSI,
 * M = 1, N = 40, R = 2) -> SYSCLK 80 MHz, voltage range 1, 4 flash wait
 * states, I-cache + D-cache on, prefetch off (ST HAL defaults).
 * Source: ST RM0351 rev 9 (sections in boards/REGISTERS.md, section 3).
 */
#include "board.h"
#include "mcusim.h"

#define RCC_BASE       0x40021000u            /* RM0351 2.2.2 */
#define RCC_CR         (RCC_BASE + 0x00u)     /* 6.4.1 */
#define RCC_CR_MSIRDY  (1u << 1)
#define RCC_CR_PLLON   (1u << 24)
#define RCC_CR_PLLRDY  (1u << 25)
#define RCC_CFGR       (RCC_BASE + 0x08u)     /* 6.4.3 */
#define RCC_CFGR_SW_MASK   (3u << 0)
#define RCC_CFGR_SW_PLL    (3u << 0)
#define RCC_CFGR_SWS_MASK  (3u << 2)
#define RCC_CFGR_SWS_PLL   (3u << 2)
#define RCC_CFGR_PRE_MASK  ((0xFu << 4) | (7u << 8) | (7u << 11)) /* HPRE, PPRE1, PPRE2 */
#define RCC_PLLCFGR    (RCC_BASE + 0x0Cu)     /* 6.4.4 */
#define PLLCFGR_SRC_MSI    (1u << 0)          /* PLLSRC[1:0] = 01 */
#define PLLCFGR_M(m)       (((m) - 1u) << 4)  /* PLLM[6:4] = M - 1 */
#define PLLCFGR_N(n)       ((n) << 8)         /* PLLN[14:8] */
#define PLLCFGR_REN        (1u << 24)
#define PLLCFGR_R_DIV2     (0u << 25)         /* PLLR[26:25] = 00 -> /2 */
#define RCC_APB1ENR1   (RCC_BASE + 0x58u)     /* 6.4.19 */
#define APB1ENR1_PWREN (1u << 28)

#define PWR_BASE       0x40007000u
#define PWR_CR1        (PWR_BASE + 0x00u)     /* 5.4.1 */
#define PWR_CR1_VOS_MASK   (3u << 9)
#define PWR_CR1_VOS_RANGE1 (1u << 9)
#define PWR_SR2        (PWR_BASE + 0x14u)     /* 5.4.6 */
#define PWR_SR2_VOSF   (1u << 10)

#define FLASH_ACR      0x40022000u            /* 3.7.1 */
#define ACR_LATENCY_MASK (7u << 0)
#define ACR_LATENCY_4WS  (4u << 0)            /* table 12: 64-80 MHz, range 1 */
#define ACR_PRFTEN     (1u << 8)
#define ACR_ICEN       (1u << 9)
#define ACR_DCEN       (1u << 10)
#define ACR_ICRST      (1u << 11)
#define ACR_DCRST      (1u << 12)

uint32_t SystemCoreClock = 4000000u;          /* MSI range 6 after reset */

void SystemInit(void)
{
    /* MSI is running at reset; wait for it anyway. */
    if (mcusim_poll(RCC_CR, RCC_CR_MSIRDY, RCC_CR_MSIRDY))
        return;

    /* Voltage range 1 (reset value), wait until the regulator is ready. */
    REG32(RCC_APB1ENR1) |= APB1ENR1_PWREN;
    (void)REG32(RCC_APB1ENR1);
    REG32(PWR_CR1) = (REG32(PWR_CR1) & ~PWR_CR1_VOS_MASK) | PWR_CR1_VOS_RANGE1;
    if (mcusim_poll(PWR_SR2, PWR_SR2_VOSF, 0))
        return;

    /* Flash: 4 wait states before raising the clock; caches as HAL. */
    REG32(FLASH_ACR) = (REG32(FLASH_ACR) & ~(ACR_LATENCY_MASK | ACR_PRFTEN))
                       | ACR_LATENCY_4WS | ACR_ICEN | ACR_DCEN;
    if (mcusim_poll(FLASH_ACR, ACR_LATENCY_MASK, ACR_LATENCY_4WS))
        return;

    /* PLL: 4 MHz / 1 * 40 = 160 MHz VCO, / 2 = 80 MHz on PLLCLK (R). */
    REG32(RCC_CR) &= ~RCC_CR_PLLON;
    if (mcusim_poll(RCC_CR, RCC_CR_PLLRDY, 0))
        return;
    REG32(RCC_PLLCFGR) = PLLCFGR_SRC_MSI | PLLCFGR_M(1) | PLLCFGR_N(40)
                         | PLLCFGR_REN | PLLCFGR_R_DIV2;
    REG32(RCC_CR) |= RCC_CR_PLLON;
    if (mcusim_poll(RCC_CR, RCC_CR_PLLRDY, RCC_CR_PLLRDY))
        return;

    /* AHB, APB1, APB2 undivided; switch SYSCLK to the PLL. */
    REG32(RCC_CFGR) &= ~RCC_CFGR_PRE_MASK;
    REG32(RCC_CFGR) = (REG32(RCC_CFGR) & ~RCC_CFGR_SW_MASK) | RCC_CFGR_SW_PLL;
    if (mcusim_poll(RCC_CFGR, RCC_CFGR_SWS_MASK, RCC_CFGR_SWS_PLL))
        return;

    SystemCoreClock = 80000000u;
}

/* RM0351 3.7.1: a cache reset (ICRST/DCRST) acts only while that cache is disabled. */
int board_flash_features(uint32_t features)
{
    uint32_t acr = REG32(FLASH_ACR) & ~(ACR_PRFTEN | ACR_ICEN | ACR_DCEN);
    REG32(FLASH_ACR) = acr;
    REG32(FLASH_ACR) = acr | ACR_ICRST | ACR_DCRST;
    REG32(FLASH_ACR) = acr;
    if (features & BOARD_FLASH_PREFETCH) acr |= ACR_PRFTEN;
    if (features & BOARD_FLASH_ICACHE)   acr |= ACR_ICEN;
    if (features & BOARD_FLASH_DCACHE)   acr |= ACR_DCEN;
    REG32(FLASH_ACR) = acr;
    return 0;
}
