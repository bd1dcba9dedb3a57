/*
 * A generated TinyML model (build/gen/<model>.c) on the kit's kernels: copies the fixed test
 * input into the planned arena, runs one inference, prints the output scores and whether they
 * equal the golden output the numpy oracle computed (exit 0), or where they differ (exit 1).
 */
#include <stdio.h>
#include <string.h>
#include "mcusim.h"
#include "tinyml.h"

#ifndef TINYML_VARIANT
#error "TINYML_VARIANT must be defined by the build (ref or opt)"
#endif

extern const mcusim_region_info_t mcusim_region_info[];

int main(void)
{
    __asm__ volatile("" : : "r"(mcusim_region_info));  /* keep the table for mcusim (--gc-sections) */
    const tinyml_model *m = &tinyml_model_under_test;
    printf("model %s (%s kernels): %u layers, %lu MACs, arena %lu bytes\n", m->name, TINYML_VARIANT,
           (unsigned)m->layer_count, (unsigned long)m->macs, (unsigned long)m->arena_bytes);
    memcpy(m->arena + m->input_offset, m->input, m->input_bytes);
    mcusim_region_begin("inference");
    tinyml_run(m->layers, m->layer_count, m->arena);
    mcusim_region_end("inference");
    const int8_t *out = m->arena + m->output_offset;
    uint32_t shown = m->output_bytes < 16 ? m->output_bytes : 16;
    printf("scores:");
    for (uint32_t i = 0; i < shown; i++)
        printf(" %d", out[i]);
    printf(m->output_bytes > shown ? " ... (%lu values)\n" : "\n", (unsigned long)m->output_bytes);
    for (uint32_t i = 0; i < m->output_bytes; i++) {
        if (out[i] != m->golden[i]) {
            printf("MISMATCH at %lu: %d, golden %d\n", (unsigned long)i, out[i], m->golden[i]);
            return 1;
        }
    }
    printf("output matches the golden output\n");
    /* A second, unmarked pass checks every layer's output against the oracle's. */
    memcpy(m->arena + m->input_offset, m->input, m->input_bytes);
    for (int i = 0; i < m->layer_count; i++) {
        const tinyml_layer *l = &m->layers[i];
        tinyml_run_layer(l, m->arena);
        uint32_t n = (uint32_t)l->out_h * l->out_w * l->out_c;
        if (tinyml_checksum(m->arena + l->out, n) != m->layer_checksums[i]) {
            printf("MISMATCH in layer %s: its output differs from the oracle's\n", l->name);
            return 1;
        }
    }
    printf("every layer matches the oracle\n");
    return 0;
}
