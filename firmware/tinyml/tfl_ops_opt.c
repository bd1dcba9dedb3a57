/*
 * tfl_ops_opt.c - the SIMD ("opt") kernels of the layers that hold a model's MACs: the same
 * TensorFlow Lite integer arithmetic as tfl_ops.c, bit for bit, with the Cortex-M4/M7 DSP
 * instructions (ARMv7-M ARM A7.7: SXTB16, SMLAD, SMLABB, SMLATT, SSUB16).
 *
 * Convolution and fully connected: sum((x - zp) * w) = sum(x * w) - zp * sum(w), so the
 * generator folds -zp * sum(w) into the bias (p->folded_bias) and the inner loop multiplies the
 * raw int8 bytes, four at a time: SXTB16 widens bytes 0 and 2 of a word, SXTB16 of the word
 * rotated by 8 bytes 1 and 3, and two SMLADs multiply the matching pairs; each input word
 * serves two output channels; a convolution computes two output pixels at a time, so each weight
 * word serves two pixels too. A padded tap must then count as the zero point (x - zp = 0), so a
 * convolution gathers each output pixel's taps (im2col into p->scratch, two pixels' columns) with
 * padding filled with zp, unless it is 1x1 without padding: its taps are the input pixel itself.
 *
 * Depthwise: four output channels at a time, multiplied lane by lane (SMLABB, SMLATT) over the
 * taps inside the input (found once per pixel; padded taps are skipped, as in tfl_ops.c). With
 * depth multiplier 1, x - zp is formed in each 16-bit lane of the input word with SSUB16
 * (|x - zp| <= 255 cannot wrap); otherwise the four lanes are gathered from their input channels.
 *
 * Off the Arm target (the host tests) the instructions are plain C with their semantics.
 */
#include <string.h>

#include "tfl_arith.h"
#include "tfl_ops.h"

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
#include <arm_acle.h>
#define SXTB16(x) ((uint32_t)__sxtb16((int32_t)(x)))
#define SMLAD(a, b, c) __smlad((int32_t)(a), (int32_t)(b), (c))
#define SMLABB(a, b, c) __smlabb((int32_t)(a), (int32_t)(b), (c))
#define SMLATT(a, b, c) __smlatt((int32_t)(a), (int32_t)(b), (c))
#define SSUB16(a, b) ((uint32_t)__ssub16((int32_t)(a), (int32_t)(b)))
#else
static inline int32_t lo16(uint32_t v) { return (int16_t)(v & 0xFFFF); }
static inline int32_t hi16(uint32_t v) { return (int16_t)(v >> 16); }
static inline uint32_t SXTB16(uint32_t x)
{
    return (uint16_t)(int16_t)(int8_t)x | (uint32_t)(uint16_t)(int16_t)(int8_t)(x >> 16) << 16;
}
static inline int32_t SMLAD(uint32_t a, uint32_t b, int32_t c)
{
    return (int32_t)((uint32_t)c + (uint32_t)(lo16(a) * lo16(b)) + (uint32_t)(hi16(a) * hi16(b)));
}
static inline int32_t SMLABB(uint32_t a, uint32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(lo16(a) * lo16(b))); }
static inline int32_t SMLATT(uint32_t a, uint32_t b, int32_t c) { return (int32_t)((uint32_t)c + (uint32_t)(hi16(a) * hi16(b))); }
static inline uint32_t SSUB16(uint32_t a, uint32_t b)
{
    return (uint16_t)(a - b) | (uint32_t)(uint16_t)((a >> 16) - (b >> 16)) << 16;
}
#endif

static inline uint32_t read32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);  /* one LDR: the Cortex-M4 and M7 load unaligned words */
    return v;
}

static inline uint32_t ror8(uint32_t x)
{
    return (x >> 8) | (x << 24);
}

static inline int8_t output(const tfl_params *p, int32_t acc, int channel)
{
    return clamp8(MBQM(acc, p->multiplier[channel], p->shift[channel]) + p->out_zp, p->act_min, p->act_max);
}

/* a0 += x . w0 and a1 += x . w1 over k bytes (inlined into both callers: a call per pair of channels
 * would cost the fully connected layers a few percent) */
