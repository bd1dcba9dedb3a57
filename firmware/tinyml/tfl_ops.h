/*
 * tfl_ops.h - int8 layers with TensorFlow Lite's integer arithmetic, bit for bit (the oracle is
 * src/mcusim/tinyml/tflite_reference.py, itself held against the TFLite Micro interpreter).
 * `mcusim model build` generates a model as direct calls to these, with every tensor at an
 * offset of one arena planned at build time (src/mcusim/tinyml/tflite_codegen.py).
 *
 * Requantization: a real multiplier is a Q0.31 fraction and a power-of-two exponent; x * M is
 * the saturating rounding doubling high multiply of x (shifted left by a positive exponent) and
 * the fraction, then a rounding right shift by a negative exponent (ties away from zero).
 * Tensors are NHWC; a lower-rank tensor is padded with leading 1s.
 */
#ifndef TFL_OPS_H
#define TFL_OPS_H

#include <stdint.h>

typedef struct {
    int32_t n, h, w, c;
} tfl_shape;

typedef struct {
    tfl_shape in, in2, out, filter;  /* filter: conv [oc kh kw ic], depthwise [1 kh kw oc], fc [out depth 1 1] */
    int32_t in_zp, in2_zp, out_zp;
    int32_t act_min, act_max;        /* the fused activation's output range */
    int32_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int32_t depth_multiplier;
    const int8_t *weights;
    const int32_t *bias;             /* may be 0 */
    const int32_t *folded_bias;      /* opt conv, fully connected: bias - input zero point x sum of the weights */
    int8_t *scratch;                 /* opt conv: two output pixels' taps (kh x kw x input channels bytes each,
                                        the second at that rounded up to a multiple of 4) */
    const int32_t *multiplier, *shift;  /* per output channel; add: input 1, input 2, output */
    int32_t left_shift;              /* add: headroom bits; softmax, logistic, tanh: input shift */
    int32_t input_multiplier;        /* softmax, logistic, tanh */
    int32_t diff_min;                /* softmax: smallest difference counted; logistic, tanh: input radius */
    int32_t axis;                    /* concatenation: 0..3 in the 4-D view */
    const int32_t *paddings;         /* pad: before, after for n, h, w, c */
    int32_t reduce_axes;             /* mean: bit k set when axis k (n, h, w, c) is averaged */
    float scale;                     /* quantize (from float): output scale; dequantize: input scale */
} tfl_params;

int32_t tfl_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift);

void tfl_conv(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_depthwise(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_fully_connected(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_average_pool(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_max_pool(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_add(const tfl_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void tfl_mul(const tfl_params *p, const int8_t *a, const int8_t *b, int8_t *out);
void tfl_relu(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_relu6(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_requantize(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_quantize_float(const tfl_params *p, const float *in, int8_t *out);
void tfl_dequantize(const tfl_params *p, const int8_t *in, float *out);
/* Mean over p->reduce_axes; p->multiplier[0] has 1/count folded in (tflite_reference.mean_multiplier). */
void tfl_mean(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_pad(const tfl_params *p, const int8_t *in, int8_t *out);
/* One input of a concatenation: `part` placed at `offset` along p->axis of the output. */
void tfl_concat_part(const tfl_params *p, const int8_t *in, tfl_shape part, int32_t offset, int8_t *out);
void tfl_softmax(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_logistic(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_tanh(const tfl_params *p, const int8_t *in, int8_t *out);
/* The SIMD variants (tfl_ops_opt.c): the same results, with the DSP instructions. */
void tfl_conv_opt(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_depthwise_opt(const tfl_params *p, const int8_t *in, int8_t *out);
void tfl_fully_connected_opt(const tfl_params *p, const int8_t *in, int8_t *out);
/* Reshape: the bytes unchanged (nothing to do when the planner put both at one offset). */
void tfl_copy(const int8_t *in, int8_t *out, uint32_t bytes);

#endif /* TFL_OPS_H */
