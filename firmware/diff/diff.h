/*
 * diff.h - the differential programs (firmware/diff): programs whose output does not depend
 * on time, built for the memory layouts QEMU has, so the same ELF runs on QEMU and on mcusim
 * and must print the same lines under every flash and cache configuration (docs/testing.md).
 *
 * Command line (semihosting SYS_GET_CMDLINE): PROGRAM [BOARD CONFIG]. BOARD is an mcusim board
 * name (or "qemu"), CONFIG an index into that board's flash/cache configurations (configs.c);
 * with no arguments nothing is configured. A bad board or index exits with DIFF_EXIT_NO_CONFIG.
 */
#ifndef DIFF_H
#define DIFF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DIFF_EXIT_NO_CONFIG 99

/* Parse the command line, set up the flash configuration it names; prints one header line. */
void diff_setup(void);
/* How many configurations BOARD has (0 for an unknown board). */
unsigned diff_config_count(const char *board);
/* `function` as the configuration wants it called: through the Cortex-M7 ITCM flash alias on
 * mcu-d's ITCM configurations (so the ART and its prefetch serve it), else unchanged. */
void *diff_code(void *function);
/* `data` (a constant in flash) through the ITCM alias likewise, else unchanged. */
const void *diff_rodata(const void *data);

/* FNV-1a over bytes, and over one word. */
uint32_t diff_hash(uint32_t h, const void *data, size_t bytes);
uint32_t diff_hash_word(uint32_t h, uint32_t word);
/* Print "name xxxxxxxx". */
void diff_report(const char *name, uint32_t value);

/* A 1 KB constant table in flash (bytes (i * 37 + 11) ^ (i >> 3), i = 0..1023), word aligned. */
extern const uint8_t diff_table[1024];

#ifdef __cplusplus
}
#endif
#endif /* DIFF_H */
