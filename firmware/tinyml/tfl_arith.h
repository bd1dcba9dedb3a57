/*
 * tfl_arith.h - TensorFlow Lite's integer requantization, inline for the kernels of tfl_ops.c and
 * tfl_ops_opt.c: a real multiplier is a Q0.31 fraction and a power-of-two exponent.
 */
#ifndef TFL_ARITH_H
#define TFL_ARITH_H

#include <stdint.h>

/* high 32 bits of 2ab, rounded to nearest (ties away from zero); INT32_MAX for INT32_MIN^2 */
static inline int32_t srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / (1ll << 31));  /* C division truncates toward zero */
}

/* x / 2^exponent rounded to nearest, ties away from zero */
static inline int32_t rdbp(int32_t x, int exponent)
{
    int32_t mask = (int32_t)((1ll << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^shift: shifted left by a positive shift, the saturating rounding doubling
 * high multiply, then a rounding right shift by a negative one (TFLite's MultiplyByQuantizedMultiplier) */
static inline int32_t MBQM(int32_t x, int32_t multiplier, int32_t shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rdbp(srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}

static inline int8_t clamp8(int32_t v, int32_t low, int32_t high)
{
    return (int8_t)(v < low ? low : v > high ? high : v);
}

#endif /* TFL_ARITH_H */
