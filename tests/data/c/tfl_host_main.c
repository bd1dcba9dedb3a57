/* Host driver for generated TFLite models (tests): reads each input's bytes from the files named
 * on the command line into the arena, runs tfl_model_run, writes every output's bytes to stdout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern const uint32_t tfl_model_arena_bytes, tfl_model_input_count, tfl_model_output_count;
extern const uint32_t tfl_model_input_offsets[], tfl_model_input_bytes[];
extern const uint32_t tfl_model_output_offsets[], tfl_model_output_bytes[];
void tfl_model_run(uint8_t *arena);

int main(int argc, char **argv)
{
    uint8_t *arena = aligned_alloc(16, (tfl_model_arena_bytes + 15) / 16 * 16);
    if (!arena || (uint32_t)argc != tfl_model_input_count + 1)
        return 2;
    for (uint32_t i = 0; i < tfl_model_input_count; i++) {
        FILE *f = fopen(argv[i + 1], "rb");
        if (!f || fread(arena + tfl_model_input_offsets[i], 1, tfl_model_input_bytes[i], f) != tfl_model_input_bytes[i])
            return 3;
        fclose(f);
    }
    tfl_model_run(arena);
    for (uint32_t i = 0; i < tfl_model_output_count; i++)
        fwrite(arena + tfl_model_output_offsets[i], 1, tfl_model_output_bytes[i], stdout);
    return 0;
}
