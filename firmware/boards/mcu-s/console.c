/*
 * mcu-s console: UARTE0 with EasyDMA, TX on P1.03, RX on P1.10 (Arduino
 * Nano 33 BLE variant pins). Each chunk is copied to a RAM buffer
 * (EasyDMA can only read Data RAM), sent with STARTTX and waited for with
 * EVENTS_ENDTX.
 * Source: Nordic nRF52840 Product Specification v1.7, 6.34 UARTE and
 * 6.8 GPIO (details in boards/REGISTERS.md, section 2).
 */
#include "board.h"
#include "mcusim.h"

#define UARTE0_BASE          0x40002000u
#define UARTE_TASKS_STARTTX  (UARTE0_BASE + 0x008u)
#define UARTE_TASKS_STOPTX   (UARTE0_BASE + 0x00Cu)
#define UARTE_EVENTS_ENDTX   (UARTE0_BASE + 0x120u)
#define UARTE_EVENTS_TXSTOPPED (UARTE0_BASE + 0x158u)
#define UARTE_ENABLE         (UARTE0_BASE + 0x500u)
#define UARTE_ENABLE_ON      8u
#define UARTE_PSEL_TXD       (UARTE0_BASE + 0x50Cu)
#define UARTE_PSEL_RXD       (UARTE0_BASE + 0x514u)
#define UARTE_BAUDRATE       (UARTE0_BASE + 0x524u)
#define UARTE_BAUD_115200    0x01D60000u
#define UARTE_TXD_PTR        (UARTE0_BASE + 0x544u)
#define UARTE_TXD_MAXCNT     (UARTE0_BASE + 0x548u)
#define UARTE_CONFIG         (UARTE0_BASE + 0x56Cu)

#define GPIO_P1_BASE         0x50000300u
#define GPIO_OUTSET          (GPIO_P1_BASE + 0x508u)
#define GPIO_DIRSET          (GPIO_P1_BASE + 0x518u)

#define PSEL(port, pin)      (((port) << 5) | (pin))   /* CONNECT = 0 */
#define TX_PIN               3u                          /* P1.03 */
#define RX_PIN               10u                         /* P1.10 */

static uint8_t tx_buf[64];

void console_init(void)
{
    REG32(GPIO_OUTSET) = 1u << TX_PIN;
    REG32(GPIO_DIRSET) = 1u << TX_PIN;

    REG32(UARTE_ENABLE) = 0;
    REG32(UARTE_PSEL_TXD) = PSEL(1u, TX_PIN);
    REG32(UARTE_PSEL_RXD) = PSEL(1u, RX_PIN);
    REG32(UARTE_BAUDRATE) = UARTE_BAUD_115200;
    REG32(UARTE_CONFIG) = 0;
    REG32(UARTE_ENABLE) = UARTE_ENABLE_ON;
}

static void send_chunk(size_t n)
{
    REG32(UARTE_TXD_PTR) = (uint32_t)(uintptr_t)tx_buf;
    REG32(UARTE_TXD_MAXCNT) = n;
    REG32(UARTE_EVENTS_ENDTX) = 0;
    REG32(UARTE_TASKS_STARTTX) = 1;
    mcusim_poll(UARTE_EVENTS_ENDTX, 1u, 1u);
    REG32(UARTE_EVENTS_ENDTX) = 0;
    REG32(UARTE_TASKS_STOPTX) = 1;
    REG32(UARTE_EVENTS_TXSTOPPED) = 0;
}

void console_write(const char *buf, size_t len)
{
    while (len) {
        size_t n = len < sizeof(tx_buf) ? len : sizeof(tx_buf);
        for (size_t i = 0; i < n; i++)
            tx_buf[i] = (uint8_t)buf[i];
        send_chunk(n);
        buf += n;
        len -= n;
    }
}

void console_putc(char c)
{
    console_write(&c, 1);
}
