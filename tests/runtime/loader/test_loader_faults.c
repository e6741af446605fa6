/*
 * Loader faults and bad inputs in one process (MPI singleton): an I/O error injected mid-epoch,
 * a missing and a truncated shard, a corrupt sample under both policies, a transform error,
 * releases twice, out of order, forged and of another loader, the hold boundary (depth - 1
 * held still progresses, depth held is refused at once), destroy with batches held, a memory
 * budget too small, a version-1 manifest, and the zstd and transform paths delivering correct
 * bytes. Every error is checked for its status and for a message naming what was wrong.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/source_test_util.h"
#include "runtime/loader/loader_impl.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/time.h"
#include <fcntl.h>
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/shard.h>

#define N     96
#define SLICE 4
#define SEED  7

static ingot_ctx_h ctx;
static char log_path[1024];

static const char *make_data(const char *name, int zstd)
{
    const char *m = data_set(test_tmpdir(), name, N, 8 << 10, zstd);
    CHECK(m != NULL);
    return m;
}

static ingot_loader_params_t params(const char *manifest)
{
    return data_params(manifest, SLICE, SEED, 8, 1, 2);
}

/* Check every sample of @p b where its data lives (device batches are copied back first). */
static void check_batch(const ingot_batch_t *b)
{
    void *copy;
    const uint8_t *data = data_host_bytes(b, &copy);
    for (uint32_t i = 0; i < b->count; i++) {
        if (data_check(b->indices[i], data + b->offsets[i], b->lengths[i], b->labels[i]) != 0) {
            fprintf(stderr, "step %llu: sample %llu (%s, %llu bytes, label %d) is wrong\n",
                    (unsigned long long)b->step, (unsigned long long)b->indices[i], b->keys[i],
                    (unsigned long long)b->lengths[i], b->labels[i]);
            exit(1);
        }
    }
    free(copy);
}

static char *log_text(void)
{
    return test_read_file(log_path, NULL);
}

/* Deliver every batch (checking raw samples unless a transform made them); returns the status
 * that ended the loop. */
static ingot_status_t drain_checked(ingot_loader_h l, uint64_t *samples_p, int raw)
{
    ingot_batch_t b;
    ingot_status_t st;
    uint64_t n = 0;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        if (raw) {
            check_batch(&b);
        }
        n += b.count;
        CHECK_OK(ingot_loader_release(l, &b));
    }
    if (samples_p) *samples_p = n;
    return st;
}

static ingot_status_t drain(ingot_loader_h l, uint64_t *samples_p)
{
    return drain_checked(l, samples_p, 1);
}

/* The 13th storage read fails (the only rank of its node maps the manifest: no read call of its
 * own). With one reader, one request per sample (COALESCE_GAP=0) and 4
 * samples per step, a request costs 1 read call (2 with O_DIRECT at the end of a shard), so that
 * call belongs to step 1, 2 or 3: the steps before it are delivered and stay valid while held,
 * that step fails with INGOT_ERR_IO, and no partial batch is handed over. */
static void test_io_error_mid_epoch(const char *m)
{
    char err[128];
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    CHECK_OK(ingot_fault_arm("pread:13:EIO", err, sizeof(err)));
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_batch_t held[4], b;
    int n = 0;
    ingot_status_t st;
    while (n < 4 && (st = ingot_loader_next(l, &held[n])) == INGOT_OK) {
        CHECK(held[n].count == SLICE); /* a batch handed over is whole */
        n++;
    }
    CHECK(n >= 1 && n <= 3);
    CHECK_STATUS(st, INGOT_ERR_IO);
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_ERR_IO); /* sticky */
    for (int s = 0; s < n; s++) {
        check_batch(&held[s]); /* delivered batches are untouched by the failure */
        CHECK_OK(ingot_loader_release(l, &held[s]));
    }
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    ingot_loader_destroy(l);
    char *text = log_text();
    CHECK_CONTAINS(text, "failed: Input/output error");
    CHECK_CONTAINS(text, "read of shard '");
    free(text);
}

