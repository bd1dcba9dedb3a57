/* Defaults for boards with one flash path, nothing to switch on it and no cached RAM. */
#include "board.h"

__attribute__((weak)) int board_flash_features(uint32_t features)
{
    return features == 0 ? 0 : -1;
}

__attribute__((weak)) uintptr_t board_flash_alias(const void *code)
{
    (void)code;
    return 0;
}

__attribute__((weak)) int board_flash_alias_features(uint32_t features)
{
    return features == 0 ? 0 : -1;
}

__attribute__((weak)) void *board_cached_ram(size_t bytes)
{
    (void)bytes;
    return NULL;
}
