/*
 * Benchmark helper for shard/ (run by hand through shard_bench.sh; not a test):
 *   perf_shard gen N PATH        write a synthetic manifest of N samples (2 fields each,
 *                                shards of 10,000 samples of 4 KiB)
 *   perf_shard open PATH REPS    time full and lazy open (+ first lookup): median, min, max
 *   perf_shard slice N RANKS REPS  time one rank's whole-epoch slice (N/RANKS ids) against a
 *                                local Fisher-Yates shuffle of the same number of ids
 *   perf_shard decode PATH REPS  read (hash-checked) and decode every field of every sample;
 *                                MB/s of decoded output (the peer is `zstd -b3 -T1`, run by
 *                                the script on the same raw bytes)
 *   perf_shard startup PATH REPS ingot_loader_create() on one rank (MPI singleton) against a
 *                                fully validated ingot_manifest_open() of the same file,
 *                                alternating in one process: the loader's start-up cost as a
 *                                ratio to the open it cannot avoid (public API only, so the
 *                                same file builds against older trees for before/after)
 */
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/order.h>
#include <ingot/shard.h>
#include "shard/builder.h"
#include "shard/manifest_format.h"
#include "base/time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS       32
#define FIELDS         2
#define SAMPLE_BYTES   4096u
#define BATCH_PER_RANK 32u
/** Samples per synthetic shard (a 40 MB shard of 4 KiB samples). */
#define SHARD_SAMPLES 10000u

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, uint64_t *ns, int reps, double per)
{
    qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
    printf("%-28s median %10.3f ms  min %10.3f  max %10.3f", what, ns[reps / 2] / 1e6, ns[0] / 1e6,
           ns[reps - 1] / 1e6);
    if (per > 0) {
        printf("  (%.2f ns per item)", (double)ns[reps / 2] / per);
    }
    printf("\n");
}

static int gen(uint64_t n, const char *path)
{
    ingot_manifest_builder_h b;
    if (ingot_manifest_builder_create(path, NULL, &b) != INGOT_OK) {
        return 1;
    }
    for (uint64_t first = 0; first < n; first += SHARD_SAMPLES) {
        char name[32];
        uint64_t count = n - first < SHARD_SAMPLES ? n - first : SHARD_SAMPLES;
        manifest_shard_t sh = {
            .size = count * SAMPLE_BYTES, .sample_count = count, .first_sample = first};
        int nl = snprintf(name, sizeof(name), "synthetic-%06" PRIu64 ".tar", first / SHARD_SAMPLES);
        ingot_builder_str_push(&b->strbuf, name, (size_t)nl, &sh.path);
        ingot_shard_vec_push(&b->shards, &sh, 1, NULL);
    }
    const char *names[FIELDS] = {"jpg", "cls"};
    for (int f = 0; f < FIELDS; f++) {
        uint64_t ref;
        ingot_builder_str_push(&b->namebuf, names[f], 3, &ref);
        manifest_name_t nm = {(uint32_t)manifest_strref_off(ref), 3};
        ingot_shard_vec_push(&b->names, &nm, 1, NULL);
    }
    for (uint64_t i = 0; i < n; i++) {
        char key[32];
        int kl = snprintf(key, sizeof(key), "s%09" PRIu64, i);
        manifest_sample_t s = {.offset = (i % SHARD_SAMPLES) * SAMPLE_BYTES,
                               .first_field = i * FIELDS,
                               .shard = (uint32_t)(i / SHARD_SAMPLES),
                               .label = (int32_t)(i % 10)};
        ingot_builder_str_push(&b->strbuf, key, (size_t)kl, &s.key);
        ingot_shard_vec_push(&b->samples, &s, 1, NULL);
        manifest_field_t f0 = {.name = 0,
                               .offset = 0,
                               .stored_len = SAMPLE_BYTES - 512 - 2,
                               .raw_len = SAMPLE_BYTES - 512 - 2,
                               .hash = i};
        manifest_field_t f1 = {
            .name = 1, .offset = SAMPLE_BYTES - 2, .stored_len = 2, .raw_len = 2, .hash = ~i};
        ingot_shard_vec_push(&b->fields, &f0, 1, NULL);
        ingot_shard_vec_push(&b->fields, &f1, 1, NULL);
    }
    ingot_status_t st = ingot_manifest_builder_write(b);
    ingot_manifest_builder_destroy(b);
    return st == INGOT_OK ? 0 : 1;
}

