/*
 * Polled transmit on an STM32 USART; the STM32L4 and STM32F7 USARTs share the register
 * layout (RM0351 rev 9 40.8, RM0385 rev 8 31.8). Define USART_BASE, then include.
 */
#ifndef STM32_USART_H
#define STM32_USART_H

#include <stddef.h>
#include <stdint.h>
#include "mcusim.h"

#define USART_CR1     (USART_BASE + 0x00u) /* CR1 */
#define CR1_UE        (1u << 0)
#define CR1_RE        (1u << 2)
#define CR1_TE        (1u << 3)
#define USART_BRR     (USART_BASE + 0x0Cu) /* BRR */
#define USART_ISR     (USART_BASE + 0x1Cu) /* ISR */
#define ISR_TC        (1u << 6)
#define ISR_TXE       (1u << 7)
#define USART_TDR     (USART_BASE + 0x28u) /* TDR */

/* 8N1 at `baud` from kernel clock `clock_hz`, 16x oversampling: BRR = fck / baud. */
static inline void stm32_usart_start(uint32_t clock_hz, uint32_t baud)
{
    REG32(USART_CR1) = 0;
    REG32(USART_BRR) = (clock_hz + baud / 2u) / baud;
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

#endif
