/*
 * Convolution and fully connected layers with the SIMD DSP instructions (the optimized build),
 * built the way the established Cortex-M libraries do it: each output pixel's receptive field
 * is copied (partial im2col) into int16 with the input zero point removed, in groups of four
 * reordered [x0 x2 x1 x3]; weights are widened four at a time with SXTB16 (bytes 0, 2) and
 * SXTB16 of the word rotated by 8 (bytes 1, 3), so each SMLAD multiplies matching pairs. The
 * main kernel computes two output pixels x two output channels; what does not fill it (a
 * last odd pixel, a last odd channel, taps beyond a multiple of four) takes scalar paths.
 */
#include <arm_acle.h>
#include <string.h>
#include "tinyml.h"

/* Generated with the model: two im2col columns of the widest layer (int16, word aligned). */
extern int16_t tinyml_scratch[];

static inline uint32_t read32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint32_t ror32(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));  /* one ROR (or the rotation SXTB16 can apply itself) */
}

static inline int column_length(int taps)
{
    return (taps + 1) & ~1;  /* keeps the second column word aligned */
}

/* One column: (x - zp_in) for every tap of output pixel (oy, ox), padding as 0. */
static void im2col(const tinyml_layer *l, const int8_t *in, int oy, int ox, int16_t *col)
{
    const int c = l->in_c;
    int k = 0;
    for (int ky = 0; ky < l->kernel_h; ky++) {
        int iy = oy * l->stride_h - l->pad_h + ky;
        for (int kx = 0; kx < l->kernel_w; kx++) {
            int ix = ox * l->stride_w - l->pad_w + kx;
            int inside = iy >= 0 && iy < l->in_h && ix >= 0 && ix < l->in_w;
            const int8_t *x = in + (iy * l->in_w + ix) * c;
            for (int ch = 0; ch < c; ch++, k++)
                col[k] = (int16_t)(inside ? x[ch] - l->zp_in : 0);
        }
    }
}

/* Reorder each full group of four taps to [x0 x2 x1 x3]; the tail stays in order. */
static void reorder(int16_t *col, int taps)
{
    for (int k = 0; k + 4 <= taps; k += 4) {
        int16_t x1 = col[k + 1];
        col[k + 1] = col[k + 2];
        col[k + 2] = x1;
    }
}

/* acc[0..3] += (row0 . col0, row0 . col1, row1 . col0, row1 . col1) */
static void kernel_2x2(const int8_t *row0, const int8_t *row1, const int16_t *col0, const int16_t *col1,
                       int taps, int32_t acc[4])
{
    int groups = taps >> 2;
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
    while (groups--) {
        uint32_t w0 = read32(row0), w1 = read32(row1);
        row0 += 4;
        row1 += 4;
        uint32_t w0_even = __sxtb16(w0), w0_odd = __sxtb16(ror32(w0, 8));
        uint32_t w1_even = __sxtb16(w1), w1_odd = __sxtb16(ror32(w1, 8));
        uint32_t c0_even = read32(col0), c0_odd = read32(col0 + 2);
        uint32_t c1_even = read32(col1), c1_odd = read32(col1 + 2);
        col0 += 4;
        col1 += 4;
        a00 = __smlad(w0_even, c0_even, a00);
        a00 = __smlad(w0_odd, c0_odd, a00);
        a01 = __smlad(w0_even, c1_even, a01);
        a01 = __smlad(w0_odd, c1_odd, a01);
        a10 = __smlad(w1_even, c0_even, a10);
        a10 = __smlad(w1_odd, c0_odd, a10);
        a11 = __smlad(w1_even, c1_even, a11);
        a11 = __smlad(w1_odd, c1_odd, a11);
    }
    for (int k = taps & ~3; k < taps; k++) {  /* leftover taps */
        a00 += *row0 * *col0;
        a01 += *row0 * *col1;
        a10 += *row1 * *col0;
        a11 += *row1 * *col1;
        row0++, row1++, col0++, col1++;
    }
    acc[0] = a00, acc[1] = a01, acc[2] = a10, acc[3] = a11;
}

