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

#define USART3_BASE   0x40004800u
#define USART_CR1     (USART3_BASE + 0x00u) /* 31.8.1 */
#define CR1_UE        (1u << 0)
#define CR1_RE        (1u << 2)
#define CR1_TE        (1u << 3)
#define USART_BRR     (USART3_BASE + 0x0Cu) /* 31.8.4 */
#define USART_ISR     (USART3_BASE + 0x1Cu) /* 31.8.8 */
#define ISR_TC        (1u << 6)
#define ISR_TXE       (1u << 7)
#define USART_TDR     (USART3_BASE + 0x28u) /* 31.8.11 */

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

    REG32(USART_CR1) = 0;
    /* 16x oversampling: BRR = fck / baud (31.5.4); 469 at 54 MHz. */
    REG32(USART_BRR) = (pclk1() + 115200u / 2u) / 115200u;
    REG32(USART_CR1) = CR1_TE | CR1_RE | CR1_UE;
}

void console_putc(char c)
{
    mcusim_poll(USART_ISR, ISR_TXE, ISR_TXE);
    REG32(USART_TDR) = (uint8_t)c;
}

void console_write(const char *buf, size_t len)
{
    while (len--)
        console_putc(*buf++);
    mcusim_poll(USART_ISR, ISR_TC, ISR_TC);
}
