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

/* Flash accelerators, for programs that time code against them (flash-timing).
 * Set exactly the ones in `features` (others off); returns 0, or -1 when the board
 * lacks one of them (nothing changed). Boards without a configurable flash
 * interface return -1 for everything but 0 (the weak default in common/). */
#define BOARD_FLASH_PREFETCH (1u << 0)
#define BOARD_FLASH_ICACHE   (1u << 1)
#define BOARD_FLASH_DCACHE   (1u << 2)
int board_flash_features(uint32_t features);

/* A second path from the core to the same flash, if the board has one (the STM32F7's ITCM
 * interface): the address `code` runs at through it (Thumb bit kept), or 0; and that path's
 * accelerators, as board_flash_features (PREFETCH, ICACHE = its cache). */
uintptr_t board_flash_alias(const void *code);
int board_flash_alias_features(uint32_t features);

/* RAM the core reaches through its data cache (the STM32F7's SRAM1 over AXIM), for programs
 * that time data accesses against it (sram-timing): `bytes` free bytes there, or NULL when the
 * board has none (the weak default in common/). */
void *board_cached_ram(size_t bytes);

/* Console UART, 115200 8N1, polled. */
void console_init(void);
void console_putc(char c);
void console_write(const char *buf, size_t len);

#endif /* BOARD_H */
