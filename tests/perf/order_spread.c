/*
 * order_spread: what the locality order costs in randomness, measured on a manifest's labels
 * (tests/perf/order_cost.py drives it on Fashion-MNIST).
 *
 *   order_spread MANIFEST BATCH ORDER... [--world W] [--sorted]
 *
 * ORDER: "full" (the global shuffle), "window:N" (the locality order), "window:N,nodes:C" (the
 * locality order dealt across C canonical nodes), or "shards:N,nodes:C": the cheaper design
 * weighed against the dealt order (issue 31), each rank of a node reading whole shards of its
 * node's window (simulated on the dealt order: a node's samples of a step go to its ranks by
 * shard), so a per-rank part cache would do. For each order, over every global batch of epoch
 * 0: the distinct labels in a batch, the largest class's share of it, and the total variation
 * distance between the batch's label histogram and the dataset's (0: the batch looks like the
 * dataset; a uniform shuffle of B samples has its own small floor, printed as "full"); the
 * shards a batch touches; and the same figures for each rank's slice, W ranks numbered node by
 * node (what per-rank statistics such as BatchNorm see). --sorted measures the same dataset with
 * its samples sorted by label into shards of the same sizes (what an ImageFolder packed class by
 * class looks like): the locality order's worst case. One JSON line per order.
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
    uint32_t world; /* ranks, numbered node by node */
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

/* The figures of @p count samples @p ids: distinct labels, the largest class's share, TV
 * distance, shards (added to out[0..3]). */
