/*
 * core.c - diff-core: what real firmware does, each part printing a hash that does not
 * depend on time, addresses or the board: constant tables read from flash in and out of IT
 * blocks (loads.S), copies from flash, float and double (soft) math, 64-bit arithmetic and the
 * DSP instructions, deep recursion, the heap and C++ (cxx.cpp).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"

uint32_t diff_it_loads(const uint8_t *table, uint32_t rounds, uint32_t seed);
uint32_t diff_cxx(void);

struct record { uint32_t a; uint16_t b; uint8_t c; double d; char name[13]; };
static const struct record records[] = {
    {1, 2, 3, 1.5707963267948966, "first"}, {0xdeadbeef, 0xffff, 0x80, -0.0, "second!"},
    {7, 9, 11, 3.0e300, "third"}, {42, 4242, 42, 1.0e-300, "fourth, long"},
};
static const char greeting[] = "The quick brown fox jumps over the lazy dog, 0123456789 times.";

static uint32_t tables(void)
{
    uint32_t (*loads)(const uint8_t *, uint32_t, uint32_t) = diff_code((void *)diff_it_loads);
    uint32_t h = 2166136261u;
    for (uint32_t seed = 1; seed < 9; seed++)
        h = diff_hash_word(h, loads(diff_rodata(diff_table), 700, seed * 0x9e3779b9u));
    return h;
}

static uint32_t copies(void)
{
    uint32_t h = 2166136261u;
    char buffer[96];
    struct record copy[4];
    for (size_t offset = 0; offset < 8; offset++) {            /* every alignment */
        memset(buffer, 0xA5, sizeof buffer);
        memcpy(buffer + offset, greeting + offset, sizeof greeting - offset);
        h = diff_hash(h, buffer, sizeof buffer);
        strcpy(buffer + offset, greeting + 3 * offset);
        h = diff_hash_word(h, (uint32_t)strlen(buffer + offset));
        h = diff_hash_word(h, (uint32_t)(strcmp(buffer + offset, greeting) > 0));
        memmove(buffer + 1, buffer + offset, 40);
        h = diff_hash(h, buffer, 48);
    }
    memcpy(copy, records, sizeof copy);
    for (int i = 0; i < 4; i++) {
        struct record r = records[3 - i];                      /* struct copies from flash */
        copy[i].a ^= r.a;
        copy[i].d += r.d;
        h = diff_hash(h, &copy[i], sizeof copy[i]);
        h = diff_hash(h, r.name, strlen(r.name));
    }
    h = diff_hash_word(h, (uint32_t)memcmp(records, copy, sizeof copy) > 0);
    return h;
}

static uint32_t bits_of(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return (uint32_t)bits ^ (uint32_t)(bits >> 32);
}

static uint32_t floats(void)
{
    volatile float xs = 0.1f;
    float acc = 1.0f;
    uint32_t h = 2166136261u;
    for (int i = 0; i < 300; i++) {                            /* hardware single precision */
        acc = acc * 1.0001f + xs * (float)i;
        acc = sqrtf(acc) + fabsf(acc - 3.0f) / (1.0f + (float)(i & 7));
        h = diff_hash(h, &acc, sizeof acc);
    }
    volatile double xd = 0.125;
    double d = 0.5;
    for (int i = 1; i < 120; i++) {                            /* soft double precision (libm) */
        d = sin(d + xd * i) * exp(-d) + log1p(fabs(d)) + sqrt((double)i) - floor(d * 3.5);
        d = fmod(d * 1e6, 7.25) + pow(1.0001, (double)i) + atan2(d, (double)i);
        h = diff_hash_word(h, bits_of(d));
    }
    h = diff_hash_word(h, bits_of((double)records[0].d * 2.0));   /* a double constant from flash */
    h = diff_hash_word(h, (uint32_t)(int32_t)(records[2].d / 1e290));
    return h;
}

static uint32_t integers(void)
{
    uint32_t h = 2166136261u;
    volatile int64_t a = 0x123456789abcdefLL;
    volatile uint64_t b = 0xfedcba9876543210ULL;
    for (int i = 1; i < 200; i++) {
        int64_t q = a / (i * 3 - 301);
        uint64_t r = b % (uint64_t)(i * 977u);
        a = a * 3 + q;
        b = (b >> 1) ^ r ^ ((uint64_t)i << 40);
        h = diff_hash(h, (const void *)&q, 8);
        h = diff_hash(h, (const void *)&r, 8);
        int32_t s = (int32_t)(a >> 13);
        uint32_t x = (uint32_t)b, y = (uint32_t)(b >> 32), ge;
        __asm volatile("ssat %0, #12, %1" : "=r"(ge) : "r"(s));
        h = diff_hash_word(h, ge);
        __asm volatile("qadd %0, %1, %2" : "=r"(ge) : "r"(x), "r"(y));
        h = diff_hash_word(h, ge);
        __asm volatile("sadd8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(ge) : "r"(x), "r"(y));
        h = diff_hash_word(h, ge);
        __asm volatile("smlad %0, %1, %2, %3" : "=r"(ge) : "r"(x), "r"(y), "r"(s));
        h = diff_hash_word(h, ge);
        h = diff_hash_word(h, (uint32_t)__builtin_clz(x | 1) + (uint32_t)(x / (y | 1)) + (uint32_t)(s / -7));
    }
    return h;
}

/* Deep recursion: 1500 frames of a non-tail-recursive function with a local array. */
static uint32_t __attribute__((noinline)) descend(uint32_t depth, uint32_t h)
{
    volatile uint32_t local[4] = {depth, h, depth * 3, h ^ depth};
    if (depth == 0)
        return h;
    uint32_t below = descend(depth - 1, diff_hash_word(h, local[depth & 3]));
    return below ^ (local[(depth + 1) & 3] * 2654435761u);
}

static uint32_t heap(void)
{
    uint32_t h = 2166136261u, state = 12345;
    unsigned char *blocks[24] = {0};
    size_t sizes[24] = {0};
    for (int step = 0; step < 600; step++) {
        state = state * 1103515245u + 12345u;
        unsigned k = (state >> 16) % 24;
        size_t size = 1 + ((state >> 8) & 255);
        if (blocks[k] && (state & 0x40)) {
            h = diff_hash(h, blocks[k], sizes[k]);
            free(blocks[k]);
            blocks[k] = NULL;
        } else if (blocks[k]) {
            unsigned char *grown = realloc(blocks[k], size);
            if (!grown)
                return 0;
            if (size > sizes[k])
                memset(grown + sizes[k], (int)k, size - sizes[k]);
            blocks[k] = grown;
            sizes[k] = size;
        } else {
            blocks[k] = malloc(size);
            if (!blocks[k])
                return 0;
            memset(blocks[k], (int)(state & 0xff), size);
            sizes[k] = size;
        }
    }
    for (int k = 0; k < 24; k++) {
        if (blocks[k])
            h = diff_hash(h, blocks[k], sizes[k]);
        free(blocks[k]);
    }
    return h;
}

int main(void)
{
    diff_setup();
    diff_report("tables", tables());
    diff_report("copies", copies());
    diff_report("floats", floats());
    diff_report("integers", integers());
    diff_report("recursion", descend(1500, 2166136261u));
    diff_report("heap", heap());
    diff_report("cxx", diff_cxx());
    return 0;
}
