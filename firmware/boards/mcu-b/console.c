/*
 * mcu-b console: UART0 (ARM PL011 with Ambiq clock-select bits in CR) on
 * pad 48 (TX) / pad 49 (RX), the SparkFun Edge COM UART pins. The UART
 * clock is its own 24 MHz source (CR.CLKSEL), independent of burst mode.
 * Registers: Apollo3 datasheet / apollo3.svd; PL011 TRM (DDI 0183) for
 * the generic layout (details in boards/REGISTERS.md, section 4).
 */
#include "board.h"
#include "mcusim.h"

#define PWRCTRL_BASE       0x40021000u
#define PWRCTRL_DEVPWREN   (PWRCTRL_BASE + 0x08u)
#define DEVPWREN_PWRUART0  (1u << 7)
#define PWRCTRL_DEVPWRSTATUS (PWRCTRL_BASE + 0x18u)
#define DEVPWRSTATUS_HCPA  (1u << 2)

#define GPIO_BASE          0x40010000u
#define GPIO_PADREGM       (GPIO_BASE + 0x30u)     /* pads 48..51, 8 bits each */
#define GPIO_PADKEY        (GPIO_BASE + 0x60u)
#define PADKEY_VALUE       0x73u
#define PAD_FNCSEL(v)      ((uint32_t)(v) << 3)    /* [5:3] in each pad byte */
#define PAD_INPEN          (1u << 1)

#define UART0_BASE         0x4001C000u
#define UART_DR            (UART0_BASE + 0x00u)
#define UART_FR            (UART0_BASE + 0x18u)
#define FR_BUSY            (1u << 3)
#define FR_TXFF            (1u << 5)
#define UART_IBRD          (UART0_BASE + 0x24u)
#define UART_FBRD          (UART0_BASE + 0x28u)
#define UART_LCRH          (UART0_BASE + 0x2Cu)
#define LCRH_FEN           (1u << 4)
#define LCRH_WLEN_8        (3u << 5)
#define UART_CR            (UART0_BASE + 0x30u)
#define CR_UARTEN          (1u << 0)
#define CR_CLKEN           (1u << 3)
#define CR_CLKSEL_24MHZ    (1u << 4)
#define CR_TXE             (1u << 8)
#define CR_RXE             (1u << 9)

void console_init(void)
{
    REG32(PWRCTRL_DEVPWREN) |= DEVPWREN_PWRUART0;
    mcusim_poll(PWRCTRL_DEVPWRSTATUS, DEVPWRSTATUS_HCPA, DEVPWRSTATUS_HCPA);

    /* Pad 48 = UART0TX (FNCSEL 0), pad 49 = UART0RX (FNCSEL 0, input). */
    REG32(GPIO_PADKEY) = PADKEY_VALUE;
    REG32(GPIO_PADREGM) = (REG32(GPIO_PADREGM) & ~0xFFFFu)
                          | PAD_FNCSEL(0)
                          | ((PAD_FNCSEL(0) | PAD_INPEN) << 8);
    REG32(GPIO_PADKEY) = 0;

    REG32(UART_CR) = 0;
    REG32(UART_CR) = CR_CLKEN | CR_CLKSEL_24MHZ;
    /* 24 MHz / (16 * 115200) = 13.02: IBRD 13, FBRD round(0.02 * 64) = 1. */
    REG32(UART_IBRD) = 13;
    REG32(UART_FBRD) = 1;
    REG32(UART_LCRH) = LCRH_WLEN_8 | LCRH_FEN;
    REG32(UART_CR) = CR_CLKEN | CR_CLKSEL_24MHZ | CR_UARTEN | CR_TXE | CR_RXE;
}

void console_putc(char c)
{
    mcusim_poll(UART_FR, FR_TXFF, 0);
    REG32(UART_DR) = (uint8_t)c;
}

void console_write(const char *buf, size_t len)
{
    while (len--)
        console_putc(*buf++);
    mcusim_poll(UART_FR, FR_BUSY, 0);
}
