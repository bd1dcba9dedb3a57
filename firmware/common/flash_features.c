/* Defaults for boards with one flash path and nothing to switch on it. */
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
