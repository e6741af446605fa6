/*
 * The object-store byte source against SeaweedFS (e2e.py's case "source" runs it with a manifest
 * built over the bucket and the shards' local copies): reads through direct GETs and through the
 * part cache equal the files' bytes, a part serves reads of many samples with one GET, device
 * iovecs are answered "retry elsewhere", a range past a shard is refused naming its key, a read
 * whose waiter is aborted in flight (the fault proxy stalls it) is quarantined by the wait and
 * completes CANCELED, late, and a read of an object replaced since the manifest carries its 412
 * in the request's message.
 *
 *   it_source MANIFEST_URL LOCAL_DIR CASE      CASE: read | cancel | replaced
 */
#include "test.h"
#include "source/objstore/objstore_source.h"
#include "base/time.h"
#include <fcntl.h>
#include <unistd.h>

static ingot_source_t *make_source(ingot_manifest_h m, const char *url, uint64_t cache)
{
    ingot_source_objstore_params_t p = {.manifest = m,
                                        .url = url,
                                        .nreqs = 8,
                                        .iov_max = 4,
                                        .cache_bytes = cache,
                                        .first_epoch = 0,
                                        .nepochs = 2,
                                        .numa_node = -1};
    ingot_source_t *src = NULL;
    CHECK_OK(ingot_source_objstore_create(&p, &src));
    return src;
}

/* Read [off, off + len) of shard 0 through @p src and compare with the local file. */
static void read_compare(ingot_source_t *src, const char *local, uint64_t off, uint64_t len)
{
    char *got = malloc(len), *want = malloc(len);
    int fd = open(local, O_RDONLY);
    CHECK(got && want && fd >= 0 && pread(fd, want, len, (off_t)off) == (ssize_t)len);
    close(fd);
    struct iovec iov = {got, len};
    static ingot_event_t ev; /* outlives the read: the completing thread notifies it last */
    ingot_event_init(&ev);
    ingot_source_req_t req = {.shard = 0,
                              .offset = off,
                              .length = len,
                              .iov = &iov,
                              .iovcnt = 1,
                              .deadline_ns = ingot_deadline_after(30 * INGOT_NSEC_PER_SEC),
                              .done_ev = &ev};
    int quarantined = 0;
    CHECK_OK(ingot_source_submit(src, &req));
    CHECK_OK(ingot_source_wait(src, &req, &ev, NULL, &quarantined));
    CHECK(!quarantined && memcmp(got, want, len) == 0);
    free(got);
    free(want);
}

static void case_read(ingot_manifest_h m, const char *url, const char *local)
{
    for (int cached = 0; cached < 2; cached++) {
        ingot_source_t *src = make_source(m, url, cached ? 64ull << 20 : 0);
        ingot_objstore_stats_t st;
        for (uint64_t k = 0; k < 16; k++) {
            read_compare(src, local, 1024 + k * 10000, 3000);
        }
        CHECK_OK(ingot_source_objstore_stats(src, INGOT_SOURCE_OBJSTORE_ALL, &st));
        /* direct: one GET per read; parts: the shard's first part serves all 16 */
        CHECK(cached ? st.requests == 1 : st.requests == 16);
        CHECK(ingot_source_objstore_part_hits(src) == (cached ? 15u : 0u));
        /* device memory: "retry elsewhere", no GET */
        char buf[16];
        struct iovec iov = {buf, sizeof(buf)};
        const ingot_source_mem_t dev = INGOT_SOURCE_MEM_DEVICE;
        ingot_source_req_t req = {.shard = 0,
                                  .length = sizeof(buf),
                                  .iov = &iov,
                                  .iovcnt = 1,
                                  .mem = &dev,
                                  .deadline_ns = ingot_deadline_after(INGOT_NSEC_PER_SEC)};
        CHECK_OK(ingot_source_submit(src, &req));
        CHECK(req.retry == 1 && req.status == INGOT_ERR_UNSUPPORTED);
        /* past the shard's end: refused, naming the key */
        req = (ingot_source_req_t){.shard = 0,
                                   .offset = UINT64_MAX / 2,
                                   .length = 16,
                                   .iov = &iov,
                                   .iovcnt = 1,
                                   .deadline_ns = ingot_deadline_after(INGOT_NSEC_PER_SEC)};
        CHECK_OK(ingot_source_submit(src, &req));
        CHECK(req.status == INGOT_ERR_OUT_OF_RANGE);
        CHECK_CONTAINS(req.error, "shard-000000.tar");
        ingot_source_destroy(src);
    }
    printf("source: direct and part-cache reads equal the files; device iovecs retried "
           "elsewhere; a range past the shard named\n");
}

/* Completions of the cancel case's read: how many, and whether the last was late. */
static atomic_int cancel_calls, cancel_late;

