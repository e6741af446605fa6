/*
 * The locality order's one hazard, told at create: it shuffles shards, then samples within a
 * window of shards, so a batch draws from a few shards only. Over shards packed class by class
 * (an ImageFolder written folder by folder) its batches hold a few classes (measured on
 * Fashion-MNIST sorted by label, window:1: 1.5 labels per batch of 256, test accuracy 0.17
 * against 0.86; docs/objectstore.md). The manifest has every label: one pass counts the classes
 * of each shard, and a warning says so when the average shard holds under half of them.
 */
#include "runtime/loader/loader_impl.h"
#include "base/log.h"
#include <inttypes.h>
#include <stdlib.h>

/** Classes told apart (labels beyond are not counted). */
#define ORDER_CHECK_CLASSES 4096

/* Distinct labels of shard @p s, marking them in @p seen (cleared again). */
static uint32_t shard_classes(ingot_loader_h l, uint32_t s, uint8_t *seen, uint8_t *all)
{
    ingot_shard_info_t si;
    uint32_t n = 0;
    if (ingot_manifest_shard_get(l->manifest, s, &si) != INGOT_OK) {
        return 0;
    }
    for (uint64_t i = si.first_sample; i < si.first_sample + si.sample_count; i++) {
        ingot_sample_info_t info;
        if (ingot_manifest_sample_get(l->manifest, i, &info) != INGOT_OK || info.label < 0 ||
            info.label >= ORDER_CHECK_CLASSES) {
            continue;
        }
        n += !seen[info.label];
        seen[info.label] = all[info.label] = 1;
    }
    for (uint32_t c = 0; c < ORDER_CHECK_CLASSES; c++) {
        seen[c] = 0;
    }
    return n;
}

void ingot_loader_order_check(ingot_loader_h l)
{
    if (l->params.order_mode != INGOT_ORDER_LOCALITY || l->rank != 0 || l->minfo.shard_count < 2) {
        return;
    }
    uint8_t *seen = calloc(2 * ORDER_CHECK_CLASSES, 1);
    if (seen == NULL) {
        return; /* a warning's worth: not a reason to fail */
    }
    uint64_t sum = 0;
    for (uint32_t s = 0; s < l->minfo.shard_count; s++) {
        sum += shard_classes(l, s, seen, seen + ORDER_CHECK_CLASSES);
    }
    uint32_t classes = 0;
    for (uint32_t c = 0; c < ORDER_CHECK_CLASSES; c++) {
        classes += seen[ORDER_CHECK_CLASSES + c];
    }
    double per_shard = (double)sum / (double)l->minfo.shard_count;
    if (classes >= 2 && per_shard < classes / 2.0) {
        ingot_warn("the locality order (window of %u shards) over shards that hold %.1f of the "
                   "dataset's %u classes on average: its batches will hold few classes; pack the "
                   "samples shuffled across shards, widen the window, or use INGOT_ORDER=full",
                   l->params.order_window, per_shard, classes);
    }
    free(seen);
}