/* The only rank of its node maps the manifest itself: an I/O error opening it fails
 * ingot_loader_create(), naming the manifest. (A node of several ranks reads it into the node's
 * window with the pread helper: runtime.loader.manifest_eio.) */
static void test_manifest_read_error(const char *m)
{
    char err[128], want[1200];
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    CHECK_OK(ingot_fault_arm("open:1:EIO", err, sizeof(err)));
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_IO);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    char *text = log_text();
    snprintf(want, sizeof(want), "%s: open failed: Input/output error", m);
    CHECK_CONTAINS(text, want);
    free(text);
}

/* An unreadable shard (as root, permissions do not stop a read, so the open is made to fail):
 * its step fails with INGOT_ERR_PERMISSION naming the file. The first open is the manifest's
 * (the only rank of its node maps the file), the second the shard's. */
static void test_unreadable_shard(void)
{
    char err[128];
    const char *m = make_data("unreadable", 0);
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    CHECK_OK(ingot_fault_arm("open:2:EACCES", err, sizeof(err)));
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, NULL), INGOT_ERR_PERMISSION);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    ingot_loader_destroy(l);
    char *text = log_text();
    CHECK_CONTAINS(text, "/unreadable/shard-");
    CHECK_CONTAINS(text, "': Permission denied");
    free(text);
}

static void test_missing_and_truncated_shard(void)
{
    const char *m = make_data("missing", 0);
    ingot_manifest_h man;
    ingot_shard_info_t si;
    char path[1200];
    CHECK_OK(ingot_manifest_open(m, 0, &man));
    CHECK_OK(ingot_manifest_shard_get(man, 1, &si));
    CHECK_OK(ingot_manifest_shard_path(man, 1, path, sizeof(path)));
    ingot_manifest_close(man);
    CHECK(unlink(path) == 0);
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, NULL), INGOT_ERR_NOT_FOUND);
    ingot_loader_destroy(l);
    char *text = log_text(), want[1300];
    snprintf(want, sizeof(want), "cannot open shard '%s': No such file or directory", path);
    CHECK_CONTAINS(text, want);
    free(text);

    m = make_data("truncated", 0);
    CHECK_OK(ingot_manifest_open(m, 0, &man));
    CHECK_OK(ingot_manifest_shard_get(man, 2, &si));
    CHECK_OK(ingot_manifest_shard_path(man, 2, path, sizeof(path)));
    ingot_manifest_close(man);
    CHECK(truncate(path, (off_t)si.size - 700) == 0);
    p = params(m);
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, NULL), INGOT_ERR_MISMATCH);
    ingot_loader_destroy(l);
    text = log_text();
    snprintf(want, sizeof(want), "shard '%s' has %llu bytes but the manifest recorded %llu", path,
             (unsigned long long)si.size - 700, (unsigned long long)si.size);
    CHECK_CONTAINS(text, want);
    free(text);
}

/* A byte source in front of storage that answers "retry elsewhere": every read falls through
 * to storage, every batch is exact. */
static void test_retry_elsewhere(const char *m)
{
    static test_source_t retry = {.base = {.ops = &test_source_ops}};
    ingot_source_t *front = &retry.base;
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    uint64_t samples;
    CHECK_OK(ingot_loader_create_with_sources(ctx, &p, &front, 1, &l));
    CHECK_STATUS(drain(l, &samples), INGOT_END_OF_DATA); /* every sample checked */
    ingot_loader_stats_t stats = {.field_mask = INGOT_LOADER_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_loader_stats(l, &stats));
    CHECK(samples == N);
    /* Every request went to the front source first, then fell through to storage. */
    CHECK((uint64_t)atomic_load(&retry.submitted) == stats.read_requests);
    ingot_loader_destroy(l);
}

