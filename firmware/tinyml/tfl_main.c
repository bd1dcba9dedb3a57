/*
 * A generated TFLite model (tflite_codegen.py) on a board: copies the test input into the
 * planned arena, runs one inference marked as the region "inference" (each layer inside it as
 * "<index>_<OP>"), and exits 0. mcusim reads the outputs from `tfl_arena` after the run.
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

int main(void)
{
    __asm__ volatile("" : : "r"(mcusim_region_info));  /* keep the table for mcusim (--gc-sections) */
    for (uint32_t i = 0; i < tfl_model_input_count; i++)
        memcpy(tfl_arena + tfl_model_input_offsets[i], tfl_model_test_inputs[i], tfl_model_input_bytes[i]);
    mcusim_region_begin("inference");
    tfl_model_run(tfl_arena);
    mcusim_region_end("inference");
    return 0;
}
