/*
 * bench: a fixed compute workload for speed measurements (benchmarks/speed.py).
 * Bitwise CRC-32 over a pseudo-random buffer and int8 dot products, about 16
 * million instructions; no output, so it also runs on a bare Unicorn with
 * only a semihosting exit. Exits 0 when the results match the values the
 * same C computes on the host.
 */
#include <stdint.h>
#include "mcusim.h"

#define BUFFER_BYTES 4096
#define CRC_ROUNDS 32
#define DOT_LENGTH 256
#define DOT_ROUNDS 8000
/* Results of this same computation compiled for the host (x86-64 gcc -O2). */
#define BENCH_EXPECTED_CRC 0x1B8665F2u
#define BENCH_EXPECTED_DOT 1739086

static uint8_t buffer[BUFFER_BYTES];
static int8_t weights[DOT_LENGTH];

static uint32_t next_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u; /* Numerical Recipes LCG */
    return *state >> 24;
}

static uint32_t crc32(const uint8_t *p, uint32_t n, uint32_t crc)
{
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1u));
    }
    return crc;
}

static int32_t dot(const int8_t *a, const int8_t *b, int n)
{
    int32_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

int main(void)
{
    uint32_t seed = 12345u;
    for (int i = 0; i < BUFFER_BYTES; i++)
        buffer[i] = (uint8_t)next_random(&seed);
    for (int i = 0; i < DOT_LENGTH; i++)
        weights[i] = (int8_t)next_random(&seed);

    uint32_t crc = 0xFFFFFFFFu;
    for (int r = 0; r < CRC_ROUNDS; r++)
        crc = crc32(buffer, BUFFER_BYTES, crc);
    crc = ~crc;

    int32_t total = 0;
    for (int r = 0; r < DOT_ROUNDS; r++)
        total += dot((const int8_t *)buffer + (r & 1023), weights, DOT_LENGTH);

    mcusim_exit(crc == BENCH_EXPECTED_CRC && total == BENCH_EXPECTED_DOT ? 0 : 1);
}