/* Flip one byte of sample @p index's "bin" field in its shard. */
static void corrupt_sample(const char *m, uint64_t index, char *key, size_t keylen)
{
    ingot_manifest_h man;
    ingot_sample_info_t s;
    ingot_field_info_t f;
    char path[1200];
    CHECK_OK(ingot_manifest_open(m, 0, &man));
    CHECK_OK(ingot_manifest_sample_get(man, index, &s));
    CHECK_OK(ingot_manifest_field_get(man, &s, 0, &f));
    CHECK(strcmp(f.name, "bin") == 0);
    CHECK_OK(ingot_manifest_shard_path(man, s.shard, path, sizeof(path)));
    snprintf(key, keylen, "%s", s.key);
    ingot_manifest_close(man);
    int fd = open(path, O_RDWR);
    unsigned char c;
    off_t at = (off_t)(s.offset + f.offset + 5);
    CHECK(fd >= 0 && pread(fd, &c, 1, at) == 1);
    c ^= 0x40;
    CHECK(pwrite(fd, &c, 1, at) == 1);
    close(fd);
}

static void test_corrupt_sample(void)
{
    const uint64_t bad = 37;
    char key[64], want[256];
    const char *m = make_data("corrupt", 0);
    corrupt_sample(m, bad, key, sizeof(key));
    ingot_loader_params_t p = params(m);
    ingot_loader_h l;
    /* Policy fail: the step holding the sample fails, naming it. */
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_VERIFY;
    p.verify = INGOT_VERIFY_FAIL;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, NULL), INGOT_ERR_CORRUPT);
    ingot_loader_destroy(l);
    char *text = log_text();
    snprintf(want, sizeof(want), "sample '%s' (index %llu) field 'bin' in shard '", key,
             (unsigned long long)bad);
    CHECK_CONTAINS(text, want);
    CHECK_CONTAINS(text, "content hash differs from the manifest (corrupt)");
    free(text);
    /* Policy skip: every other sample is delivered, the bad one is left out and recorded. */
    p.verify = INGOT_VERIFY_SKIP;
    p.skip_budget = 1;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_batch_t b;
    uint64_t n = 0;
    int short_batches = 0;
    while (ingot_loader_next(l, &b) == INGOT_OK) {
        check_batch(&b);
        for (uint32_t i = 0; i < b.count; i++) {
            CHECK(b.indices[i] != bad);
        }
        short_batches += (b.count == SLICE - 1);
        n += b.count;
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK(n == N - 1 && short_batches == 1);
    ingot_loader_stats_t st = {.field_mask = INGOT_LOADER_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_loader_stats(l, &st));
    CHECK(st.skipped == 1);
    ingot_loader_destroy(l);
    text = log_text();
    CHECK_CONTAINS(text, "(corrupt); skipped");
    free(text);
    /* Budget 0: the first skip exceeds it and the loader fails. */
    p.skip_budget = 0;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, NULL), INGOT_ERR_CORRUPT);
    ingot_loader_destroy(l);
    text = log_text();
    CHECK_CONTAINS(text, "more than the skip budget of 0 (INGOT_SKIP_BUDGET)");
    free(text);
}

/* The cursor saved mid-epoch under the skip policy lists the skipped id. */
static void test_cursor_records_skip(void)
{
    char key[64];
    const char *m = make_data("skipcursor", 0);
    ingot_loader_params_t p = params(m);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_VERIFY;
    p.verify = INGOT_VERIFY_SKIP;
    p.skip_budget = 3;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_batch_t b;
    CHECK_OK(ingot_loader_next(l, &b));
    uint64_t first = b.indices[0];
    CHECK_OK(ingot_loader_release(l, &b));
    ingot_loader_destroy(l);
    corrupt_sample(m, first, key, sizeof(key)); /* corrupt a sample of step 0 */
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_OK(ingot_loader_next(l, &b));
    CHECK(b.count == SLICE - 1);
    CHECK_OK(ingot_loader_release(l, &b));
    ingot_cursor_t c;
    CHECK_OK(ingot_loader_save(l, &c));
    CHECK(c.epoch == 0 && c.consumed == SLICE && c.skipped_count == 1 && c.skipped[0] == first);
    ingot_cursor_release(&c);
    ingot_loader_destroy(l);
}

typedef struct out_sample {
    uint64_t index;
    int32_t label;
    uint32_t bin_len;
    uint8_t first_byte;
} out_sample_t;

