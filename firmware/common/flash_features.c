/* Default board_flash_features: a flash interface with nothing to switch. */
#include "board.h"

__attribute__((weak)) int board_flash_features(uint32_t features)
{
    return features == 0 ? 0 : -1;
}