/* One weight row against two columns (a last odd output channel). */
static void kernel_1x2(const int8_t *row, const int16_t *col0, const int16_t *col1, int taps, int32_t acc[2])
{
    int groups = taps >> 2;
    int32_t a0 = acc[0], a1 = acc[1];
    while (groups--) {
        uint32_t w = read32(row);
        row += 4;
        uint32_t w_even = __sxtb16(w), w_odd = __sxtb16(ror32(w, 8));
        a0 = __smlad(w_even, read32(col0), a0);
        a0 = __smlad(w_odd, read32(col0 + 2), a0);
        a1 = __smlad(w_even, read32(col1), a1);
        a1 = __smlad(w_odd, read32(col1 + 2), a1);
        col0 += 4;
        col1 += 4;
    }
    for (int k = taps & ~3; k < taps; k++) {
        a0 += *row * *col0++;
        a1 += *row++ * *col1++;
    }
    acc[0] = a0, acc[1] = a1;
}

/* The scalar path: one row, one column, one multiply a tap (a last odd output pixel). */
static int32_t dot_scalar(const int8_t *row, const int16_t *col, int taps, int32_t acc)
{
    int k = 0;
    for (; k + 4 <= taps; k += 4)  /* the column is reordered by groups of four */
        acc += row[k] * col[k] + row[k + 1] * col[k + 2] + row[k + 2] * col[k + 1] + row[k + 3] * col[k + 3];
    for (; k < taps; k++)
        acc += row[k] * col[k];
    return acc;
}

static inline int8_t output(const tinyml_layer *l, int32_t acc, int oc)
{
    return tinyml_clamp(l->zp_out + tinyml_requantize(acc, l->multiplier[oc], l->shift[oc]), l->act_min, l->act_max);
}

void tinyml_conv(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int taps = l->kernel_h * l->kernel_w * l->in_c;
    const int pixels = l->out_h * l->out_w;
    int16_t *col0 = tinyml_scratch, *col1 = tinyml_scratch + column_length(taps);
    int p = 0;
    for (; p + 2 <= pixels; p += 2) {
        im2col(l, in, p / l->out_w, p % l->out_w, col0);
        im2col(l, in, (p + 1) / l->out_w, (p + 1) % l->out_w, col1);
        reorder(col0, taps);
        reorder(col1, taps);
        int8_t *out0 = out + p * l->out_c, *out1 = out0 + l->out_c;
        int oc = 0;
        for (; oc + 2 <= l->out_c; oc += 2) {
            int32_t acc[4] = { l->bias[oc], l->bias[oc], l->bias[oc + 1], l->bias[oc + 1] };
            kernel_2x2(l->weights + oc * taps, l->weights + (oc + 1) * taps, col0, col1, taps, acc);
            out0[oc] = output(l, acc[0], oc);
            out1[oc] = output(l, acc[1], oc);
            out0[oc + 1] = output(l, acc[2], oc + 1);
            out1[oc + 1] = output(l, acc[3], oc + 1);
        }
        if (oc < l->out_c) {
            int32_t acc[2] = { l->bias[oc], l->bias[oc] };
            kernel_1x2(l->weights + oc * taps, col0, col1, taps, acc);
            out0[oc] = output(l, acc[0], oc);
            out1[oc] = output(l, acc[1], oc);
        }
    }
    if (p < pixels) {  /* a last odd pixel */
        im2col(l, in, p / l->out_w, p % l->out_w, col0);
        reorder(col0, taps);
        for (int oc = 0; oc < l->out_c; oc++)
            out[p * l->out_c + oc] = output(l, dot_scalar(l->weights + oc * taps, col0, taps, l->bias[oc]), oc);
    }
}