static void cancel_cb(ingot_source_req_t *req, int late)
{
    (void)req;
    atomic_store(&cancel_late, late);
    atomic_fetch_add(&cancel_calls, 1);
}

/* A read held by a stalled transfer (the proxy), its waiter aborted (as a loader stopping): the
 * wait quarantines a direct GET's read (its cancel is BUSY), which then completes CANCELED, late,
 * its buffer then free; a read waiting for a part is taken back at once (the part's GET goes on
 * for others) and never completes. Every state checked is the one the source left. */
static void case_cancel(ingot_manifest_h m, const char *url)
{
    for (int cached = 0; cached < 2; cached++) {
        ingot_source_t *src = make_source(m, url, cached ? 64ull << 20 : 0);
        static char buf[200000];
        static ingot_event_t ev; /* outlives the read: the completing thread notifies it last */
        ingot_event_init(&ev);
        struct iovec iov = {buf, sizeof(buf)};
        ingot_source_req_t req = {.shard = 0,
                                  .length = sizeof(buf),
                                  .iov = &iov,
                                  .iovcnt = 1,
                                  .deadline_ns = ingot_deadline_after(60 * INGOT_NSEC_PER_SEC),
                                  .cb = cancel_cb,
                                  .done_ev = &ev};
        atomic_store(&cancel_calls, 0);
        CHECK_OK(ingot_source_submit(src, &req));
        usleep(500 * 1000); /* the transfer is under way, stalled mid-body */
        CHECK(atomic_load(&req.state) == INGOT_SOURCE_REQ_PENDING);
        ingot_abort_t stop = {0};
        ingot_abort_raise(&stop);
        int quarantined = -1;
        CHECK(ingot_source_wait(src, &req, &ev, &stop, &quarantined) == INGOT_ERR_CANCELED);
        if (cached) { /* only waiting for the part's GET: taken back, no completion */
            CHECK(quarantined == 0 && atomic_load(&req.state) == INGOT_SOURCE_REQ_IDLE);
            ingot_source_destroy(src); /* the part's GET ends CANCELED, nobody waiting */
            CHECK(atomic_load(&cancel_calls) == 0);
            continue;
        }
        CHECK(quarantined == 1);
        uint64_t until = ingot_deadline_after(10 * INGOT_NSEC_PER_SEC);
        while (atomic_load(&req.state) != INGOT_SOURCE_REQ_DONE && ingot_time_ns() < until) {
            usleep(10 * 1000);
        }
        CHECK(atomic_load(&req.state) == INGOT_SOURCE_REQ_DONE);
        CHECK(req.status == INGOT_ERR_CANCELED);
        CHECK(atomic_load(&cancel_calls) == 1 && atomic_load(&cancel_late) == 1);
        ingot_source_destroy(src);
    }
    printf("source: a read whose waiter is aborted in flight: quarantined, then CANCELED, late "
           "(direct GET); taken back at once, never completed (waiting for a part)\n");
}

static void case_replaced(ingot_manifest_h m, const char *url)
{
    ingot_source_t *src = make_source(m, url, 64ull << 20);
    char buf[4096];
    struct iovec iov = {buf, sizeof(buf)};
    static ingot_event_t ev; /* outlives the read: the completing thread notifies it last */
    ingot_event_init(&ev);
    ingot_source_req_t req = {.shard = 0,
                              .length = sizeof(buf),
                              .iov = &iov,
                              .iovcnt = 1,
                              .deadline_ns = ingot_deadline_after(30 * INGOT_NSEC_PER_SEC),
                              .done_ev = &ev};
    int quarantined = 0;
    CHECK_OK(ingot_source_submit(src, &req));
    CHECK(ingot_source_wait(src, &req, &ev, NULL, &quarantined) == INGOT_ERR_MISMATCH);
    CHECK_CONTAINS(req.error, "412");
    CHECK_CONTAINS(req.error, "shard-000000.tar");
    CHECK_CONTAINS(ingot_last_error(), "412"); /* the waiter's message: the I/O thread's */
    ingot_source_destroy(src);
    printf("source: an object replaced since the manifest: 412 in the read's message\n");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: it_source MANIFEST_URL LOCAL_DIR read|cancel|replaced\n");
        return 2;
    }
    ingot_manifest_h m;
    char local[4096];
    CHECK_OK(ingot_manifest_open(argv[1], 0, &m));
    snprintf(local, sizeof(local), "%s/shard-000000.tar", argv[2]);
    if (strcmp(argv[3], "read") == 0) {
        case_read(m, argv[1], local);
    } else if (strcmp(argv[3], "cancel") == 0) {
        case_cancel(m, argv[1]);
    } else {
        case_replaced(m, argv[1]);
    }
    ingot_manifest_close(m);
    return 0;
}
