/*
 * printf-uart: printf-heavy output (integers, hexadecimal, strings, floats, characters) on the
 * board's console UART, a few thousand lines: what is measured is newlib's formatting and the
 * simulator's UART peripheral path (benchmarks/speed.py).
 *
 * The lines come in blocks of LINES_PER_BLOCK; a block's text depends only on
 * (block % PHASES), and the CRC-16 of every byte a block writes must equal expected[phase].
 * Those values come from this same file built for the host, where the text is formatted by
 * the host's C library instead of newlib (`gcc -O2 -DHOST_EXPECTED main.c && ./a.out`, also
 * run by tests/integration/test_speed_workloads.py). This file provides the newlib system
 * calls (as common/retarget_uart.c does) so that _write can add each byte to the CRC.
 * Exits 1 at the first block that differs.
 */
#include <stdint.h>
#include <stdio.h>

#ifndef BLOCKS
#define BLOCKS 20
#endif
#define PHASES 4
#define LINES_PER_BLOCK 100

static uint16_t crc;

/* CRC-16/CCITT (polynomial 0x1021), bit by bit. */
static void crc_add(const char *buf, int len)
{
    for (int i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint8_t)buf[i] << 8);
        for (int k = 0; k < 8; k++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
}

static const char *const words[8] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};

static void print_block(unsigned phase);

#ifdef HOST_EXPECTED
#include <stdarg.h>

static int emit(const char *format, ...)
{
    char line[160];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    crc_add(line, n);
    return n;
}
#define printf emit

int main(void)
{
    for (unsigned phase = 0; phase < PHASES; phase++) {
        crc = 0;
        print_block(phase);
        fprintf(stdout, "%s0x%04X", phase ? ", " : "", crc);
    }
    fprintf(stdout, "\n");
    return 0;
}
#else
#include <errno.h>
#include <sys/stat.h>
#include "board.h"
#include "mcusim.h"

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    crc_add(buf, len);
    console_write(buf, (size_t)len);
    return len;
}

int _read(int fd, char *buf, int len) { (void)fd; (void)buf; (void)len; errno = EBADF; return -1; }
int _close(int fd) { (void)fd; errno = EBADF; return -1; }
int _lseek(int fd, int off, int whence) { (void)fd; (void)off; (void)whence; errno = ESPIPE; return -1; }
int _fstat(int fd, struct stat *st) { (void)fd; st->st_mode = S_IFCHR; return 0; }
int _isatty(int fd) { return fd == 1 || fd == 2; }

/* print_block(phase) from the host build (see the top of this file) */
static const uint16_t expected[PHASES] = {0x57EE, 0x4690, 0x1FE8, 0xA8FC};

int main(void)
{
    console_init();
    uint16_t checksum = 0;
    for (unsigned block = 0; block < BLOCKS; block++) {
        fflush(stdout);
        crc = 0;
        print_block(block % PHASES);
        fflush(stdout);
        if (crc != expected[block % PHASES]) {
            printf("printf-uart: block %u: crc 0x%04X, expected 0x%04X\n", block, crc, expected[block % PHASES]);
            fflush(stdout);
            mcusim_exit(1);
        }
        checksum = (uint16_t)(checksum * 31u + crc);
    }
    printf("printf-uart: %u lines, checksum 0x%04X ok\n", (unsigned)(BLOCKS * LINES_PER_BLOCK), checksum);
    fflush(stdout);
    mcusim_exit(0);
}
#endif

static void print_block(unsigned phase)
{
    uint32_t state = 0xC0FFEE00u + phase;
    for (int line = 0; line < LINES_PER_BLOCK; line++) {
        state = state * 1664525u + 1013904223u; /* Numerical Recipes LCG */
        int32_t value = (int32_t)(state >> 8) - (1 << 23);
        float ratio = (float)value / 4096.0f;
        printf("%4d %-8s %+9ld 0x%08lX %12.4f %5.1f%% %c\n", line, words[(state >> 4) & 7], (long)value,
               (unsigned long)state, (double)ratio, (double)((state >> 12) % 1000) / 10.0, 'A' + (int)(phase * 7 + line) % 26);
    }
}
