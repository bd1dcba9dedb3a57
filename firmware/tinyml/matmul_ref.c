/* Convolution, depthwise convolution and fully connected layers in plain C (the reference build). */
#include "tinyml.h"

void tinyml_conv(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int c = l->in_c, taps = l->kernel_h * l->kernel_w * c;
    for (int oy = 0; oy < l->out_h; oy++) {
        for (int ox = 0; ox < l->out_w; ox++) {
            for (int oc = 0; oc < l->out_c; oc++) {
                const int8_t *w = l->weights + oc * taps;
                int32_t acc = l->bias[oc];
                for (int ky = 0; ky < l->kernel_h; ky++) {
                    int iy = oy * l->stride_h - l->pad_h + ky;
                    if (iy < 0 || iy >= l->in_h)
                        continue;
                    for (int kx = 0; kx < l->kernel_w; kx++) {
                        int ix = ox * l->stride_w - l->pad_w + kx;
                        if (ix < 0 || ix >= l->in_w)
                            continue;
                        const int8_t *x = in + (iy * l->in_w + ix) * c;
                        const int8_t *wk = w + (ky * l->kernel_w + kx) * c;
                        for (int ch = 0; ch < c; ch++)
                            acc += (x[ch] - l->zp_in) * wk[ch];
                    }
                }
                int32_t v = l->zp_out + tinyml_requantize(acc, l->multiplier[oc], l->shift[oc]);
                out[(oy * l->out_w + ox) * l->out_c + oc] = tinyml_clamp(v, l->act_min, l->act_max);
            }
        }
    }
}

void tinyml_fully_connected(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    const int n = l->in_h * l->in_w * l->in_c;
    for (int o = 0; o < l->out_c; o++) {
        const int8_t *w = l->weights + o * n;
        int32_t acc = l->bias[o];
        for (int i = 0; i < n; i++)
            acc += (in[i] - l->zp_in) * w[i];
        int32_t v = l->zp_out + tinyml_requantize(acc, l->multiplier[o], l->shift[o]);
        out[o] = tinyml_clamp(v, l->act_min, l->act_max);
    }
}

void tinyml_depthwise(const tinyml_layer *l, int8_t *arena)
{
    const int8_t *in = arena + l->in;
    int8_t *out = arena + l->out;
    for (int oy = 0; oy < l->out_h; oy++)
        for (int ox = 0; ox < l->out_w; ox++)
            for (int ch = 0; ch < l->in_c; ch++) {
                int32_t acc = tinyml_depthwise_accumulate(l, in, oy, ox, ch);
                int32_t v = l->zp_out + tinyml_requantize(acc, l->multiplier[ch], l->shift[ch]);
                out[(oy * l->out_w + ox) * l->in_c + ch] = tinyml_clamp(v, l->act_min, l->act_max);
            }
}
