/*
 * mps2-an386 and mps2-an500 console: CMSDK APB UART0 at 0x40004000 (QEMU 7.2 hw/arm/mps2.c;
 * register layout: Arm DDI 0479 Cortex-M System Design Kit TRM, APB UART).
 * QEMU connects it to the first -serial backend.
 */
#include "board.h"
#include "mcusim.h"

#define UART0_BASE    0x40004000u
#define UART_DATA     (UART0_BASE + 0x00u)
#define UART_STATE    (UART0_BASE + 0x04u)  /* bit 0: TX buffer full */
#define UART_CTRL     (UART0_BASE + 0x08u)  /* bit 0: TX enable */
#define UART_BAUDDIV  (UART0_BASE + 0x10u)  /* >= 16 */
#define STATE_TXFULL  (1u << 0)
#define CTRL_TXEN     (1u << 0)

void console_init(void)
{
    REG32(UART_BAUDDIV) = SystemCoreClock / 115200u; /* 217 at 25 MHz */
    REG32(UART_CTRL) = CTRL_TXEN;
}

void console_putc(char c)
{
    mcusim_poll(UART_STATE, STATE_TXFULL, 0);
    REG32(UART_DATA) = (uint8_t)c;
}

void console_write(const char *buf, size_t len)
{
    while (len--)
        console_putc(*buf++);
}
