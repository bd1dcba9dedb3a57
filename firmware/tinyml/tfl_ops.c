/* int8 layers with TensorFlow Lite's integer arithmetic (tfl_ops.h), plain C. */
#include <string.h>

#include "tfl_arith.h"
#include "tfl_ops.h"

static int32_t shift_left_saturating(int32_t x, int exponent)
{
    int64_t v = (int64_t)x * ((int64_t)1 << exponent);
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

int32_t tfl_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift)
{
    return MBQM(x, multiplier, shift);
}

static int32_t elements(tfl_shape s)
{
    return s.n * s.h * s.w * s.c;
}

static int32_t at(tfl_shape s, int b, int y, int x, int c)
{
    return ((b * s.h + y) * s.w + x) * s.c + c;
}

/* index in `s` of output element (b, y, x, c), dimensions of size 1 broadcast */
static int32_t broadcast_at(tfl_shape s, int b, int y, int x, int c)
{
    return at(s, s.n == 1 ? 0 : b, s.h == 1 ? 0 : y, s.w == 1 ? 0 : x, s.c == 1 ? 0 : c);
}

void tfl_conv(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape I = p->in, O = p->out, F = p->filter;
    for (int b = 0; b < O.n; b++)
        for (int oy = 0; oy < O.h; oy++)
            for (int ox = 0; ox < O.w; ox++)
                for (int oc = 0; oc < O.c; oc++) {
                    int32_t acc = 0;
                    for (int ky = 0; ky < F.h; ky++) {
                        int iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
                        if (iy < 0 || iy >= I.h)
                            continue;
                        for (int kx = 0; kx < F.w; kx++) {
                            int ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
                            if (ix < 0 || ix >= I.w)
                                continue;
                            const int8_t *x = in + at(I, b, iy, ix, 0);
                            const int8_t *w = p->weights + at(F, oc, ky, kx, 0);
                            for (int ic = 0; ic < F.c; ic++)
                                acc += (x[ic] - p->in_zp) * w[ic];
                        }
                    }
                    if (p->bias)
                        acc += p->bias[oc];
                    acc = MBQM(acc, p->multiplier[oc], p->shift[oc]) + p->out_zp;
                    out[at(O, b, oy, ox, oc)] = clamp8(acc, p->act_min, p->act_max);
                }
}

void tfl_depthwise(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape I = p->in, O = p->out, F = p->filter;
    for (int b = 0; b < O.n; b++)
        for (int oy = 0; oy < O.h; oy++)
            for (int ox = 0; ox < O.w; ox++)
                for (int oc = 0; oc < O.c; oc++) {
                    int ic = oc / p->depth_multiplier;
                    int32_t acc = 0;
                    for (int ky = 0; ky < F.h; ky++) {
                        int iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
                        if (iy < 0 || iy >= I.h)
                            continue;
                        for (int kx = 0; kx < F.w; kx++) {
                            int ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
                            if (ix < 0 || ix >= I.w)
                                continue;
                            acc += (in[at(I, b, iy, ix, ic)] - p->in_zp) * p->weights[at(F, 0, ky, kx, oc)];
                        }
                    }
                    if (p->bias)
                        acc += p->bias[oc];
                    acc = MBQM(acc, p->multiplier[oc], p->shift[oc]) + p->out_zp;
                    out[at(O, b, oy, ox, oc)] = clamp8(acc, p->act_min, p->act_max);
                }
}

void tfl_fully_connected(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const int32_t units = p->filter.n, depth = p->filter.h, rows = elements(p->in) / depth;
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < units; o++) {
            const int8_t *x = in + r * depth, *w = p->weights + o * depth;
            int32_t acc = 0;
            for (int d = 0; d < depth; d++)
                acc += (x[d] - p->in_zp) * w[d];
            if (p->bias)
                acc += p->bias[o];
            acc = MBQM(acc, p->multiplier[o], p->shift[o]) + p->out_zp;
            out[r * units + o] = clamp8(acc, p->act_min, p->act_max);
        }
}

