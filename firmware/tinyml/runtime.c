/* Runs a generated model's layer table, each layer marked as a region (include/mcusim.h). */
#include "mcusim.h"
#include "tinyml.h"

void tinyml_run(const tinyml_layer *layers, int count, int8_t *arena)
{
    for (int i = 0; i < count; i++) {
        const tinyml_layer *l = &layers[i];
        mcusim_region_begin(l->name);
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
        mcusim_region_end(l->name);
    }
}