void tinyml_fully_connected(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int n = l->in_h * l->in_w * l->in_c;
    int16_t *col = tinyml_scratch;
    for (int i = 0; i < n; i++)
        col[i] = (int16_t)(in[i] - l->zp_in);
    reorder(col, n);
    int o = 0;
    for (; o + 2 <= l->out_c; o += 2) {  /* two rows against the one column: the 1x2 kernel, transposed */
        int32_t acc[2] = { l->bias[o], l->bias[o + 1] };
        const int8_t *row0 = l->weights + o * n, *row1 = row0 + n;
        int groups = n >> 2;
        const int16_t *c = col;
        while (groups--) {
            uint32_t x_even = read32(c), x_odd = read32(c + 2);
            uint32_t w0 = read32(row0), w1 = read32(row1);
            c += 4;
            row0 += 4;
            row1 += 4;
            acc[0] = __smlad(__sxtb16(w0), x_even, acc[0]);
            acc[0] = __smlad(__sxtb16(ror32(w0, 8)), x_odd, acc[0]);
            acc[1] = __smlad(__sxtb16(w1), x_even, acc[1]);
            acc[1] = __smlad(__sxtb16(ror32(w1, 8)), x_odd, acc[1]);
        }
        for (int k = n & ~3; k < n; k++) {
            acc[0] += *row0++ * *c;
            acc[1] += *row1++ * *c++;
        }
        out[o] = output(l, acc[0], o);
        out[o + 1] = output(l, acc[1], o + 1);
    }
    if (o < l->out_c)  /* a last odd row */
        out[o] = output(l, dot_scalar(l->weights + o * n, col, n, l->bias[o]), o);
}

/* Depthwise convolution, four channels at a time: SXTAB16 widens two of four input bytes and
 * adds the negated zero point in one instruction, and SMLABB/SMLATT accumulate each channel
 * on its own. Interior pixels skip the bounds checks; border pixels and a channel count that
 * is not a multiple of four take the scalar path. */
void tinyml_depthwise(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int c = l->in_c;
    const uint32_t offset = (uint32_t)(uint16_t)(-l->zp_in) * 0x10001u;  /* -zp in both halfwords */
    for (int oy = 0; oy < l->out_h; oy++) {
        int y0 = oy * l->stride_h - l->pad_h;
        for (int ox = 0; ox < l->out_w; ox++) {
            int x0 = ox * l->stride_w - l->pad_w;
            int interior = y0 >= 0 && x0 >= 0 && y0 + l->kernel_h <= l->in_h && x0 + l->kernel_w <= l->in_w;
            int8_t *o = out + (oy * l->out_w + ox) * c;
            int ch = 0;
            if (interior) {
                for (; ch + 4 <= c; ch += 4) {
                    int32_t a0 = l->bias[ch], a1 = l->bias[ch + 1], a2 = l->bias[ch + 2], a3 = l->bias[ch + 3];
                    for (int ky = 0; ky < l->kernel_h; ky++) {
                        const int8_t *x = in + ((y0 + ky) * l->in_w + x0) * c + ch;
                        const int8_t *w = l->weights + ky * l->kernel_w * c + ch;
                        for (int kx = 0; kx < l->kernel_w; kx++, x += c, w += c) {
                            uint32_t xv = read32(x), wv = read32(w);
                            uint32_t x_even = __sxtab16(offset, xv), x_odd = __sxtab16(offset, ror32(xv, 8));
                            uint32_t w_even = __sxtb16(wv), w_odd = __sxtb16(ror32(wv, 8));
                            a0 = __smlabb(x_even, w_even, a0);
                            a2 = __smlatt(x_even, w_even, a2);
                            a1 = __smlabb(x_odd, w_odd, a1);
                            a3 = __smlatt(x_odd, w_odd, a3);
                        }
                    }
                    o[ch] = output(l, a0, ch);
                    o[ch + 1] = output(l, a1, ch + 1);
                    o[ch + 2] = output(l, a2, ch + 2);
                    o[ch + 3] = output(l, a3, ch + 3);
                }
            }
            for (; ch < c; ch++)
                o[ch] = output(l, tinyml_depthwise_accumulate(l, in, oy, ox, ch), ch);
        }
    }
}
