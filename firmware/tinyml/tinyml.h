/*
 * tinyml.h - the kit's int8 inference kernels and the layer table a generated model runs.
 *
 * Quantization (the TensorFlow Lite int8 scheme; the numpy oracle is
 * src/mcusim/tinyml/arithmetic.py, which these kernels must match bit for bit):
 * activations int8 with a zero point per tensor, weights int8 symmetric per output
 * channel, bias int32; acc = bias + sum((x - zp_in) * w), then
 * out = clamp(zp_out + tinyml_requantize(acc, multiplier, shift), act_min, act_max).
 *
 * Two builds: the plain C reference kernels (matmul_ref.c), and the optimized ones
 * (matmul_opt.c) for convolution, pointwise convolution and fully connected layers (partial
 * im2col into int16, a 2x2 SMLAD kernel of two output pixels x two channels with SXTB16
 * widening, a scalar path for what does not fill it) and depthwise convolution (four
 * channels at a time with SXTAB16 and SMLABB/SMLATT on interior pixels).
 */
#ifndef TINYML_H
#define TINYML_H

#include <stdint.h>

enum tinyml_op {
    TINYML_CONV = 1,      /* also pointwise (1x1) */
    TINYML_DEPTHWISE = 2,
    TINYML_FULLY_CONNECTED = 3,
    TINYML_AVERAGE_POOL = 4,
    TINYML_MAX_POOL = 5,
    TINYML_ADD = 6,
    TINYML_SOFTMAX = 7,
};

typedef struct {
    const char *name;
    uint8_t op;
    int8_t act_min, act_max;
    uint8_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
    uint16_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t zp_in, zp_in2, zp_out;
    const int8_t *weights;       /* conv: out_c x kh x kw x in_c; depthwise: kh x kw x c; fc: out x in */
    const int32_t *bias;
    const int32_t *multiplier;   /* per output channel (add: a, b, out; softmax: unused) */
    const int32_t *shift;
    const int32_t *table;        /* softmax: exp lookup table, 256 entries */
    uint32_t in, in2, out;       /* arena offsets */
    uint32_t macs, bytes;        /* for reports: multiply-accumulates and bytes moved */
} tinyml_layer;

/* round(acc * multiplier / 2^(31 - shift)), half up, saturated to int32; shift in [-31, 30]. */
static inline int32_t tinyml_requantize(int32_t acc, int32_t multiplier, int32_t shift)
{
    int total = 31 - shift;
    int64_t product = (int64_t)acc * multiplier;
    int64_t result = (product + ((int64_t)1 << (total - 1))) >> total;
    return (int32_t)(result > INT32_MAX ? INT32_MAX : result < INT32_MIN ? INT32_MIN : result);
}

static inline int8_t tinyml_clamp(int32_t value, int8_t low, int8_t high)
{
    return (int8_t)(value < low ? low : value > high ? high : value);
}

/* A generated model (firmware/models, src/mcusim/tinyml/generate.py). */
typedef struct {
    const char *name;
    const tinyml_layer *layers;
    int layer_count;
    int8_t *arena;               /* planned at build time: tensors alive together never overlap */
    uint32_t arena_bytes;
    const int8_t *input;         /* the fixed test input ... */
    uint32_t input_offset, input_bytes;
    const int8_t *golden;        /* ... and the output the numpy oracle computed for it */
    uint32_t output_offset, output_bytes;
    uint32_t macs;
    const uint32_t *layer_checksums;  /* tinyml_checksum of every layer's output, from the oracle */
} tinyml_model;

extern const tinyml_model tinyml_model_under_test;

/* Kernels (arena is the base of every offset). */
void tinyml_conv(const tinyml_layer *l, int8_t *arena);
void tinyml_depthwise(const tinyml_layer *l, int8_t *arena);
void tinyml_fully_connected(const tinyml_layer *l, int8_t *arena);
void tinyml_pool(const tinyml_layer *l, int8_t *arena);
void tinyml_add(const tinyml_layer *l, int8_t *arena);
void tinyml_softmax(const tinyml_layer *l, int8_t *arena);

/* One depthwise output before requantization, with the padding checks (kernels.c). */
int32_t tinyml_depthwise_accumulate(const tinyml_layer *l, const int8_t *in, int oy, int ox, int ch);

/* Run every layer in order, each marked as a region; or one layer, unmarked. */
void tinyml_run(const tinyml_layer *layers, int count, int8_t *arena);
void tinyml_run_layer(const tinyml_layer *l, int8_t *arena);

/* FNV-1a (32-bit) of `n` bytes: the per-layer check of the oracle's outputs
 * (arithmetic.checksum). */
uint32_t tinyml_checksum(const int8_t *data, uint32_t n);

#endif /* TINYML_H */
