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

#define USART2_BASE   0x40004400u
#define USART_CR1     (USART2_BASE + 0x00u) /* 40.8.1 */
#define CR1_UE        (1u << 0)
#define CR1_RE        (1u << 2)
#define CR1_TE        (1u << 3)
#define USART_BRR     (USART2_BASE + 0x0Cu) /* 40.8.4 */
#define USART_ISR     (USART2_BASE + 0x1Cu) /* 40.8.8 */
#define ISR_TC        (1u << 6)
#define ISR_TXE       (1u << 7)
#define USART_TDR     (USART2_BASE + 0x28u) /* 40.8.11 */

void console_init(void)
{
    REG32(RCC_AHB2ENR) |= 1u << 0;
    REG32(RCC_APB1ENR1) |= 1u << 17;
    (void)REG32(RCC_APB1ENR1);
    REG32(RCC_CCIPR) &= ~(3u << 2);

    REG32(GPIOA_MODER) = (REG32(GPIOA_MODER) & ~(0xFu << 4)) | (0xAu << 4);
    REG32(GPIOA_AFRL) = (REG32(GPIOA_AFRL) & ~(0xFFu << 8)) | (0x77u << 8);

    REG32(USART_CR1) = 0;
    /* 16x oversampling: BRR = fck / baud (40.5.4); 694 at 80 MHz. */
    REG32(USART_BRR) = (SystemCoreClock + 115200u / 2u) / 115200u;
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
