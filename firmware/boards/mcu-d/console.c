/*
 * mcu-d console: USART3 on PD8 (TX) / PD9 (RX), AF7, the Nucleo-144
 * ST-LINK virtual COM port. Kernel clock = APB1 (54 MHz after SystemInit;
 * RCC_DCKCFGR2 UART3SEL reset value 00).
 * Source: ST RM0385 rev 8, sections 5.3 (RCC), 6.4 (GPIO), 31.8 (USART).
 */
#include "board.h"
#include "mcusim.h"

#define RCC_BASE      0x40023800u
#define RCC_AHB1ENR   (RCC_BASE + 0x30u)   /* 5.3.10, bit 3 GPIODEN */
#define RCC_APB1ENR   (RCC_BASE + 0x40u)   /* 5.3.13, bit 18 USART3EN */
#define RCC_DCKCFGR2  (RCC_BASE + 0x90u)   /* 5.3.26, [5:4] UART3SEL */

#define GPIOD_BASE    0x40020C00u
#define GPIOD_MODER   (GPIOD_BASE + 0x00u) /* 6.4.1, 2 bits per pin, 10 = AF */
#define GPIOD_AFRH    (GPIOD_BASE + 0x24u) /* 6.4.10, pins 8..15 */

#define USART_BASE    0x40004800u  /* USART3 */
#include "stm32_usart.h"

/* PCLK1 = SYSCLK / 4 after SystemInit (PPRE1 = /4), SYSCLK at reset. */
static uint32_t pclk1(void)
{
    return SystemCoreClock > 16000000u ? SystemCoreClock / 4u : SystemCoreClock;
}

void console_init(void)
{
    REG32(RCC_AHB1ENR) |= 1u << 3;
    REG32(RCC_APB1ENR) |= 1u << 18;
    (void)REG32(RCC_APB1ENR);
    REG32(RCC_DCKCFGR2) &= ~(3u << 4);

    REG32(GPIOD_MODER) = (REG32(GPIOD_MODER) & ~(0xFu << 16)) | (0xAu << 16);
    REG32(GPIOD_AFRH) = (REG32(GPIOD_AFRH) & ~0xFFu) | 0x77u;

    /* BRR = fck / baud (31.5.4): 469 at 54 MHz */
    stm32_usart_start(pclk1(), 115200u);
}