static ingot_status_t transform(const ingot_sample_view_t *s, void *out, size_t size, void *arg)
{
    uint64_t fail_index = *(const uint64_t *)arg;
    if (s->index == fail_index) {
        return INGOT_ERR_FORMAT;
    }
    if (size != sizeof(out_sample_t) || s->field_count != 2 || strcmp(s->fields[0].name, "bin")) {
        return INGOT_ERR_INVALID_PARAM;
    }
    out_sample_t o = {.index = s->index,
                      .label = s->label,
                      .bin_len = (uint32_t)s->fields[0].len,
                      .first_byte = ((const uint8_t *)s->fields[0].data)[0]};
    memcpy(out, &o, sizeof(o));
    return INGOT_OK;
}

static void test_transform(const char *m)
{
    uint64_t fail_index = UINT64_MAX;
    ingot_loader_params_t p = params(m);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_TRANSFORM;
    p.transform = transform;
    p.transform_arg = &fail_index;
    p.sample_out_size = sizeof(out_sample_t);
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_batch_t b;
    uint64_t n = 0;
    while (ingot_loader_next(l, &b) == INGOT_OK) {
        void *copy;
        const uint8_t *data = data_host_bytes(&b, &copy);
        for (uint32_t i = 0; i < b.count; i++) {
            out_sample_t o;
            memcpy(&o, data + i * sizeof(o), sizeof(o));
            CHECK(b.offsets[i] == i * sizeof(o) && o.index == b.indices[i]);
            CHECK(o.label == (int32_t)(o.index % 10) && o.bin_len == data_len(o.index));
            CHECK(o.first_byte == data_byte(o.index, 0));
            n++;
        }
        free(copy);
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK(n == N);
    ingot_loader_destroy(l);
    fail_index = 50; /* now the transform fails on one sample: its step fails, naming it */
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain_checked(l, NULL, 0), INGOT_ERR_FORMAT);
    /* detected on a worker, reported by ingot_loader_next() as this thread's last error too */
    CHECK_CONTAINS(ingot_last_error(), "transform failed on sample 's000050' (index 50)");
    ingot_last_error_clear();
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_ERR_FORMAT); /* sticky, with its message */
    CHECK_CONTAINS(ingot_last_error(), "sample 's000050'");
    ingot_loader_destroy(l);
    char *text = log_text();
    CHECK_CONTAINS(text, "transform failed on sample 's000050' (index 50): Malformed input");
    free(text);
}

static void test_release_rules(const char *m)
{
    ingot_loader_params_t p = params(m);
    ingot_loader_h l, other;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_OK(ingot_loader_create(ctx, &p, &other));
    ingot_batch_t a, b, forged, foreign;
    CHECK_OK(ingot_loader_next(l, &a));
    CHECK_OK(ingot_loader_next(l, &b));
    CHECK_OK(ingot_loader_next(other, &foreign));
    CHECK(a.token != b.token && a.token != foreign.token);
    CHECK_STATUS(ingot_loader_release(l, &b), INGOT_ERR_INVALID_PARAM); /* out of order */
    forged = a;
    forged.token ^= 1; /* a forged token, even on a batch that looks right */
    CHECK_STATUS(ingot_loader_release(l, &forged), INGOT_ERR_INVALID_PARAM);
    CHECK_STATUS(ingot_loader_release(l, &foreign), INGOT_ERR_INVALID_PARAM); /* another loader's */
    CHECK_OK(ingot_batch_stream_wait(&a, NULL)); /* a host batch: ready, nothing to wait on */
    CHECK_STATUS(ingot_batch_stream_wait(NULL, NULL), INGOT_ERR_INVALID_PARAM);
    CHECK_STATUS(ingot_loader_release_after(l, &b, NULL), INGOT_ERR_INVALID_PARAM); /* order */
    CHECK_OK(ingot_loader_release_after(l, &a, NULL)); /* host batch: a plain release */
    CHECK_STATUS(ingot_loader_release(l, &a), INGOT_ERR_INVALID_PARAM); /* twice */
    CHECK_OK(ingot_loader_release(l, &b));
    CHECK_STATUS(ingot_loader_release(l, &b), INGOT_ERR_INVALID_PARAM); /* twice, none held */
    CHECK_OK(ingot_loader_release(other, &foreign));
    ingot_loader_destroy(other);
    for (int i = 0; i < 8; i++) { /* hold every slot: the next call must refuse, not hang */
        CHECK_OK(ingot_loader_next(l, &a));
    }
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_ERR_NO_RESOURCE);
    ingot_loader_destroy(l); /* with 8 batches held: documented, no crash */
    char *text = log_text();
    CHECK_CONTAINS(text,
                   "step 1 released out of order (step 0 was handed over first and is still held)");
    CHECK_CONTAINS(text, "(a batch of step 0, as the caller has it) names no batch this loader "
                         "holds: released twice, forged, or from another loader");
    CHECK_CONTAINS(text, "all 8 batch slots are held");
    CHECK_CONTAINS(text, "ingot_loader_destroy: 8 batch(es) still held");
    free(text);
}

