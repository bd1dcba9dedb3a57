/*
 * Linked with newlib's own rdimon crt0 (no -nostartfiles, --specs=rdimon.specs) and a linker
 * script without a __stack symbol: crt0 sets SP from semihosting SYS_HEAPINFO and builds
 * argc/argv from SYS_GET_CMDLINE. The vector table holds only the initial SP and the reset
 * vector (crt0's _start). Prints its arguments, uses the heap and the stack, exits with argc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char _estack[];  /* the linker script's end of RAM */
void _start(void);
#ifdef ZERO_SP  /* some minimal vector tables leave the SP word 0: crt0 sets SP before any use */
__attribute__((section(".isr_vector"), used)) static void *const vectors[2] = {0, (void *)_start};
#else
__attribute__((section(".isr_vector"), used)) static void *const vectors[2] = {_estack, (void *)_start};
#endif

/* a few KB of stack: each level keeps 64 bytes live */
static unsigned depth(unsigned n)
{
    volatile char pad[64];
    pad[0] = (char)n;
    return n ? depth(n - 1) + 1 + (unsigned)(pad[0] - (char)n) : 0;
}

int main(int argc, char **argv)
{
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=<%s>\n", i, argv[i]);
    size_t size = 32 * 1024;
    char *block = malloc(size);
    if (block)
        memset(block, 0x5A, size);
    printf("heap: %s\n", block && block[size - 1] == 0x5A ? "ok" : "failed");
    printf("stack: %u\n", depth(200));
    return argc;
}
