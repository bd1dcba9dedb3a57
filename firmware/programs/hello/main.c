/*
 * hello: one line over semihosting (newlib rdimon), exit status 0.
 */
#include <stdio.h>
#include "board.h"

int main(void)
{
    printf("Hello from mcusim on %s\n", BOARD_NAME);
    return 0;
}