/* The trainer may hold depth batches: with depth - 1 held the pipeline still fills the last
 * free slot (next() succeeds, with the right step); with depth held next() refuses at once. */
static void test_hold_boundary(const char *m)
{
    ingot_loader_params_t p = params(m);
    p.depth = 3;
    ingot_loader_h l;
    ingot_batch_t b[4];
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    for (uint32_t i = 0; i < p.depth - 1; i++) {
        CHECK_OK(ingot_loader_next(l, &b[i]));
    }
    CHECK_OK(ingot_loader_next(l, &b[p.depth - 1])); /* depth - 1 held: still progresses */
    CHECK(b[p.depth - 1].step == p.depth - 1);
    uint64_t t0 = ingot_time_ns();
    CHECK_STATUS(ingot_loader_next(l, &b[p.depth]), INGOT_ERR_NO_RESOURCE); /* depth held */
    CHECK(ingot_time_ns() - t0 < 1000000000ull); /* refused at once, no wait for a timeout */
    CHECK_OK(ingot_loader_release(l, &b[0]));
    CHECK_OK(ingot_loader_next(l, &b[0])); /* a slot freed: progress again */
    CHECK(b[0].step == p.depth);
    check_batch(&b[0]);
    ingot_loader_stats_t st;
    memset(&st, 0xa5, sizeof(st));
    st.field_mask = INGOT_LOADER_STATS_FIELD_THREADS; /* only what it asks for is written */
    CHECK_OK(ingot_loader_stats(l, &st));
    CHECK(st.depth == p.depth && st.readers == 1 && st.workers == 2);
    CHECK(st.steps == 0xa5a5a5a5a5a5a5a5ull && st.memory_host == 0xa5a5a5a5a5a5a5a5ull);
    CHECK(st.field_mask == INGOT_LOADER_STATS_FIELD_THREADS);
    ingot_loader_destroy(l);
}

static void test_budget_and_params(const char *m)
{
    ingot_loader_params_t p = params(m);
    ingot_loader_h l = NULL;
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_MEMORY;
    p.memory_budget = 64 << 10;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_NO_RESOURCE);
    CHECK(l == NULL);
    char *text = log_text();
    CHECK_CONTAINS(text, "but the memory budget is 65536 bytes");
    free(text);
    p = params(m);
    p.depth = 1;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "depth 1,"); /* the value, and what is accepted */
    CHECK_CONTAINS(ingot_last_error(), "2 <= depth <= 1024");
    p = params(m);
    p.field_mask &= ~INGOT_LOADER_PARAM_FIELD_BATCH;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "a non-zero global_batch are required");
    p = params("/nonexistent/manifest.ingot");
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_NOT_FOUND);
    text = log_text();
    CHECK_CONTAINS(text, "/nonexistent/manifest.ingot");
    CHECK_CONTAINS(text, "No such file or directory");
    free(text);
    CHECK(l == NULL);
}

/* A device this process cannot use (device 0 on a node without a usable GPU; one past the last
 * elsewhere): a clear error naming it at create, before anything is allocated; a device value
 * that is neither an index nor a named one is refused. The device slot ring's size check. */
