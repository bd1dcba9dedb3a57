/*
 * bench-table: walks a constant table kept in flash (like model weights or a lookup table),
 * data-dependent indices, about 10 million instructions. Silent; exits 0 when the sum
 * equals the one computed from the formula that generated the table.
 */
#include <stdint.h>
#include "mcusim.h"

#define ENTRIES 4096
#define STEPS 1000000

#define SQUARE(i) ((uint32_t)(i) * (uint32_t)(i))
#define ROW4(i) SQUARE(i), SQUARE(i + 1), SQUARE(i + 2), SQUARE(i + 3)
#define ROW16(i) ROW4(i), ROW4(i + 4), ROW4(i + 8), ROW4(i + 12)
#define ROW64(i) ROW16(i), ROW16(i + 16), ROW16(i + 32), ROW16(i + 48)
#define ROW256(i) ROW64(i), ROW64(i + 64), ROW64(i + 128), ROW64(i + 192)
#define ROW1024(i) ROW256(i), ROW256(i + 256), ROW256(i + 512), ROW256(i + 768)

static const uint32_t squares[ENTRIES] = { ROW1024(0), ROW1024(1024), ROW1024(2048), ROW1024(3072) };

int main(void)
{
    uint32_t index = 1, sum = 0, check = 0;
    for (int i = 0; i < STEPS; i++) {
        index = (index * 1103515245u + 12345u) & (ENTRIES - 1);
        sum += squares[index];
        check += SQUARE(index);
    }
    mcusim_exit(sum == check ? 0 : 1);
}
