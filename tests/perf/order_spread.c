/*
 * order_spread: what the locality order costs in randomness, measured on a manifest's labels
 * (tests/perf/order_cost.py drives it on Fashion-MNIST).
 *
 *   order_spread MANIFEST BATCH [WINDOW...] [--sorted]
 *
 * For the full shuffle and each WINDOW (the locality order, window:N), over every global batch
 * of epoch 0: the distinct labels in a batch, the largest class's share of it, and the total
 * variation distance between the batch's label histogram and the dataset's (0: the batch looks
 * like the dataset; a uniform shuffle of B samples has its own small floor, printed as "full").
 * Also the shards a batch touches. --sorted measures the same dataset with its samples sorted by
 * label into shards of the same sizes (what an ImageFolder packed class by class looks like):
 * the locality order's worst case. One JSON line per order.
 */
#include <ingot/ingot.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPREAD_CLASSES 1024

typedef struct spread {
    ingot_manifest_h m;
    uint64_t n, batch;
    uint32_t shards;
    uint64_t *per_shard;
    int32_t *label;  /* per sample (sorted under --sorted) */
    uint32_t *shard; /* per sample */
    double global[SPREAD_CLASSES];
} spread_t;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int spread_load(spread_t *s, const char *path, int sorted)
{
    ingot_manifest_info_t mi;
    if (ingot_manifest_open(path, INGOT_MANIFEST_OPEN_LAZY, &s->m) != INGOT_OK ||
        ingot_manifest_query(s->m, &mi) != INGOT_OK) {
        return -1;
    }
    s->n = mi.sample_count;
    s->shards = (uint32_t)mi.shard_count;
    s->per_shard = calloc(s->shards, sizeof(*s->per_shard));
    s->label = calloc(s->n, sizeof(*s->label));
    s->shard = calloc(s->n, sizeof(*s->shard));
    for (uint32_t k = 0; k < s->shards; k++) {
        ingot_shard_info_t si;
        ingot_manifest_shard_get(s->m, k, &si);
        s->per_shard[k] = si.sample_count;
        for (uint64_t i = si.first_sample; i < si.first_sample + si.sample_count; i++) {
            s->shard[i] = k;
        }
    }
    for (uint64_t i = 0; i < s->n; i++) {
        ingot_sample_info_t info;
        ingot_manifest_sample_get(s->m, i, &info);
        s->label[i] = info.label >= 0 && info.label < SPREAD_CLASSES ? info.label : 0;
        s->global[s->label[i]] += 1.0 / (double)s->n;
    }
    if (sorted) {
        qsort(s->label, s->n, sizeof(*s->label), cmp_i32);
    }
    return 0;
}

/* One batch's figures: distinct labels, the largest class's share, TV distance, shards. */
static void batch_figures(const spread_t *s, const uint64_t *ids, double *out)
{
    double h[SPREAD_CLASSES] = {0};
    static uint8_t seen[1 << 20];
    uint32_t distinct = 0, shards = 0;
    double top = 0, tv = 0;
    for (uint64_t i = 0; i < s->batch; i++) {
        double *c = &h[s->label[ids[i]]];
        distinct += *c == 0;
        *c += 1.0 / (double)s->batch;
        top = *c > top ? *c : top;
        uint32_t k = s->shard[ids[i]] % (1u << 20);
        shards += !seen[k];
        seen[k] = 1;
    }
    for (uint64_t i = 0; i < s->batch; i++) {
        seen[s->shard[ids[i]] % (1u << 20)] = 0;
    }
    for (int c = 0; c < SPREAD_CLASSES; c++) {
        tv += 0.5 * (h[c] > s->global[c] ? h[c] - s->global[c] : s->global[c] - h[c]);
    }
    out[0] += distinct;
    out[1] += top;
    out[2] += tv;
    out[3] += shards;
}

static int spread_order(const spread_t *s, uint32_t window)
{
    ingot_order_params_t p = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                            INGOT_ORDER_PARAM_FIELD_BATCH |
                                            INGOT_ORDER_PARAM_FIELD_SEED,
                              .sample_count = s->n,
                              .global_batch = s->batch,
                              .seed = 1};
    if (window > 0) {
        p.field_mask |= INGOT_ORDER_PARAM_FIELD_MODE;
        p.mode = INGOT_ORDER_LOCALITY;
        p.shard_samples = s->per_shard;
        p.shard_count = s->shards;
        p.window = window;
    }
    ingot_order_h o;
    uint64_t *ids = calloc(s->batch, sizeof(*ids));
    if (ids == NULL || ingot_order_create(&p, &o) != INGOT_OK) {
        free(ids);
        return -1;
    }
    double sum[4] = {0};
    uint64_t steps = ingot_order_steps(o);
    for (uint64_t step = 0; step < steps; step++) {
        ingot_order_slice(o, 0, step, 0, 1, ids, s->batch);
        batch_figures(s, ids, sum);
    }
    printf("{\"order\": \"%s%.0u\", \"batches\": %" PRIu64 ", \"distinct_labels\": %.3f, "
           "\"top_class_share\": %.4f, \"tv_distance\": %.4f, \"shards_per_batch\": %.2f}\n",
           window ? "window:" : "full", window, steps, sum[0] / (double)steps,
           sum[1] / (double)steps, sum[2] / (double)steps, sum[3] / (double)steps);
    ingot_order_destroy(o);
    free(ids);
    return 0;
}

int main(int argc, char **argv)
{
    spread_t s = {0};
    int sorted = argc > 1 && strcmp(argv[argc - 1], "--sorted") == 0;
    if (argc - sorted < 3) {
        fprintf(stderr, "usage: order_spread MANIFEST BATCH [WINDOW...] [--sorted]\n");
        return 2;
    }
    s.batch = strtoull(argv[2], NULL, 10);
    if (s.batch == 0 || spread_load(&s, argv[1], sorted) != 0) {
        fprintf(stderr, "order_spread: cannot open %s (%s)\n", argv[1], ingot_last_error());
        return 1;
    }
    int rc = spread_order(&s, 0);
    for (int i = 3; i < argc - sorted && rc == 0; i++) {
        rc = spread_order(&s, (uint32_t)strtoul(argv[i], NULL, 10));
    }
    ingot_manifest_close(s.m);
    free(s.per_shard);
    free(s.label);
    free(s.shard);
    return rc == 0 ? 0 : 1;
}
