/*
 * A generated TFLite model (tflite_codegen.py) on a board: copies the test input into the
 * planned arena, runs one inference marked as the region "inference" (each layer inside it as
 * "<index>_<OP>"), then compares the outputs with the reference's when the build embedded them
 * (the kit's examples and `mcusim model run` do): exit 0 when they match, 1 when not. Code
 * placed in ITCM is copied there first. mcusim also reads the outputs from `tfl_arena`.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcusim.h"

extern const uint32_t tfl_model_arena_bytes, tfl_model_input_count, tfl_model_output_count;
extern const uint32_t tfl_model_input_offsets[], tfl_model_input_bytes[];
extern const uint32_t tfl_model_output_offsets[], tfl_model_output_bytes[];
extern const uint8_t *const tfl_model_test_inputs[];
extern const uint32_t tfl_model_expected_count;          /* 0: nothing to compare with */
extern const uint8_t *const tfl_model_expected_outputs[];
extern const mcusim_region_info_t mcusim_region_info[];
extern uint8_t tfl_arena[];
void tfl_model_run(uint8_t *arena);
/* Set by the linker script only when the placement puts the model's code in ITCM (model_link.py). */
extern uint32_t _sitcm_text[] __attribute__((weak)), _eitcm_text[] __attribute__((weak));
extern const uint32_t _litcm_text[] __attribute__((weak));

/* The first byte where the outputs differ from the reference's, printed; 0 when none does. */
static int compare_with_reference(void)
{
    for (uint32_t i = 0; i < tfl_model_expected_count; i++) {
        const uint8_t *ours = tfl_arena + tfl_model_output_offsets[i], *theirs = tfl_model_expected_outputs[i];
        for (uint32_t j = 0; j < tfl_model_output_bytes[i]; j++) {
            if (ours[j] != theirs[j]) {
                printf("MISMATCH: output %lu byte %lu is %d, the reference's %d\n", (unsigned long)i,
                       (unsigned long)j, (int8_t)ours[j], (int8_t)theirs[j]);
                return 1;
            }
        }
    }
    return 0;
}

int main(void)
{
    __asm__ volatile("" : : "r"(mcusim_region_info));  /* keep the table for mcusim (--gc-sections) */
    /* code placed in ITCM: copied from flash before it runs, as vendor start-up code copies RAM functions */
    const uint32_t *from = _litcm_text;
    for (uint32_t *to = _sitcm_text; to < _eitcm_text;)
        *to++ = *from++;
    for (uint32_t i = 0; i < tfl_model_input_count; i++)
        memcpy(tfl_arena + tfl_model_input_offsets[i], tfl_model_test_inputs[i], tfl_model_input_bytes[i]);
    mcusim_region_begin("inference");
    tfl_model_run(tfl_arena);
    mcusim_region_end("inference");
    printf("inference done: %lu output(s), arena %lu bytes\n", (unsigned long)tfl_model_output_count,
           (unsigned long)tfl_model_arena_bytes);
    if (tfl_model_expected_count == 0) {
        printf("no reference output embedded: nothing compared\n");
        return 0;
    }
    if (compare_with_reference())
        return 1;
    printf("output matches the reference\n");
    return 0;
}
