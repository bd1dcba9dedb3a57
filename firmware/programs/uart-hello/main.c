/*
 * uart-hello: printf over the board's console UART (see
 * common/retarget_uart.c), then exit 0 through semihosting.
 * Line 2 is a CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320) of
 * "123456789"; the standard check value is 0xCBF43926.
 */
#include <stdio.h>
#include <string.h>
#include "board.h"
#include "mcusim.h"

static uint32_t crc32(const char *s, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    while (n--) {
        crc ^= (uint8_t)*s++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1u));
    }
    return ~crc;
}

int main(void)
{
    static const char check[] = "123456789";
    uint32_t crc = crc32(check, strlen(check));

    console_init();
    printf("Hello from mcusim on %s (UART)\n", BOARD_NAME);
    printf("crc32(\"%s\") = 0x%08lX %s\n", check, (unsigned long)crc,
           crc == 0xCBF43926u ? "ok" : "MISMATCH");
    fflush(stdout);
    mcusim_exit(crc == 0xCBF43926u ? 0 : 1);
}