static void batch_figures(const spread_t *s, const uint64_t *ids, uint64_t count, double *out)
{
    double h[SPREAD_CLASSES] = {0};
    static uint8_t seen[1 << 20];
    uint32_t distinct = 0, shards = 0;
    double top = 0, tv = 0;
    for (uint64_t i = 0; i < count; i++) {
        double *c = &h[s->label[ids[i]]];
        distinct += *c == 0;
        *c += 1.0 / (double)count;
        top = *c > top ? *c : top;
        uint32_t k = s->shard[ids[i]] % (1u << 20);
        shards += !seen[k];
        seen[k] = 1;
    }
    for (uint64_t i = 0; i < count; i++) {
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

/* An order spec: "full", "window:N", "window:N,nodes:C" or "shards:N,nodes:C". */
typedef struct order_spec {
    uint32_t window, nodes;
    int whole_shards; /* "shards:": each rank of a node reads whole shards of its window */
} order_spec_t;

static int spec_parse(const char *text, order_spec_t *o)
{
    *o = (order_spec_t){.nodes = 1};
    if (strcmp(text, "full") == 0) {
        return 0;
    }
    unsigned w = 0, c = 1;
    int n = 0;
    if (sscanf(text, "window:%u%n", &w, &n) == 1 || sscanf(text, "shards:%u%n", &w, &n) == 1) {
        o->whole_shards = text[0] == 's';
        if (text[n] == ',' && sscanf(text + n, ",nodes:%u", &c) != 1) {
            return -1;
        }
        o->window = w;
        o->nodes = c;
        return w > 0 && c > 0 ? 0 : -1;
    }
    return -1;
}

/* A rank's samples of a step under "shards:": of its canonical node's B/C samples, those of the
 * shards dealt to it (the node's shards of the step in first-seen order, round robin over its R
 * ranks). Into @p out; returns how many. */
static uint64_t whole_shard_slice(const spread_t *s, const uint64_t *node_ids, uint64_t count,
                                  uint32_t ranks, uint32_t local, uint64_t *out)
{
    static uint32_t owner[1 << 20];
    static uint8_t seen[1 << 20];
    uint32_t next = 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t k = s->shard[node_ids[i]] % (1u << 20);
        if (!seen[k]) {
            seen[k] = 1;
            owner[k] = next++ % ranks;
        }
        if (owner[k] == local) {
            out[n++] = node_ids[i];
        }
    }
    for (uint64_t i = 0; i < count; i++) {
        seen[s->shard[node_ids[i]] % (1u << 20)] = 0;
    }
    return n;
}

static int spread_order(const spread_t *s, const char *text)
{
    order_spec_t spec;
    if (spec_parse(text, &spec) != 0 || s->world % spec.nodes != 0 || s->batch % s->world != 0) {
        fprintf(stderr,
                "order_spread: '%s' is not an order here (full, window:N, window:N,nodes:C or "
                "shards:N,nodes:C, with C dividing the world %u and the world the batch %" PRIu64
                ")\n",
                text, s->world, s->batch);
        return -1;
    }
    ingot_order_params_t p = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                            INGOT_ORDER_PARAM_FIELD_BATCH |
                                            INGOT_ORDER_PARAM_FIELD_SEED,
                              .sample_count = s->n,
                              .global_batch = s->batch,
                              .seed = 1};
    if (spec.window > 0) {
        p.field_mask |= INGOT_ORDER_PARAM_FIELD_MODE | INGOT_ORDER_PARAM_FIELD_NODES;
        p.mode = INGOT_ORDER_LOCALITY;
        p.shard_samples = s->per_shard;
        p.shard_count = s->shards;
        p.window = spec.window;
        p.nodes = spec.nodes;
    }
    ingot_order_h o;
    uint32_t world = s->world, ranks = world / spec.nodes;
    uint64_t *ids = calloc(s->batch, sizeof(*ids)), *mine = calloc(s->batch, sizeof(*mine));
    if (ids == NULL || mine == NULL || ingot_order_create(&p, &o) != INGOT_OK) {
        free(ids);
        free(mine);
        return -1;
    }
    double sum[4] = {0}, rank_sum[4] = {0};
    uint64_t steps = ingot_order_steps(o), slices = 0;
    for (uint64_t step = 0; step < steps; step++) {
        ingot_order_slice(o, 0, step, 0, 1, ids, s->batch);
        batch_figures(s, ids, s->batch, sum);
        for (uint32_t r = 0; r < world; r++) {
            uint64_t n = s->batch / world;
            if (spec.whole_shards) { /* the node's B/C samples of the step, then its shards */
                uint64_t per_node = s->batch / spec.nodes;
                n = whole_shard_slice(s, ids + (r / ranks) * per_node, per_node, ranks, r % ranks,
                                      mine);
            } else {
                ingot_order_slice(o, 0, step, r, world, mine, s->batch);
            }
            if (n > 0) { /* a rank given no shard this step sees nothing (not counted) */
                batch_figures(s, mine, n, rank_sum);
                slices++;
            }
        }
    }
    slices = slices ? slices : 1;
    printf("{\"order\": \"%s\", \"ranks\": %u, \"batches\": %" PRIu64
           ", \"distinct_labels\": %.3f, "
           "\"top_class_share\": %.4f, \"tv_distance\": %.4f, \"shards_per_batch\": %.2f, "
           "\"rank_distinct_labels\": %.3f, \"rank_top_class_share\": %.4f, "
           "\"rank_tv_distance\": %.4f, \"rank_shards\": %.2f}\n",
           text, world, steps, sum[0] / (double)steps, sum[1] / (double)steps,
           sum[2] / (double)steps, sum[3] / (double)steps, rank_sum[0] / (double)slices,
           rank_sum[1] / (double)slices, rank_sum[2] / (double)slices,
           rank_sum[3] / (double)slices);
    ingot_order_destroy(o);
    free(ids);
    free(mine);
    return 0;
}

int main(int argc, char **argv)
{
    spread_t s = {.world = 1};
    int sorted = 0, last = argc;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--sorted") == 0) {
            sorted = 1;
            last = last < i ? last : i;
        } else if (strcmp(argv[i], "--world") == 0 && i + 1 < argc) {
            s.world = (uint32_t)strtoul(argv[i + 1], NULL, 10);
            last = last < i ? last : i;
            i++;
        }
    }
    if (argc < 4 || s.world == 0) {
        fprintf(stderr, "usage: order_spread MANIFEST BATCH ORDER... [--world W] [--sorted]\n");
        return 2;
    }
    s.batch = strtoull(argv[2], NULL, 10);
    if (s.batch == 0 || spread_load(&s, argv[1], sorted) != 0) {
        fprintf(stderr, "order_spread: cannot open %s (%s)\n", argv[1], ingot_last_error());
        return 1;
    }
    int rc = 0;
    for (int i = 3; i < last && rc == 0; i++) {
        rc = spread_order(&s, argv[i]);
    }
    ingot_manifest_close(s.m);
    free(s.per_shard);
    free(s.label);
    free(s.shard);
    return rc == 0 ? 0 : 1;
}