static void pool(const tfl_params *p, const int8_t *in, int8_t *out, int average)
{
    const tfl_shape I = p->in, O = p->out;
    for (int b = 0; b < O.n; b++)
        for (int oy = 0; oy < O.h; oy++)
            for (int ox = 0; ox < O.w; ox++)
                for (int c = 0; c < O.c; c++) {
                    int32_t total = 0, best = -128, count = 0;
                    for (int ky = 0; ky < p->filter.h; ky++) {
                        int iy = oy * p->stride_h - p->pad_top + ky;
                        if (iy < 0 || iy >= I.h)
                            continue;
                        for (int kx = 0; kx < p->filter.w; kx++) {
                            int ix = ox * p->stride_w - p->pad_left + kx;
                            if (ix < 0 || ix >= I.w)
                                continue;
                            int32_t v = in[at(I, b, iy, ix, c)];
                            total += v;
                            best = v > best ? v : best;
                            count++;
                        }
                    }
                    int32_t v = best;
                    if (average) {
                        count = count ? count : 1;
                        v = total > 0 ? (total + count / 2) / count : (total - count / 2) / count;
                    }
                    out[at(O, b, oy, ox, c)] = clamp8(v, p->act_min, p->act_max);
                }
}

void tfl_average_pool(const tfl_params *p, const int8_t *in, int8_t *out) { pool(p, in, out, 1); }
void tfl_max_pool(const tfl_params *p, const int8_t *in, int8_t *out) { pool(p, in, out, 0); }

void tfl_add(const tfl_params *p, const int8_t *a, const int8_t *b, int8_t *out)
{
    const tfl_shape O = p->out;
    for (int n = 0; n < O.n; n++)
        for (int y = 0; y < O.h; y++)
            for (int x = 0; x < O.w; x++)
                for (int c = 0; c < O.c; c++) {
                    int32_t xa = (a[broadcast_at(p->in, n, y, x, c)] - p->in_zp) * (1 << p->left_shift);
                    int32_t xb = (b[broadcast_at(p->in2, n, y, x, c)] - p->in2_zp) * (1 << p->left_shift);
                    int32_t sum = MBQM(xa, p->multiplier[0], p->shift[0]) + MBQM(xb, p->multiplier[1], p->shift[1]);
                    int32_t v = MBQM(sum, p->multiplier[2], p->shift[2]) + p->out_zp;
                    out[at(O, n, y, x, c)] = clamp8(v, p->act_min, p->act_max);
                }
}

void tfl_mul(const tfl_params *p, const int8_t *a, const int8_t *b, int8_t *out)
{
    const tfl_shape O = p->out;
    for (int n = 0; n < O.n; n++)
        for (int y = 0; y < O.h; y++)
            for (int x = 0; x < O.w; x++)
                for (int c = 0; c < O.c; c++) {
                    int32_t product = (a[broadcast_at(p->in, n, y, x, c)] - p->in_zp)
                                      * (b[broadcast_at(p->in2, n, y, x, c)] - p->in2_zp);
                    int32_t v = MBQM(product, p->multiplier[0], p->shift[0]) + p->out_zp;
                    out[at(O, n, y, x, c)] = clamp8(v, p->act_min, p->act_max);
                }
}

void tfl_relu(const tfl_params *p, const int8_t *in, int8_t *out)
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++)
        out[i] = clamp8(MBQM(in[i] - p->in_zp, p->multiplier[0], p->shift[0]) + p->out_zp, p->act_min, p->act_max);
}

void tfl_relu6(const tfl_params *p, const int8_t *in, int8_t *out)
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++)
        out[i] = clamp8(in[i], p->act_min, p->act_max);
}

void tfl_requantize(const tfl_params *p, const int8_t *in, int8_t *out)
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++)
        out[i] = clamp8(MBQM(in[i] - p->in_zp, p->multiplier[0], p->shift[0]) + p->out_zp, -128, 127);
}

void tfl_quantize_float(const tfl_params *p, const float *in, int8_t *out)
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++) {
        float r = in[i] / p->scale;                       /* in float, as TFLite divides */
        double magnitude = (double)(r >= 0.0f ? r : -r);  /* round half away from zero, exactly */
        int64_t whole = magnitude > 1e9 ? 1000000000 : (int64_t)(magnitude + 0.5);
        int64_t v = (r >= 0.0f ? whole : -whole) + p->out_zp;
        out[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
}

void tfl_dequantize(const tfl_params *p, const int8_t *in, float *out)
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++)
        out[i] = (float)((double)p->scale * (double)(in[i] - p->in_zp));
}