static inline __attribute__((always_inline)) void dot2(const int8_t *x, const int8_t *w0, const int8_t *w1,
                                                      int32_t k, int32_t *a0, int32_t *a1)
{
    int32_t s0 = *a0, s1 = *a1, i = 0;
    for (; i + 4 <= k; i += 4) {
        uint32_t xv = read32(x + i), xe = SXTB16(xv), xo = SXTB16(ror8(xv));
        uint32_t v0 = read32(w0 + i), v1 = read32(w1 + i);
        s0 = SMLAD(xe, SXTB16(v0), s0);
        s0 = SMLAD(xo, SXTB16(ror8(v0)), s0);
        s1 = SMLAD(xe, SXTB16(v1), s1);
        s1 = SMLAD(xo, SXTB16(ror8(v1)), s1);
    }
    for (; i < k; i++) {
        s0 += x[i] * w0[i];
        s1 += x[i] * w1[i];
    }
    *a0 = s0;
    *a1 = s1;
}

static int32_t dot1(const int8_t *x, const int8_t *w, int32_t k, int32_t acc)
{
    int32_t i = 0;
    for (; i + 4 <= k; i += 4) {
        uint32_t xv = read32(x + i), v = read32(w + i);
        acc = SMLAD(SXTB16(xv), SXTB16(v), acc);
        acc = SMLAD(SXTB16(ror8(xv)), SXTB16(ror8(v)), acc);
    }
    for (; i < k; i++)
        acc += x[i] * w[i];
    return acc;
}

/* One pixel's outputs: every channel's dot product of `taps` (k bytes) with its weight row. */
static void channels(const tfl_params *p, const int8_t *taps, int32_t k, int32_t count, int8_t *out)
{
    const int8_t *w = p->weights;
    int32_t c = 0;
    for (; c + 2 <= count; c += 2) {
        int32_t a0 = p->folded_bias[c], a1 = p->folded_bias[c + 1];
        dot2(taps, w + c * k, w + (c + 1) * k, k, &a0, &a1);
        out[c] = output(p, a0, c);
        out[c + 1] = output(p, a1, c + 1);
    }
    if (c < count)
        out[c] = output(p, dot1(taps, w + c * k, k, p->folded_bias[c]), c);
}

/* acc[0..3] += (x0 . w0, x1 . w0, x0 . w1, x1 . w1) over k bytes: two pixels by two channels, each
 * widened weight word serving both pixels */
static void dot2x2(const int8_t *x0, const int8_t *x1, const int8_t *w0, const int8_t *w1, int32_t k, int32_t acc[4])
{
    int32_t s00 = acc[0], s01 = acc[1], s10 = acc[2], s11 = acc[3], i = 0;
    for (; i + 4 <= k; i += 4) {
        uint32_t v0 = read32(w0 + i), v1 = read32(w1 + i);
        uint32_t w0e = SXTB16(v0), w0o = SXTB16(ror8(v0)), w1e = SXTB16(v1), w1o = SXTB16(ror8(v1));
        uint32_t u = read32(x0 + i), xe = SXTB16(u), xo = SXTB16(ror8(u));
        s00 = SMLAD(xe, w0e, s00);
        s00 = SMLAD(xo, w0o, s00);
        s10 = SMLAD(xe, w1e, s10);
        s10 = SMLAD(xo, w1o, s10);
        u = read32(x1 + i);
        xe = SXTB16(u);
        xo = SXTB16(ror8(u));
        s01 = SMLAD(xe, w0e, s01);
        s01 = SMLAD(xo, w0o, s01);
        s11 = SMLAD(xe, w1e, s11);
        s11 = SMLAD(xo, w1o, s11);
    }
    for (; i < k; i++) {
        s00 += x0[i] * w0[i];
        s01 += x1[i] * w0[i];
        s10 += x0[i] * w1[i];
        s11 += x1[i] * w1[i];
    }
    acc[0] = s00, acc[1] = s01, acc[2] = s10, acc[3] = s11;
}

/* Two pixels' outputs: every channel's dot products of `taps0` and `taps1` (k bytes each) with its
 * weight row. */
