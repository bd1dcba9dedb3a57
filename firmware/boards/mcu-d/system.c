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
}