void tfl_pad(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape I = p->in, O = p->out;
    const int32_t *pad = p->paddings;  /* before, after: n, h, w, c */
    for (int b = 0; b < O.n; b++)
        for (int y = 0; y < O.h; y++)
            for (int x = 0; x < O.w; x++)
                for (int c = 0; c < O.c; c++) {
                    int ib = b - pad[0], iy = y - pad[2], ix = x - pad[4], ic = c - pad[6];
                    int inside = ib >= 0 && ib < I.n && iy >= 0 && iy < I.h && ix >= 0 && ix < I.w && ic >= 0 && ic < I.c;
                    out[at(O, b, y, x, c)] = inside ? in[at(I, ib, iy, ix, ic)] : (int8_t)p->out_zp;
                }
}

void tfl_mean(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const tfl_shape I = p->in;
    const int32_t dims[4] = {I.n, I.h, I.w, I.c};
    int32_t kept[4], span[4], count = 1;
    for (int k = 0; k < 4; k++) {
        int reduced = (p->reduce_axes >> k) & 1;
        kept[k] = reduced ? 1 : dims[k];
        span[k] = reduced ? dims[k] : 1;
        count *= span[k];
    }
    for (int b = 0; b < kept[0]; b++)
        for (int y = 0; y < kept[1]; y++)
            for (int x = 0; x < kept[2]; x++)
                for (int c = 0; c < kept[3]; c++) {
                    int32_t sum = 0;
                    for (int rb = 0; rb < span[0]; rb++)
                        for (int ry = 0; ry < span[1]; ry++)
                            for (int rx = 0; rx < span[2]; rx++)
                                for (int rc = 0; rc < span[3]; rc++)
                                    sum += in[at(I, b + rb, y + ry, x + rx, c + rc)];
                    int32_t v = MBQM(sum - p->in_zp * count, p->multiplier[0], p->shift[0]) + p->out_zp;
                    *out++ = clamp8(v, -128, 127);
                }
}

void tfl_concat_part(const tfl_params *p, const int8_t *in, tfl_shape part, int32_t offset, int8_t *out)
{
    for (int b = 0; b < part.n; b++)
        for (int y = 0; y < part.h; y++)
            for (int x = 0; x < part.w; x++)
                for (int c = 0; c < part.c; c++) {
                    int o[4] = {b, y, x, c};
                    o[p->axis] += offset;
                    out[at(p->out, o[0], o[1], o[2], o[3])] = in[at(part, b, y, x, c)];
                }
}

/* ---- gemmlowp fixed point (softmax, logistic, tanh) ---- */

/* exp(a) for a <= 0 in Q(integer_bits).(31 - integer_bits), as Q0.31 */
static int32_t exp_on_negative_values(int32_t a, int integer_bits)
{
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int fractional = 31 - integer_bits;
    const int32_t quarter = 1 << (fractional - 2), mask = quarter - 1;
    int32_t reduced = (int32_t)((uint32_t)(a & mask) - (uint32_t)quarter);
    int32_t x = (int32_t)((uint32_t)shift_left_saturating(reduced, integer_bits) + (1u << 28));
    int32_t x2 = srdhm(x, x), x3 = srdhm(x2, x), x4 = srdhm(x2, x2);
    int32_t x4_over_4 = rdbp(x4, 2);
    int32_t poly = rdbp((int32_t)((uint32_t)srdhm((int32_t)((uint32_t)x4_over_4 + (uint32_t)x3), 715827883) + (uint32_t)x2), 1);
    int32_t result = (int32_t)(1895147668u + (uint32_t)srdhm(1895147668, (int32_t)((uint32_t)x + (uint32_t)poly)));
    int32_t remainder = (int32_t)((uint32_t)reduced - (uint32_t)a);
    for (int k = 0; k < 7; k++) {
        int exponent = k - 2;
        if (integer_bits > exponent && (remainder & (1 << (fractional + exponent))))
            result = srdhm(result, barrel[k]);
    }
    return a == 0 ? INT32_MAX : result;
}

