/*
 * bench-float: single-precision multiply-accumulate and divide loop (VMLA, VDIV, VADD), about
 * 10 million instructions. Silent; exits 0 when the sum of a geometric series matches its
 * closed form to float precision.
 */
#include <stdint.h>
#include "mcusim.h"

#define TERMS 64
#define ROUNDS 20000

int main(void)
{
    volatile float ratio = 0.5f;
    float total = 0.0f;
    for (int r = 0; r < ROUNDS; r++) {
        float term = 1.0f, sum = 0.0f;
        for (int i = 0; i < TERMS; i++) {
            sum = sum + term * 1.0f;
            term = term * ratio;
        }
        total += sum / (float)ROUNDS;
    }
    /* 1 + 1/2 + 1/4 + ... = 2 */
    float error = total - 2.0f;
    mcusim_exit(error < 1e-3f && error > -1e-3f ? 0 : 1);
}
