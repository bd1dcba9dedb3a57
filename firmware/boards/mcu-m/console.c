/*
 * mcu-m console: USART2 on PA2 (TX) / PA3 (RX), AF7, the Nucleo-64
 * ST-LINK virtual COM port. Kernel clock PCLK1 (RCC_CCIPR reset value).
 * Source: ST RM0351 rev 9, sections 6.4 (RCC), 8.5 (GPIO), 40.8 (USART).
 */
#include "board.h"
#include "mcusim.h"

#define RCC_BASE      0x40021000u
#define RCC_AHB2ENR   (RCC_BASE + 0x4Cu)   /* 6.4.17, bit 0 GPIOAEN */
#define RCC_APB1ENR1  (RCC_BASE + 0x58u)   /* 6.4.19, bit 17 USART2EN */
#define RCC_CCIPR     (RCC_BASE + 0x88u)   /* 6.4.28, [3:2] USART2SEL */

#define GPIOA_BASE    0x48000000u
#define GPIOA_MODER   (GPIOA_BASE + 0x00u) /* 8.5.1, 2 bits per pin, 10 = AF */
#define GPIOA_AFRL    (GPIOA_BASE + 0x20u) /* 8.5.9, 4 bits per pin */

#define USART_BASE    0x40004400u  /* USART2 */
#include "stm32_usart.h"

void console_init(void)
{
    REG32(RCC_AHB2ENR) |= 1u << 0;
    REG32(RCC_APB1ENR1) |= 1u << 17;
    (void)REG32(RCC_APB1ENR1);
    REG32(RCC_CCIPR) &= ~(3u << 2);

    REG32(GPIOA_MODER) = (REG32(GPIOA_MODER) & ~(0xFu << 4)) | (0xAu << 4);
    REG32(GPIOA_AFRL) = (REG32(GPIOA_AFRL) & ~(0xFFu << 8)) | (0x77u << 8);

    /* BRR = fck / baud (40.5.4): 694 at 80 MHz */
    stm32_usart_start(SystemCoreClock, 115200u);
}
