/*
 * The hash of each field as its bytes land (runtime/loader/landed.c), in one process (MPI
 * singleton), under the locality order so runs coalesce many samples and INGOT_HASH_PIECE (set
 * by ctest: 1000, 0, ...) cuts fields across reads:
 *   - 110 random byte flips in the fields of plain tar and of zstd shards: every flipped sample is
 *     caught (skipped under VERIFY=skip, counted), every other one delivered with its bytes, read
 *     from storage (POSIX in pieces) and through a source that reports its bytes landing in pieces
 *     of its own, some of them twice;
 *   - a source that writes part of a request again after reporting it whole, first reporting the
 *     prefix that stays: bytes made wrong by the second write are caught (read again from
 *     storage), bytes made right by it are delivered without a re-read.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/source_test_util.h"
#include "runtime/loader/loader_impl.h"
#include "source/posix.h"
#include "base/log.h"
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/shard.h>
#include <fcntl.h>
#include <unistd.h>

#define N      640
#define FLIPS  110
#define SLICE  32
#define SEED   11
#define IOVMAX 8192

static ingot_ctx_h ctx;

/* A source in front of storage that reads through its own POSIX source and then plays a source
 * that lands bytes in its own way (see mode). Not local: bytes that fail are read again. */
enum { LAND_PIECES, LAND_REWRITE_BAD, LAND_REWRITE_GOOD };
typedef struct landing_source {
    ingot_source_t base;
    ingot_source_t *posix;
    ingot_manifest_h manifest; /* the POSIX source's, open while it lives */
    int mode;
    _Atomic uint64_t rewrites;
} landing_source_t;

/* The request's byte at @p pos (walking its iovecs). */
static uint8_t *req_byte(const ingot_source_req_t *req, uint64_t pos)
{
    for (int i = 0; i < req->iovcnt; i++) {
        if (pos < req->iov[i].iov_len) {
            return (uint8_t *)req->iov[i].iov_base + pos;
        }
        pos -= req->iov[i].iov_len;
    }
    return NULL;
}

static ingot_status_t landing_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    static _Thread_local struct iovec iov[IOVMAX]; /* readers submit at once */
    landing_source_t *t = (landing_source_t *)src;
    CHECK(req->iovcnt <= IOVMAX && req->mem == NULL);
    memcpy(iov, req->iov, (size_t)req->iovcnt * sizeof(*req->iov)); /* posix consumes them */
    ingot_source_req_t inner = *req;
    inner.iov = iov;
    inner.landed = NULL;
    inner.cb = NULL;
    inner.done_ev = NULL;
    CHECK_OK(ingot_source_submit(t->posix, &inner)); /* POSIX completes inside submit */
    if (inner.status != INGOT_OK) {
        ingot_source_complete(req, inner.status);
        return INGOT_OK;
    }
    uint64_t len = req->length;
    if (req->direct) {
        /* a re-read of bytes that failed their hash: as read */
    } else if (t->mode == LAND_PIECES) { /* in pieces of 700, each piece reported twice */
        for (uint64_t done = 0; done < len;) {
            done = done + 700 < len ? done + 700 : len;
            ingot_source_landed(req, done);
            ingot_source_landed(req, done > 300 ? done - 300 : 0); /* written again */
            ingot_source_landed(req, done);
        }
    } else {
        uint64_t at = 100; /* in the first sample's "bin" field (200 bytes at least) */
        uint8_t *b = req_byte(req, at);
        if (t->mode == LAND_REWRITE_GOOD) {
            *b ^= 0x5a; /* first write wrong ... */
        }
        ingot_source_landed(req, len);
        ingot_source_landed(req, at); /* ... then [at, len) written again */
        *b ^= 0x5a;                   /* REWRITE_GOOD: right again; REWRITE_BAD: now wrong */
        atomic_fetch_add(&t->rewrites, 1);
        ingot_source_landed(req, len);
    }
    ingot_source_complete(req, INGOT_OK);
    return INGOT_OK;
}

