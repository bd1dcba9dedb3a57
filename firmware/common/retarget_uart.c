/*
 * retarget_uart.c - newlib system calls for programs linked with
 * nosys.specs that print on the board's console UART: stdout (1) and
 * stderr (2) go to console_write(); everything else fails cleanly.
 * Defining these here also keeps libnosys' "not implemented" link
 * warnings away.
 */
#include <errno.h>
#include <sys/stat.h>
#include "board.h"

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    console_write(buf, (size_t)len);
    return len;
}

int _read(int fd, char *buf, int len)
{
    (void)fd; (void)buf; (void)len;
    errno = EBADF;
    return -1;
}

int _close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

int _lseek(int fd, int off, int whence)
{
    (void)fd; (void)off; (void)whence;
    errno = ESPIPE;
    return -1;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    return fd == 1 || fd == 2;
}