static void channels2(const tfl_params *p, const int8_t *taps0, const int8_t *taps1, int32_t k, int32_t count,
                      int8_t *out0, int8_t *out1)
{
    const int8_t *w = p->weights;
    int32_t c = 0;
    for (; c + 2 <= count; c += 2) {
        int32_t acc[4] = {p->folded_bias[c], p->folded_bias[c], p->folded_bias[c + 1], p->folded_bias[c + 1]};
        dot2x2(taps0, taps1, w + c * k, w + (c + 1) * k, k, acc);
        out0[c] = output(p, acc[0], c);
        out1[c] = output(p, acc[1], c);
        out0[c + 1] = output(p, acc[2], c + 1);
        out1[c + 1] = output(p, acc[3], c + 1);
    }
    if (c < count) {  /* a last odd channel: its weight row against both pixels */
        int32_t a0 = p->folded_bias[c], a1 = p->folded_bias[c];
        dot2(w + c * k, taps0, taps1, k, &a0, &a1);
        out0[c] = output(p, a0, c);
        out1[c] = output(p, a1, c);
    }
}

/* Output pixel `pixel`'s taps: in place for a 1x1 convolution without padding, else gathered into
 * `column` with padded taps as the zero point; a kernel row's taps inside the input are one run
 * of the input row when the dilation across is 1. */
static const int8_t *taps_of(const tfl_params *p, const int8_t *in, int32_t pixel, int direct, int8_t *column)
{
    const tfl_shape I = p->in, O = p->out, F = p->filter;
    const int32_t b = pixel / (O.h * O.w), oy = pixel / O.w % O.h, ox = pixel % O.w;
    const int32_t y0 = oy * p->stride_h - p->pad_top, x0 = ox * p->stride_w - p->pad_left;
    if (direct)
        return in + ((b * I.h + y0) * I.w + x0) * I.c;
    /* with dilation 1 across, the taps kx in [first, last) are inside the input */
    int32_t first = x0 < 0 ? -x0 : 0, last = I.w - x0;
    first = first < F.w ? first : F.w;
    last = last < F.w ? last : F.w;
    last = last > first ? last : first;
    int8_t *to = column;
    for (int ky = 0; ky < F.h; ky++, to += F.w * F.c) {
        const int32_t iy = y0 + ky * p->dilation_h;
        if (iy < 0 || iy >= I.h) {
            memset(to, p->in_zp, (size_t)(F.w * F.c));
            continue;
        }
        const int8_t *row = in + (b * I.h + iy) * I.w * I.c;
        if (p->dilation_w == 1) {
            memset(to, p->in_zp, (size_t)(first * F.c));
            memcpy(to + first * F.c, row + (x0 + first) * I.c, (size_t)((last - first) * F.c));
            memset(to + last * F.c, p->in_zp, (size_t)((F.w - last) * F.c));
            continue;
        }
        for (int kx = 0; kx < F.w; kx++) {
            const int32_t ix = x0 + kx * p->dilation_w;
            if (ix < 0 || ix >= I.w)
                memset(to + kx * F.c, p->in_zp, (size_t)F.c);
            else
                memcpy(to + kx * F.c, row + ix * I.c, (size_t)F.c);
        }
    }
    return column;
}

/* Two output pixels at a time (channels2), each weight word loaded once for both; a last odd
 * pixel on its own (channels). The scratch holds two columns, the second word aligned. */
void tfl_conv_opt(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape O = p->out, F = p->filter;
    const int32_t k = F.h * F.w * F.c, pixels = O.n * O.h * O.w;
    const int direct = F.h == 1 && F.w == 1 && p->pad_top == 0 && p->pad_left == 0;
    int8_t *column0 = p->scratch, *column1 = p->scratch + ((k + 3) & ~3);
    int32_t pixel = 0;
    for (; pixel + 2 <= pixels; pixel += 2)
        channels2(p, taps_of(p, in, pixel, direct, column0), taps_of(p, in, pixel + 1, direct, column1), k, O.c,
                  out + pixel * O.c, out + (pixel + 1) * O.c);
    if (pixel < pixels)
        channels(p, taps_of(p, in, pixel, direct, column0), k, O.c, out + pixel * O.c);
}

void tfl_fully_connected_opt(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const int32_t units = p->filter.n, depth = p->filter.h;
    const int32_t rows = p->in.n * p->in.h * p->in.w * p->in.c / depth;
    for (int r = 0; r < rows; r++)
        channels(p, in + r * depth, depth, units, out + r * units);
}

static inline uint32_t pack16(int32_t low, int32_t high)
{
    return (uint16_t)low | (uint32_t)(uint16_t)high << 16;
}

/* Four output channels c..c+3 of one pixel over its taps inside the input: in each tap (x - zp)
 * for the four lanes, as [c, c+2] and [c+1, c+3] pairs to match the SXTB16 halves of the
 * weights. Channel c+j reads input channel (c+j) / depth multiplier: with multiplier 1 (WORD)
 * the four bytes are the word at c; with a multiple of 4 (SHARED) one byte serves all four;
 * otherwise (GATHERED) each is read on its own. */