/* 2 / (1 + a) for a in [0, 1] (Q0.31), as Q2.29: three Newton-Raphson steps */
static int32_t newton_reciprocal_of_half_sum(int32_t a)
{
    int64_t total = (int64_t)a + INT32_MAX;
    int32_t half = (int32_t)(total >= 0 ? (total + 1) / 2 : (total - 1) / 2);
    int32_t x = (int32_t)(1515870810u + (uint32_t)srdhm(half, -1010580540));
    for (int i = 0; i < 3; i++) {
        int32_t product = srdhm(half, x);
        x = (int32_t)((uint32_t)x + (uint32_t)shift_left_saturating(srdhm(x, (int32_t)((1u << 29) - (uint32_t)product)), 2));
    }
    return x;
}

static int32_t one_over_one_plus_x(int32_t a)
{
    return shift_left_saturating(newton_reciprocal_of_half_sum(a), 1);
}

static int leading_zeros(uint32_t x)
{
    int n = 0;
    if (!x)
        return 32;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

void tfl_softmax(const tfl_params *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->out.c, rows = elements(p->out) / depth;
    for (int r = 0; r < rows; r++) {
        const int8_t *x = in + r * depth;
        int8_t *y = out + r * depth;
        int32_t max = -128;
        for (int c = 0; c < depth; c++)
            max = x[c] > max ? x[c] : max;
        uint32_t sum = 0;
        for (int c = 0; c < depth; c++) {
            int32_t diff = x[c] - max;
            if (diff >= p->diff_min)
                sum += (uint32_t)rdbp(exp_on_negative_values(srdhm(diff * (1 << p->left_shift), p->input_multiplier), 5), 12);
        }
        int headroom = leading_zeros(sum);
        int bits_over_unit = 12 - headroom;
        int32_t scale = one_over_one_plus_x((int32_t)((sum << headroom) - (1u << 31)));
        for (int c = 0; c < depth; c++) {
            int32_t diff = x[c] - max;
            if (diff >= p->diff_min) {
                int32_t e = exp_on_negative_values(srdhm(diff * (1 << p->left_shift), p->input_multiplier), 5);
                y[c] = clamp8(rdbp(srdhm(scale, e), bits_over_unit + 31 - 8) - 128, -128, 127);
            } else {
                y[c] = -128;
            }
        }
    }
}

/* logistic and tanh: inputs beyond the radius saturate; the rest go to Q4.27 and `curve` */
static void saturating_curve(const tfl_params *p, const int8_t *in, int8_t *out, int8_t (*curve)(int32_t q4))
{
    for (int32_t i = 0, n = elements(p->out); i < n; i++) {
        int32_t centred = in[i] - p->in_zp;
        if (centred <= -p->diff_min)
            out[i] = -128;
        else if (centred >= p->diff_min)
            out[i] = 127;
        else
            out[i] = curve(MBQM(centred, p->input_multiplier, p->left_shift));
    }
}

/* 1 / (1 + exp(-x)); output scale 1/256, zero point -128 */
static int8_t logistic_q4(int32_t q4)
{
    int32_t magnitude = q4 > 0 ? q4 : -q4;
    int32_t result = one_over_one_plus_x(exp_on_negative_values(-magnitude, 4));
    if (q4 <= 0)
        result = (int32_t)((uint32_t)INT32_MAX - (uint32_t)result);
    if (q4 == 0)
        result = 1 << 30;
    return clamp8(rdbp(result, 23) - 128, -128, 127);
}

/* tanh from exp(-2|x|); output scale 1/128, zero point 0 */
static int8_t tanh_q4(int32_t q4)
{
    int32_t magnitude = q4 > 0 ? q4 : -q4;
    int32_t t = shift_left_saturating((int32_t)((uint32_t)newton_reciprocal_of_half_sum(
        exp_on_negative_values(-magnitude, 5)) - (1u << 29)), 2);
    int32_t result = q4 == 0 ? 0 : q4 < 0 ? -t : t;
    return clamp8(rdbp(result, 24), -128, 127);
}

void tfl_logistic(const tfl_params *p, const int8_t *in, int8_t *out) { saturating_curve(p, in, out, logistic_q4); }
void tfl_tanh(const tfl_params *p, const int8_t *in, int8_t *out) { saturating_curve(p, in, out, tanh_q4); }

void tfl_copy(const int8_t *in, int8_t *out, uint32_t bytes)
{
    if (in != out)
        memmove(out, in, bytes);
}
