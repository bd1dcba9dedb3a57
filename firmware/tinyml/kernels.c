/* The kernels both builds share: pooling, add, softmax; and one depthwise output. */
#include "tinyml.h"

int32_t tinyml_depthwise_accumulate(const tinyml_layer *l, const int8_t *in, int oy, int ox, int ch)
{
    int32_t acc = l->bias[ch];
    for (int ky = 0; ky < l->kernel_h; ky++) {
        int iy = oy * l->stride_h - l->pad_h + ky;
        if (iy < 0 || iy >= l->in_h)
            continue;
        for (int kx = 0; kx < l->kernel_w; kx++) {
            int ix = ox * l->stride_w - l->pad_w + kx;
            if (ix < 0 || ix >= l->in_w)
                continue;
            acc += (in[(iy * l->in_w + ix) * l->in_c + ch] - l->zp_in) * l->weights[(ky * l->kernel_w + kx) * l->in_c + ch];
        }
    }
    return acc;
}

/* C division truncates toward zero: round half away from zero, as the oracle. */
static int32_t round_divide(int32_t total, int32_t count)
{
    return total >= 0 ? (total + count / 2) / count : (total - count / 2) / count;
}

void tinyml_pool(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int c = l->in_c;
    for (int oy = 0; oy < l->out_h; oy++) {
        for (int ox = 0; ox < l->out_w; ox++) {
            for (int ch = 0; ch < c; ch++) {
                int32_t total = 0, best = -128;
                for (int ky = 0; ky < l->kernel_h; ky++) {
                    for (int kx = 0; kx < l->kernel_w; kx++) {
                        int32_t x = in[((oy * l->stride_h + ky) * l->in_w + ox * l->stride_w + kx) * c + ch];
                        total += x;
                        best = x > best ? x : best;
                    }
                }
                int32_t v = l->op == TINYML_MAX_POOL ? best : round_divide(total, l->kernel_h * l->kernel_w);
                out[(oy * l->out_w + ox) * c + ch] = tinyml_clamp(v, l->act_min, l->act_max);
            }
        }
    }
}

#define ADD_LEFT_SHIFT 20  /* arithmetic.ADD_LEFT_SHIFT */

void tinyml_add(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *a = arena + l->in, *b = arena + l->in2;
    int8_t *out = arena + l->out;
    const int32_t *m = l->multiplier, *s = l->shift;  /* a, b, out */
    int n = l->out_h * l->out_w * l->out_c;
    for (int i = 0; i < n; i++) {
        int32_t xa = tinyml_requantize((a[i] - l->zp_in) * (1 << ADD_LEFT_SHIFT), m[0], s[0]);
        int32_t xb = tinyml_requantize((b[i] - l->zp_in2) * (1 << ADD_LEFT_SHIFT), m[1], s[1]);
        out[i] = tinyml_clamp(l->zp_out + tinyml_requantize(xa + xb, m[2], s[2]), l->act_min, l->act_max);
    }
}

/* exp by table (arithmetic.softmax_table), output scale 1/256, zero point -128. */
void tinyml_softmax(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    int n = l->out_h * l->out_w * l->out_c;
    int32_t max = -128;
    for (int i = 0; i < n; i++)
        max = in[i] > max ? in[i] : max;
    uint32_t total = 0;
    for (int i = 0; i < n; i++)
        total += (uint32_t)l->table[max - in[i]];
    for (int i = 0; i < n; i++) {
        uint32_t e = (uint32_t)l->table[max - in[i]];
        int32_t v = (int32_t)(((e << 8) + total / 2) / total) - 128;
        out[i] = tinyml_clamp(v, -128, 127);
    }
}