static void test_bad_device(const char *m)
{
    int missing = ingot_cuda_probe()->device_count;
    ingot_loader_params_t p = params(m);
    ingot_loader_h l = NULL;
    char want[128];
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_DEVICE;
    p.device = missing;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_NO_DEVICE);
    CHECK(l == NULL);
    snprintf(want, sizeof(want), "loader device %d: this process sees %d usable CUDA device(s)",
             missing, missing);
    CHECK_CONTAINS(ingot_last_error(), want);
    CHECK_CONTAINS(ingot_last_error(), "INGOT_DEVICE_HOST");
    p.device = -7;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "device -7: expected a CUDA device index");
    /* 4 slots of 1 MiB: fit in 4 MiB free, not in 3 MiB; the error names both sizes. */
    CHECK_OK(ingot_loader_gpu_ring_fits(0, 4, 1u << 20, 4u << 20, 80u << 20));
    CHECK_STATUS(ingot_loader_gpu_ring_fits(0, 4, 1u << 20, 3u << 20, 80u << 20),
                 INGOT_ERR_NO_MEMORY);
    CHECK_CONTAINS(ingot_last_error(), "loader device 0: the device slot ring needs 4 x 1048576 = "
                                       "4194304 bytes but the device has 3145728 bytes free (of "
                                       "83886080)");
}

/* A version-1 manifest (tests/fixtures/manifest-v1, written by the code before version 2: no
 * maxima in its header, so the loader sizes its slots from a scan) still loads, every sample
 * once with its bytes: its .cls then its zstd-compressed .txt, decoded. */
static void test_version_1_manifest(void)
{
    ingot_loader_params_t p = params(INGOT_TEST_SRCDIR
                                     "/tests/fixtures/manifest-v1/manifest.ingot");
    ingot_loader_h l;
    ingot_batch_t b;
    int seen[8] = {0};
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    while (ingot_loader_next(l, &b) == INGOT_OK) {
        void *copy;
        const uint8_t *data = data_host_bytes(&b, &copy);
        for (uint32_t i = 0; i < b.count; i++) {
            uint64_t k = b.indices[i];
            char want[64], key[8];
            int n = snprintf(want, sizeof(want), "%d\nsample %d of the version-1 fixture\n",
                             (int)(k % 3), (int)k);
            snprintf(key, sizeof(key), "s%03d", (int)k);
            CHECK(k < 8 && b.lengths[i] == (uint64_t)n && strcmp(b.keys[i], key) == 0);
            CHECK(memcmp(data + b.offsets[i], want, (size_t)n) == 0);
            CHECK(b.labels[i] == (int32_t)(k % 3));
            seen[k]++;
        }
        free(copy);
        CHECK_OK(ingot_loader_release(l, &b));
    }
    for (int i = 0; i < 8; i++) {
        CHECK(seen[i] == 1);
    }
    ingot_loader_destroy(l);
}

int main(void)
{
    snprintf(log_path, sizeof(log_path), "%s/loader.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    setenv("INGOT_COALESCE_GAP", "0", 1); /* one read per sample: faults land on known steps */
    setenv("INGOT_TIMEOUT", "60s", 1);
    CHECK_OK(ingot_init(NULL, &ctx));
    const char *plain = make_data("plain", 0), *zstd = make_data("zstd", 3);
    uint64_t n;
    ingot_loader_params_t p = params(zstd);
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l)); /* the zstd path delivers the same bytes */
    CHECK_STATUS(drain(l, &n), INGOT_END_OF_DATA);
    CHECK(n == N);
    ingot_loader_destroy(l);
    test_retry_elsewhere(plain);
    test_transform(plain);
    test_release_rules(plain);
    test_hold_boundary(plain);
    test_version_1_manifest();
    test_budget_and_params(plain);
    test_bad_device(plain);
    test_missing_and_truncated_shard();
    test_corrupt_sample();
    test_cursor_records_skip();
    if (INGOT_FAULT_ENABLED) { /* sites compiled into test builds only */
        test_io_error_mid_epoch(plain);
        test_manifest_read_error(plain);
        test_unreadable_shard();
    }
    ingot_finalize(ctx);
    return 0;
}