static int open_bench(const char *path, int reps)
{
    uint64_t full[MAX_REPS], lazy[MAX_REPS];
    ingot_manifest_info_t info = {0};
    for (int r = 0; r < reps; r++) {
        for (int mode = 0; mode < 2; mode++) {
            ingot_manifest_h m;
            ingot_sample_info_t s;
            uint64_t t0 = ingot_time_ns();
            if (ingot_manifest_open(path, mode ? INGOT_MANIFEST_OPEN_LAZY : 0, &m) != INGOT_OK ||
                ingot_manifest_sample_get(m, 12345, &s) != INGOT_OK) {
                return 1;
            }
            (mode ? lazy : full)[r] = ingot_time_ns() - t0;
            ingot_manifest_query(m, &info);
            ingot_manifest_close(m);
        }
    }
    printf("manifest: %" PRIu64 " samples, %" PRIu64 " fields, %" PRIu64 " bytes: %.2f bytes per "
           "sample (%.2f keys and names apart)\n",
           info.sample_count, info.field_count, info.file_size,
           (double)info.file_size / (double)info.sample_count,
           (double)(info.sample_count * sizeof(manifest_sample_t) +
                    info.field_count * sizeof(manifest_field_t)) /
               (double)info.sample_count);
    report("open, full validation", full, reps, (double)info.sample_count);
    report("open, lazy (+1 lookup)", lazy, reps, 0);
    return 0;
}

/* One rank's whole epoch: steps x (global batch / ranks) ids. */
static int slice_bench(uint64_t n, uint32_t ranks, int reps)
{
    ingot_order_params_t p = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                            INGOT_ORDER_PARAM_FIELD_BATCH |
                                            INGOT_ORDER_PARAM_FIELD_SEED,
                              .sample_count = n,
                              .global_batch = (uint64_t)ranks * BATCH_PER_RANK,
                              .seed = 1};
    ingot_order_h o;
    if (ingot_order_create(&p, &o) != INGOT_OK) {
        return 1;
    }
    uint64_t steps = ingot_order_steps(o), per_rank = steps * BATCH_PER_RANK;
    uint64_t *ids = malloc(per_rank * sizeof(*ids)), ours[MAX_REPS], fy[MAX_REPS], sink = 0;
    uint32_t rank = ranks / 2;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = ingot_time_ns();
        for (uint64_t s = 0; s < steps; s++) {
            ingot_order_slice(o, 1, s, rank, ranks, ids + s * BATCH_PER_RANK, BATCH_PER_RANK);
        }
        ours[r] = ingot_time_ns() - t0;
        sink += ids[per_rank / 2];
        /* peer: fill and Fisher-Yates shuffle the same number of ids locally (no global order) */
        t0 = ingot_time_ns();
        uint64_t x = (uint64_t)r + 1;
        for (uint64_t i = 0; i < per_rank; i++) {
            ids[i] = i;
        }
        for (uint64_t i = per_rank - 1; i > 0; i--) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t j = x % (i + 1), t = ids[i];
            ids[i] = ids[j], ids[j] = t;
        }
        fy[r] = ingot_time_ns() - t0;
        sink += ids[0];
    }
    printf("order: N=%" PRIu64 ", %u ranks, global batch %" PRIu64 ", %" PRIu64 " steps, %" PRIu64
           " ids per rank per epoch, memory %.1f MiB per rank (sink %" PRIu64 ")\n",
           n, ranks, p.global_batch, steps, per_rank, per_rank * 8.0 / (1 << 20), sink % 2);
    report("rank epoch slice (ours)", ours, reps, (double)per_rank);
    report("local Fisher-Yates (peer)", fy, reps, (double)per_rank);
    printf("ratio ours/peer (median): %.2f\n", (double)ours[reps / 2] / (double)fy[reps / 2]);
    free(ids);
    ingot_order_destroy(o);
    return 0;
}

