/*
 * board.h - the interface every board directory implements.
 *   startup.c : vector table, Reset_Handler
 *   system.c  : SystemInit (clock tree), SystemCoreClock
 *   console.c : polled console UART
 * BOARD_NAME is passed by the Makefile (-DBOARD_NAME="\"mcu-s\"").
 */
#ifndef BOARD_H
#define BOARD_H

#include <stddef.h>
#include <stdint.h>

#ifndef BOARD_NAME
#error "BOARD_NAME must be defined by the build"
#endif

/* Core clock in Hz, valid after SystemInit(). */
extern uint32_t SystemCoreClock;
void SystemInit(void);

/* Console UART, 115200 8N1, polled. */
void console_init(void);
void console_putc(char c);
void console_write(const char *buf, size_t len);

#endif /* BOARD_H */