static const char *landing_describe(const ingot_source_t *src, uint32_t shard, char *buf,
                                    size_t len)
{
    (void)src;
    snprintf(buf, len, "landing:shard-%u", shard);
    return buf;
}

static void landing_destroy(ingot_source_t *src)
{
    landing_source_t *t = (landing_source_t *)src;
    ingot_source_destroy(t->posix);
    ingot_manifest_close(t->manifest);
}

static ingot_status_t landing_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    (void)src;
    (void)req;
    return INGOT_ERR_BUSY; /* completed inside submit: never pending */
}

static const ingot_source_ops_t landing_ops = {landing_submit,  test_source_progress,
                                               landing_cancel,  landing_describe,
                                               landing_destroy, 0 /* transit */};

/* Deliver every batch, checking each sample's bytes; marks the indices seen in @p seen. */
static void drain_checked(ingot_loader_h l, uint8_t *seen, ingot_loader_stats_t *stats)
{
    ingot_batch_t b;
    ingot_status_t st;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        for (uint32_t i = 0; i < b.count; i++) {
            const uint8_t *data = (const uint8_t *)b.data;
            if (data_check(b.indices[i], data + b.offsets[i], b.lengths[i], b.labels[i]) != 0) {
                fprintf(stderr, "step %llu: sample %llu delivered with wrong bytes\n",
                        (unsigned long long)b.step, (unsigned long long)b.indices[i]);
                exit(1);
            }
            CHECK(b.indices[i] < N && seen[b.indices[i]] == 0);
            seen[b.indices[i]] = 1;
        }
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK_STATUS(st, INGOT_END_OF_DATA);
    *stats = (ingot_loader_stats_t){.field_mask = INGOT_LOADER_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_loader_stats(l, stats));
}

static ingot_loader_params_t params(const char *m, ingot_verify_policy_t verify)
{
    ingot_loader_params_t p = data_params(m, SLICE, SEED, 4, 2, 2);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_VERIFY;
    p.verify = verify;
    p.skip_budget = N;
    return p;
}

/* Flip FLIPS distinct random bytes of the fields' stored bytes (never a tar header or padding)
 * in @p m's shards; marks the samples hit in @p hit and returns how many. */
static uint32_t flip_bytes(const char *m, uint32_t seed, uint8_t *hit)
{
    ingot_manifest_h man;
    CHECK_OK(ingot_manifest_open(m, 0, &man));
    uint64_t done[FLIPS];
    uint32_t nhit = 0;
    srand(seed);
    for (uint32_t k = 0; k < FLIPS;) {
        ingot_sample_info_t s;
        ingot_field_info_t f;
        char path[1200];
        CHECK_OK(ingot_manifest_sample_get(man, (uint64_t)rand() % N, &s));
        CHECK_OK(ingot_manifest_field_get(man, &s, (uint32_t)rand() % s.field_count, &f));
        uint64_t at = s.offset + f.offset + (uint64_t)rand() % f.stored_len;
        uint64_t where = ((uint64_t)s.shard << 40) | at;
        int again = 0;
        for (uint32_t j = 0; j < k; j++) {
            again |= done[j] == where;
        }
        if (again) {
            continue; /* a second flip of one byte could undo the first */
        }
        done[k++] = where;
        CHECK_OK(ingot_manifest_shard_path(man, s.shard, path, sizeof(path)));
        int fd = open(path, O_RDWR);
        unsigned char c;
        CHECK(fd >= 0 && pread(fd, &c, 1, (off_t)at) == 1);
        c ^= (unsigned char)(1 + rand() % 255);
        CHECK(pwrite(fd, &c, 1, (off_t)at) == 1);
        close(fd);
        nhit += hit[s.index] == 0;
        hit[s.index] = 1;
    }
    ingot_manifest_close(man);
    return nhit;
}