static int decode_bench(const char *path, int reps)
{
    ingot_manifest_h m;
    ingot_shard_reader_h r;
    ingot_manifest_info_t info;
    uint64_t ns[MAX_REPS], raw = 0, stored = 0;
    if (ingot_manifest_open(path, 0, &m) != INGOT_OK ||
        ingot_shard_reader_create(m, &r) != INGOT_OK) {
        return 1;
    }
    ingot_manifest_query(m, &info);
    size_t cap = 1 << 20;
    uint8_t *buf = malloc(cap), *out = malloc(cap);
    for (int rep = 0; rep < reps; rep++) {
        uint64_t t0 = ingot_time_ns();
        raw = stored = 0;
        for (uint64_t i = 0; i < info.sample_count; i++) {
            ingot_sample_info_t s;
            size_t len;
            if (ingot_manifest_sample_get(m, i, &s) != INGOT_OK || s.length > cap ||
                ingot_shard_reader_read(r, i, buf, cap) != INGOT_OK) {
                return 1;
            }
            for (uint32_t f = 0; f < s.field_count; f++) {
                if (ingot_shard_reader_decode(r, i, buf, f, out, cap, &len) != INGOT_OK) {
                    return 1;
                }
                raw += len;
            }
            stored += s.length;
        }
        ns[rep] = ingot_time_ns() - t0;
    }
    qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
    printf("decode: %" PRIu64 " samples, %" PRIu64 " bytes read, %" PRIu64 " bytes decoded: "
           "median %.3f s (min %.3f, max %.3f), %.1f MB/s of output, %.0f samples/s\n",
           info.sample_count, stored, raw, ns[reps / 2] / 1e9, ns[0] / 1e9, ns[reps - 1] / 1e9,
           (double)raw / ((double)ns[reps / 2] / 1e9) / 1e6,
           (double)info.sample_count / ((double)ns[reps / 2] / 1e9));
    free(buf);
    free(out);
    ingot_shard_reader_destroy(r);
    ingot_manifest_close(m);
    return 0;
}

/* Global batch of the start-up benchmark: one rank, a small slice (slot sizing is per sample). */
#define STARTUP_BATCH 32u

static int startup_bench(const char *path, int reps)
{
    uint64_t open_ns[MAX_REPS], create_ns[MAX_REPS], ratio_x1000[MAX_REPS];
    ingot_ctx_h ctx;
    if (ingot_init(NULL, &ctx) != INGOT_OK) {
        return 1;
    }
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_THREADS | INGOT_LOADER_PARAM_FIELD_DEVICE,
        .manifest_path = path,
        .global_batch = STARTUP_BATCH,
        .readers = 1,
        .workers = 1,
        .device = INGOT_DEVICE_HOST};
    for (int r = 0; r < reps; r++) {
        ingot_manifest_h m;
        ingot_loader_h l;
        uint64_t t0 = ingot_time_ns();
        if (ingot_manifest_open(path, 0, &m) != INGOT_OK) {
            return 1;
        }
        open_ns[r] = ingot_time_ns() - t0;
        ingot_manifest_close(m);
        t0 = ingot_time_ns();
        if (ingot_loader_create(ctx, &p, &l) != INGOT_OK) {
            return 1;
        }
        create_ns[r] = ingot_time_ns() - t0;
        ingot_loader_destroy(l);
        ratio_x1000[r] = create_ns[r] * 1000 / open_ns[r];
    }
    ingot_finalize(ctx);
    report("manifest open, full", open_ns, reps, 0);
    report("ingot_loader_create", create_ns, reps, 0);
    qsort(ratio_x1000, (size_t)reps, sizeof(*ratio_x1000), cmp_u64);
    printf("ratio create/open: median of medians %.3f; per repetition median %.3f (min %.3f, "
           "max %.3f)\n",
           (double)create_ns[reps / 2] / (double)open_ns[reps / 2], ratio_x1000[reps / 2] / 1e3,
           ratio_x1000[0] / 1e3, ratio_x1000[reps - 1] / 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0) {
        return gen(strtoull(argv[2], NULL, 10), argv[3]);
    }
    int reps = argc == 4 || argc == 5 ? atoi(argv[argc - 1]) : 0;
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    if (argc == 4 && strcmp(argv[1], "open") == 0) {
        return open_bench(argv[2], reps);
    }
    if (argc == 4 && strcmp(argv[1], "startup") == 0) {
        return startup_bench(argv[2], reps);
    }
    if (argc == 4 && strcmp(argv[1], "decode") == 0) {
        return decode_bench(argv[2], reps);
    }
    if (argc == 5 && strcmp(argv[1], "slice") == 0) {
        return slice_bench(strtoull(argv[2], NULL, 10), (uint32_t)atoi(argv[3]), reps);
    }
    fprintf(stderr, "usage: perf_shard gen N PATH | open PATH REPS | slice N RANKS REPS | "
                    "decode PATH REPS | startup PATH REPS\n");
    return 2;
}
