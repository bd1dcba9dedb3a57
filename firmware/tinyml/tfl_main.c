/*
 * A generated TFLite model (tflite_codegen.py) on a board: copies the test input into the
 * planned arena, runs one inference marked as the region "inference" (each layer inside it as
 * "<index>_<OP>"), and exits 0. Code placed in ITCM is copied there first. mcusim reads the
 * outputs from `tfl_arena` after the run.
 */
#include <stdint.h>
#include <string.h>

#include "mcusim.h"

extern const uint32_t tfl_model_arena_bytes, tfl_model_input_count;
extern const uint32_t tfl_model_input_offsets[], tfl_model_input_bytes[];
extern const uint8_t *const tfl_model_test_inputs[];
extern const mcusim_region_info_t mcusim_region_info[];
extern uint8_t tfl_arena[];
void tfl_model_run(uint8_t *arena);
/* Set by the linker script only when the placement puts the model's code in ITCM (model_link.py). */
extern uint32_t _sitcm_text[] __attribute__((weak)), _eitcm_text[] __attribute__((weak));
extern const uint32_t _litcm_text[] __attribute__((weak));

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
    return 0;
}