enum lanes { WORD, SHARED, GATHERED };

static inline void group4(const tfl_params *p, const int8_t *pixel, int32_t c, const int32_t taps[4],
                          enum lanes lanes, int32_t acc[4])
{
    const int32_t C = p->out.c, dm = p->depth_multiplier;
    const int32_t x_step = p->dilation_w * p->in.c, row_step = p->dilation_h * p->in.w * p->in.c;
    const int32_t i0 = c / dm, i1 = (c + 1) / dm, i2 = (c + 2) / dm, i3 = (c + 3) / dm;
    const int32_t zp = p->in_zp;
    const uint32_t zp2 = (uint16_t)zp * 0x10001u;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *row = pixel + taps[0] * row_step + taps[2] * x_step;
    const int8_t *w_row = p->weights + (taps[0] * p->filter.w + taps[2]) * C + c;
    for (int ky = taps[0]; ky < taps[1]; ky++, row += row_step, w_row += p->filter.w * C) {
        const int8_t *x = row, *w = w_row;
        for (int kx = taps[2]; kx < taps[3]; kx++, x += x_step, w += C) {
            uint32_t wv = read32(w), xe, xo;
            if (lanes == WORD) {
                uint32_t xv = read32(x + c);
                xe = SSUB16(SXTB16(xv), zp2);
                xo = SSUB16(SXTB16(ror8(xv)), zp2);
            } else if (lanes == SHARED) {
                xe = xo = (uint16_t)(x[i0] - zp) * 0x10001u;
            } else {
                xe = pack16(x[i0] - zp, x[i2] - zp);
                xo = pack16(x[i1] - zp, x[i3] - zp);
            }
            uint32_t we = SXTB16(wv), wo = SXTB16(ror8(wv));
            a0 = SMLABB(xe, we, a0);
            a2 = SMLATT(xe, we, a2);
            a1 = SMLABB(xo, wo, a1);
            a3 = SMLATT(xo, wo, a3);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

void tfl_depthwise_opt(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape I = p->in, O = p->out, F = p->filter;
    const int32_t C = O.c, dh = p->dilation_h, dw = p->dilation_w, dm = p->depth_multiplier;
    for (int b = 0; b < O.n; b++)
        for (int oy = 0; oy < O.h; oy++)
            for (int ox = 0; ox < O.w; ox++) {
                const int32_t y0 = oy * p->stride_h - p->pad_top, x0 = ox * p->stride_w - p->pad_left;
                int32_t taps[4] = {0, F.h, 0, F.w};  /* ky from, to; kx from, to: the taps inside the input */
                while (taps[0] < taps[1] && y0 + taps[0] * dh < 0) taps[0]++;
                while (taps[1] > taps[0] && y0 + (taps[1] - 1) * dh >= I.h) taps[1]--;
                while (taps[2] < taps[3] && x0 + taps[2] * dw < 0) taps[2]++;
                while (taps[3] > taps[2] && x0 + (taps[3] - 1) * dw >= I.w) taps[3]--;
                const int8_t *pixel = in + ((b * I.h + y0) * I.w + x0) * I.c;
                int8_t *o = out + ((b * O.h + oy) * O.w + ox) * C;
                int32_t c = 0;
                for (; c + 4 <= C; c += 4) {
                    int32_t acc[4] = {0, 0, 0, 0};
                    if (dm == 1)
                        group4(p, pixel, c, taps, WORD, acc);
                    else if (dm % 4 == 0)
                        group4(p, pixel, c, taps, SHARED, acc);
                    else
                        group4(p, pixel, c, taps, GATHERED, acc);
                    for (int j = 0; j < 4; j++)
                        o[c + j] = output(p, acc[j] + (p->bias ? p->bias[c + j] : 0), c + j);
                }
                for (; c < C; c++) {
                    int32_t acc = p->bias ? p->bias[c] : 0;
                    for (int ky = taps[0]; ky < taps[1]; ky++)
                        for (int kx = taps[2]; kx < taps[3]; kx++)
                            acc += (pixel[(ky * dh * I.w + kx * dw) * I.c + c / dm] - p->in_zp)
                                   * p->weights[(ky * F.w + kx) * C + c];
                    o[c] = output(p, acc, c);
                }
            }
}
