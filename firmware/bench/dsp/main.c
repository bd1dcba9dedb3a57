/*
 * bench-dsp: an int16 dot-product loop on SMLAD (two 16x16 MACs per instruction), the inner
 * loop of CMSIS-style int8/int16 kernels; about 13 million instructions. Silent; exits 0
 * when the SIMD result equals a plain C computation of the same sum.
 */
#include <stdint.h>
#include "mcusim.h"

#define LENGTH 512
#define ROUNDS 10000

static int16_t a[LENGTH] __attribute__((aligned(4)));
static int16_t b[LENGTH] __attribute__((aligned(4)));

static inline int32_t smlad(uint32_t x, uint32_t y, int32_t acc)
{
    int32_t result;
    __asm__("smlad %0, %1, %2, %3" : "=r"(result) : "r"(x), "r"(y), "r"(acc));
    return result;
}

static int32_t dot_simd(const int16_t *x, const int16_t *y, int n)
{
    const uint32_t *x2 = (const uint32_t *)x, *y2 = (const uint32_t *)y;
    int32_t sum = 0;
    for (int i = 0; i < n / 2; i++)
        sum = smlad(x2[i], y2[i], sum);
    return sum;
}

static int32_t dot_plain(const int16_t *x, const int16_t *y, int n)
{
    int32_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i] * y[i];
    return sum;
}

int main(void)
{
    uint32_t seed = 1u;
    for (int i = 0; i < LENGTH; i++) {
        seed = seed * 1664525u + 1013904223u;
        a[i] = (int16_t)(seed >> 20) - 2048;
        b[i] = (int16_t)(seed >> 8 & 0xFFF) - 2048;
    }
    int32_t total = 0;
    for (int r = 0; r < ROUNDS; r++)
        total += dot_simd(a, b, LENGTH) >> 8;
    mcusim_exit(total == ROUNDS * (dot_plain(a, b, LENGTH) >> 8) ? 0 : 1);
}