static ingot_source_t *landing_new(const char *m, int mode)
{
    static landing_source_t srcs[8];
    static int used;
    CHECK(used < 8);
    landing_source_t *t = &srcs[used++];
    *t = (landing_source_t){.base = {.ops = &landing_ops}, .mode = mode};
    CHECK_OK(ingot_manifest_open(m, 0, &t->manifest));
    CHECK_OK(ingot_source_posix_create(t->manifest, INGOT_SOURCE_POSIX_PREAD, &t->posix));
    return &t->base;
}

/* Every flipped sample caught, every other one delivered, from storage and from a source that
 * reports its landing in pieces of its own. */
static void test_flips(const char *name, int zstd)
{
    const char *m = data_set(test_tmpdir(), name, N, 64 << 10, zstd);
    CHECK(m != NULL);
    uint8_t hit[N] = {0};
    uint32_t nhit = flip_bytes(m, zstd ? 2 : 1, hit);
    CHECK(nhit > FLIPS / 2);
    for (int front = 0; front < 2; front++) {
        ingot_loader_params_t p = params(m, INGOT_VERIFY_SKIP);
        ingot_source_t *src = front ? landing_new(m, LAND_PIECES) : NULL;
        ingot_loader_h l;
        CHECK_OK(front ? ingot_loader_create_with_sources(ctx, &p, &src, 1, &l)
                       : ingot_loader_create(ctx, &p, &l));
        uint8_t seen[N] = {0};
        ingot_loader_stats_t st;
        fprintf(stderr, "%s: %s\n", name, front ? "through a source landing in pieces" : "posix");
        drain_checked(l, seen, &st);
        for (uint32_t i = 0; i < N; i++) {
            if (seen[i] == hit[i]) {
                fprintf(stderr, "%s (%s): sample %u %s\n", name, front ? "landing" : "posix", i,
                        hit[i] ? "has a flipped byte, yet was delivered" : "was not delivered");
                exit(1);
            }
        }
        CHECK(st.skipped == nhit);
        ingot_loader_destroy(l);
    }
}

/* Bytes written again after they were reported: the hash follows the last bytes written. */
static void test_rewrites(void)
{
    const char *m = data_set(test_tmpdir(), "rewrite", N, 64 << 10, 0);
    CHECK(m != NULL);
    for (int mode = LAND_REWRITE_BAD; mode <= LAND_REWRITE_GOOD; mode++) {
        ingot_loader_params_t p = params(m, INGOT_VERIFY_FAIL);
        ingot_source_t *src = landing_new(m, mode);
        landing_source_t *t = (landing_source_t *)src;
        ingot_loader_h l;
        CHECK_OK(ingot_loader_create_with_sources(ctx, &p, &src, 1, &l));
        uint8_t seen[N] = {0};
        ingot_loader_stats_t st;
        fprintf(stderr, "rewrite: %s\n", mode == LAND_REWRITE_BAD ? "bad" : "good");
        drain_checked(l, seen, &st); /* every sample right, none skipped */
        for (uint32_t i = 0; i < N; i++) {
            CHECK(seen[i] == 1);
        }
        uint64_t rereads = 0;
        for (int i = 0; i < INGOT_TIER_FROM_COUNT; i++) {
            rereads += l->rereads[i];
        }
        fprintf(stderr, "  %llu requests, %llu rewritten, %llu re-read\n",
                (unsigned long long)st.read_requests, (unsigned long long)atomic_load(&t->rewrites),
                (unsigned long long)rereads);
        CHECK(atomic_load(&t->rewrites) == st.read_requests);
        if (mode == LAND_REWRITE_BAD) {
            CHECK(rereads == st.read_requests); /* every request's first sample read again */
        } else {
            CHECK(rereads == 0);
        }
        ingot_loader_destroy(l);
    }
}

int main(void)
{
    static char log_path[1024];
    snprintf(log_path, sizeof(log_path), "%s/loader.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    setenv("INGOT_ORDER", "window:2", 1); /* runs of many samples */
    setenv("INGOT_TIMEOUT", "60s", 1);
    CHECK_OK(ingot_init(NULL, &ctx));
    test_flips("plain", 0);
    test_flips("zstd", 3);
    test_rewrites();
    ingot_finalize(ctx);
    return 0;
}
