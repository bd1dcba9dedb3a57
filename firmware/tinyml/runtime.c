/* Runs a generated model's layer table, each layer marked as a region (include/mcusim.h). */
#include "mcusim.h"
#include "tinyml.h"

void tinyml_run_layer(const tinyml_layer *l, int8_t *arena)
{
    switch (l->op) {
    case TINYML_CONV: tinyml_conv(l, arena); break;
    case TINYML_DEPTHWISE: tinyml_depthwise(l, arena); break;
    case TINYML_FULLY_CONNECTED: tinyml_fully_connected(l, arena); break;
    case TINYML_AVERAGE_POOL:
    case TINYML_MAX_POOL: tinyml_pool(l, arena); break;
    case TINYML_ADD: tinyml_add(l, arena); break;
    case TINYML_SOFTMAX: tinyml_softmax(l, arena); break;
    default: break;
    }
}

void tinyml_run(const tinyml_layer *layers, int count, int8_t *arena)
{
    for (int i = 0; i < count; i++) {
        mcusim_region_begin(layers[i].name);
        tinyml_run_layer(&layers[i], arena);
        mcusim_region_end(layers[i].name);
    }
}

uint32_t tinyml_checksum(const int8_t *data, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)data[i]) * 16777619u;
    return h;
}
