/*
 * Byte sources through their interface, on real shard files: a POSIX read (scatter beyond
 * IOV_MAX) completes in the submitting thread with the file's bytes; reads past the end, missing,
 * resized and unreadable shards and device memory give their errors (or "retry elsewhere");
 * the emulated store serialises requests on its link, adds its latency and can take back a
 * request still on the link; a request that never completes times out at its deadline and stays
 * quarantined until the source completes it late; descriptions; the emulation spec parser.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/source_test_util.h"
#include "base/config.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/time.h"
#include "source/emulate.h"
#include "source/posix.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <limits.h>
#include <pthread.h>
#include <sys/uio.h>

#define PIECES 3000 /* > IOV_MAX (1024): the read is split */
#define PIECE  7
#define AT     50 /* offset of the scatter read */

static char log_path[1024];
static ingot_manifest_h man;
static char shard0[PATH_MAX], shard1[PATH_MAX];
static uint64_t size0;

typedef struct seen {
    int calls, late;
    pthread_t thread;
    uint64_t at; /* when the callback ran */
} seen_t;

static void on_done(ingot_source_req_t *req, int late)
{
    seen_t *s = req->arg;
    s->calls++;
    s->late = late;
    s->thread = pthread_self();
    s->at = ingot_time_ns();
}

static uint8_t *file_bytes(const char *path, size_t *len_p)
{
    return (uint8_t *)test_read_file(path, len_p);
}

static void req_init(ingot_source_req_t *req, uint32_t shard, uint64_t off, struct iovec *iov,
                     int n, seen_t *seen)
{
    uint64_t len = 0;
    for (int i = 0; i < n; i++) {
        len += iov[i].iov_len;
    }
    *req = (ingot_source_req_t){.shard = shard,
                                .offset = off,
                                .length = len,
                                .iov = iov,
                                .iovcnt = n,
                                .deadline_ns = ingot_deadline_after(5 * INGOT_NSEC_PER_SEC),
                                .cb = on_done,
                                .arg = seen};
}

static void test_posix_scatter(ingot_source_t *src)
{
    static unsigned char dst[PIECES][PIECE];
    static struct iovec iov[PIECES];
    for (int i = 0; i < PIECES; i++) { /* pieces land in reverse order: a real scatter */
        iov[i] = (struct iovec){.iov_base = dst[PIECES - 1 - i], .iov_len = PIECE};
    }
    CHECK(PIECES > IOV_MAX);
    ingot_source_req_t req;
    seen_t seen = {0};
    req_init(&req, 0, AT, iov, PIECES, &seen);
    CHECK_OK(ingot_source_submit(src, &req));
    /* POSIX completes inside submit, in this thread, with every byte in place. */
    CHECK(atomic_load(&req.state) == INGOT_SOURCE_REQ_DONE && req.status == INGOT_OK);
    CHECK(seen.calls == 1 && seen.late == 0 && pthread_equal(seen.thread, pthread_self()));
    size_t len;
    uint8_t *file = file_bytes(shard0, &len);
    CHECK(len == size0 && len > AT + PIECES * PIECE);
    for (int i = 0; i < PIECES; i++) {
        CHECK(memcmp(dst[PIECES - 1 - i], file + AT + (size_t)i * PIECE, PIECE) == 0);
    }
    free(file);
}

/* Submit a one-buffer read and return its status (POSIX completes at once). */
static ingot_status_t read_one(ingot_source_t *src, uint32_t shard, uint64_t off, void *buf,
                               size_t len, int *retry_p)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    ingot_source_req_t req;
    seen_t seen = {0};
    req_init(&req, shard, off, &iov, 1, &seen);
    CHECK_OK(ingot_source_submit(src, &req));
    CHECK(seen.calls == 1);
    *retry_p = req.retry;
    return req.status;
}

static void test_posix_errors(void)
{
    ingot_source_t *src;
    unsigned char buf[64];
    int retry;
    char moved[PATH_MAX + 8], want[PATH_MAX + 200];
    CHECK_OK(ingot_source_posix_create(man, 0, &src));
    CHECK_STATUS(read_one(src, 0, size0 - 10, buf, sizeof(buf), &retry), INGOT_ERR_OUT_OF_RANGE);
    snprintf(want, sizeof(want), "is beyond the end of shard '%s'", shard0);
    CHECK_CONTAINS(ingot_last_error(), want);
    snprintf(moved, sizeof(moved), "%s.gone", shard1);
    CHECK(rename(shard1, moved) == 0);
    CHECK_STATUS(read_one(src, 1, 0, buf, sizeof(buf), &retry), INGOT_ERR_NOT_FOUND);
    snprintf(want, sizeof(want), "cannot open shard '%s': No such file or directory", shard1);
    CHECK_CONTAINS(ingot_last_error(), want);
    CHECK(rename(moved, shard1) == 0 && truncate(shard1, 1000) == 0);
    CHECK_STATUS(read_one(src, 1, 0, buf, sizeof(buf), &retry), INGOT_ERR_MISMATCH);
    snprintf(want, sizeof(want), "shard '%s' has 1000 bytes but the manifest recorded", shard1);
    CHECK_CONTAINS(ingot_last_error(), want);
    /* Device memory is not for POSIX reads: "retry elsewhere". */
    ingot_source_mem_t dev = INGOT_SOURCE_MEM_DEVICE;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    ingot_source_req_t req;
    seen_t seen = {0};
    req_init(&req, 0, 0, &iov, 1, &seen);
    req.mem = &dev;
    CHECK_OK(ingot_source_submit(src, &req));
    CHECK(req.retry == 1 && req.status == INGOT_ERR_UNSUPPORTED && seen.calls == 1);
    if (INGOT_FAULT_ENABLED) {
        char err[128];
        CHECK_OK(ingot_fault_arm("pread:1:EIO", err, sizeof(err)));
        CHECK_STATUS(read_one(src, 0, 0, buf, sizeof(buf), &retry), INGOT_ERR_IO);
        CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
        snprintf(want, sizeof(want), "read of shard '%s' at offset 0 failed: Input/output error",
                 shard0);
        CHECK_CONTAINS(ingot_last_error(), want);
        CHECK(retry == 0);
    }
    ingot_source_destroy(src);
}

/* A shard mapped and read by copies out of its mapping, then shrunk under it: the bytes before
 * the new end still read, a range past it fails naming the shard and offset (SIGBUS caught), and
 * a read through the pread source of the same shard is refused as before. */
static void test_posix_mapped_shrink(void)
{
    ingot_source_t *src;
    unsigned char buf[64], want_bytes[64];
    int retry;
    char want[PATH_MAX + 200];
    CHECK_OK(ingot_source_posix_create(man, INGOT_SOURCE_POSIX_MAP, &src));
    CHECK_OK(read_one(src, 0, size0 - sizeof(buf), buf, sizeof(buf), &retry)); /* mapped now */
    int fd = open(shard0, O_RDONLY);
    CHECK(fd >= 0 && pread(fd, want_bytes, sizeof(want_bytes), 100) == (ssize_t)sizeof(want_bytes));
    close(fd);
    CHECK(truncate(shard0, 8192) == 0);
    CHECK_OK(read_one(src, 0, 100, buf, sizeof(buf), &retry));
    CHECK(memcmp(buf, want_bytes, sizeof(buf)) == 0);
    ingot_last_error_clear();
    CHECK_STATUS(read_one(src, 0, size0 - sizeof(buf), buf, sizeof(buf), &retry),
                 INGOT_ERR_MISMATCH);
    snprintf(want, sizeof(want),
             "read of shard '%s' at offset %llu failed: a page past its end (the shard shrank "
             "after it was opened)",
             shard0, (unsigned long long)(size0 - sizeof(buf)));
    CHECK_CONTAINS(ingot_last_error(), want);
    CHECK(retry == 0);
    ingot_source_destroy(src);
}

/* Three requests at once through an emulated link: ready in submit order, each no sooner than
 * the latency plus the transfers queued before it (lower bounds only: this machine is noisy). */
static void test_emulated(void)
{
    enum { NREQ = 3, LEN = 24 << 10 };
    const uint64_t lat = 20 * INGOT_NSEC_PER_MSEC, bw = 10ull << 20;
    const uint64_t transfer = (uint64_t)LEN * INGOT_NSEC_PER_SEC / bw;
    ingot_source_emulation_t emu = {.bandwidth = bw, .latency_ns = lat};
    ingot_source_t *posix, *src;
    CHECK(size0 >= (uint64_t)NREQ * LEN);
    CHECK_OK(ingot_source_posix_create(man, 0, &posix));
    CHECK_OK(ingot_source_emulate_create(&emu, posix, NREQ, &src));
    static uint8_t bufs[NREQ][LEN];
    struct iovec iov[NREQ + 1];
    ingot_source_req_t req[NREQ + 1];
    seen_t seen[NREQ + 1] = {{0}};
    ingot_event_t ev;
    ingot_event_init(&ev);
    uint64_t t0 = ingot_time_ns();
    for (int i = 0; i < NREQ; i++) {
        iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = LEN};
        req_init(&req[i], 0, (uint64_t)i * LEN, &iov[i], 1, &seen[i]);
        req[i].done_ev = &ev;
        CHECK_OK(ingot_source_submit(src, &req[i]));
        CHECK(atomic_load(&req[i].state) == INGOT_SOURCE_REQ_PENDING); /* on the link */
    }
    /* Its state is sized at create: a fourth request in flight is refused, not queued. */
    iov[NREQ] = iov[0];
    req_init(&req[NREQ], 0, 0, &iov[NREQ], 1, &seen[NREQ]);
    CHECK_STATUS(ingot_source_submit(src, &req[NREQ]), INGOT_ERR_NO_RESOURCE);
    int q; /* waiting for the last drives the link: the others complete first, in order */
    CHECK_OK(ingot_source_wait(src, &req[NREQ - 1], &ev, NULL, &q));
    for (int i = 0; i < NREQ; i++) {
        CHECK_OK(ingot_source_wait(src, &req[i], &ev, NULL, &q));
        CHECK(q == 0 && seen[i].calls == 1 && seen[i].late == 0);
        CHECK(seen[i].at - t0 >= lat + (uint64_t)(i + 1) * transfer);
        CHECK(i == 0 || seen[i - 1].at <= seen[i].at);
    }
    size_t len;
    uint8_t *file = file_bytes(shard0, &len);
    for (int i = 0; i < NREQ; i++) {
        CHECK(memcmp(bufs[i], file + (size_t)i * LEN, LEN) == 0);
    }
    free(file);
    /* A request still on the link is taken back: no callback, nothing written. */
    req_init(&req[0], 0, 0, &iov[0], 1, &seen[0]);
    seen[0].calls = 0;
    CHECK_OK(ingot_source_submit(src, &req[0]));
    CHECK_OK(src->ops->cancel(src, &req[0]));
    CHECK(seen[0].calls == 0);
    ingot_source_destroy(src);
}

static void test_deadline_quarantine(void)
{
    const uint64_t deadline = 200 * INGOT_NSEC_PER_MSEC;
    static test_source_t stuck = {.base = {.ops = &test_source_ops}, .stuck = 1};
    uint8_t buf[256];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    ingot_source_req_t req;
    seen_t seen = {0};
    ingot_event_t ev;
    ingot_event_init(&ev);
    req_init(&req, 3, 0, &iov, 1, &seen);
    req.deadline_ns = ingot_deadline_after(deadline);
    uint64_t t0 = ingot_time_ns();
    CHECK_OK(ingot_source_submit(&stuck.base, &req));
    int q = 0;
    CHECK_STATUS(ingot_source_wait(&stuck.base, &req, &ev, NULL, &q), INGOT_ERR_TIMED_OUT);
    CHECK(ingot_time_ns() - t0 >= deadline); /* not before its deadline */
    CHECK(q == 1 && stuck.cancels == 1 && seen.calls == 0);
    CHECK(atomic_load(&req.state) == INGOT_SOURCE_REQ_QUARANTINED);
    CHECK_CONTAINS(ingot_last_error(), "from stuck:shard-3 timed out (INGOT_TIMEOUT); its buffer "
                                       "is quarantined until the source completes it");
    /* The source fails it later: the owner hears of it, late, and may reuse the buffer. */
    ingot_source_complete(atomic_load(&stuck.held), INGOT_ERR_IO);
    CHECK(seen.calls == 1 && seen.late == 1);
}

/* A source that answers its one request at a set time, from its progress. */
typedef struct timed_source {
    ingot_source_t base;
    ingot_source_req_t *req;
    uint64_t ready_at;
} timed_source_t;

static ingot_status_t timed_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    ((timed_source_t *)src)->req = req;
    return INGOT_OK;
}

static unsigned timed_progress(ingot_source_t *src, uint64_t until_ns)
{
    timed_source_t *t = (timed_source_t *)src;
    (void)until_ns;
    if (t->req == NULL || ingot_time_ns() < t->ready_at) {
        return 0;
    }
    ingot_source_req_t *req = t->req;
    t->req = NULL;
    ingot_source_complete(req, INGOT_OK);
    return 1;
}

static ingot_status_t timed_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    (void)src;
    (void)req;
    return INGOT_ERR_BUSY;
}

static const char *timed_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    (void)src;
    snprintf(buf, len, "timed:shard-%u", shard);
    return buf;
}

static const ingot_source_ops_t timed_ops = {timed_submit,   timed_progress,      timed_cancel,
                                             timed_describe, test_source_destroy, 1};

/* The waiting process stopped (SIGSTOP by a child) past its request's deadline, then continued:
 * the time it lost is given back, and the answer that comes after is taken, not timed out. */
static void test_wait_stopped(void)
{
    const uint64_t ms = INGOT_NSEC_PER_MSEC;
    uint8_t buf[64];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    ingot_source_req_t req;
    seen_t seen = {0};
    ingot_event_t ev;
    ingot_event_init(&ev);
    req_init(&req, 0, 0, &iov, 1, &seen);
    uint64_t t0 = ingot_time_ns();
    req.deadline_ns = t0 + 2000 * ms;
    timed_source_t src = {.base = {.ops = &timed_ops}, .ready_at = t0 + 3800 * ms};
    CHECK_OK(ingot_source_submit(&src.base, &req));
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) { /* stopped from 0.2 s to 3.2 s: past the deadline, not past the answer */
        struct timespec a = {0, 200 * 1000 * 1000}, b = {3, 0};
        nanosleep(&a, NULL);
        kill(getppid(), SIGSTOP);
        nanosleep(&b, NULL);
        kill(getppid(), SIGCONT);
        _exit(0);
    }
    int q = 0;
    CHECK_OK(ingot_source_wait(&src.base, &req, &ev, NULL, &q));
    CHECK(q == 0 && seen.calls == 1 && ingot_time_ns() - t0 >= 3800 * ms);
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
}

static void test_describe(void)
{
    ingot_source_t *posix, *emu, *direct;
    char d[INGOT_SOURCE_DESCRIBE_MAX], want[PATH_MAX + 100];
    ingot_source_emulation_t e = {.bandwidth = 200ull << 20, .latency_ns = 5 * INGOT_NSEC_PER_MSEC};
    CHECK_OK(ingot_source_posix_create(man, 0, &posix));
    CHECK_OK(ingot_source_posix_create(man, 1, &direct));
    snprintf(want, sizeof(want), "posix:%s", shard0);
    CHECK(strcmp(ingot_source_describe(posix, 0, d, sizeof(d)), want) == 0);
    CHECK(strcmp(ingot_source_describe(posix, INGOT_SOURCE_ALL, d, sizeof(d)), "posix") == 0);
    CHECK(strcmp(ingot_source_describe(direct, INGOT_SOURCE_ALL, d, sizeof(d)), "posix-direct") ==
          0);
    CHECK_OK(ingot_source_emulate_create(&e, posix, 1, &emu));
    snprintf(want, sizeof(want), "emulated(bw=200MiB/s,lat=5ms) over posix:%s", shard0);
    CHECK(strcmp(ingot_source_describe(emu, 0, d, sizeof(d)), want) == 0);
    CHECK(strcmp(ingot_source_describe(emu, INGOT_SOURCE_ALL, d, sizeof(d)),
                 "emulated(bw=200MiB/s,lat=5ms) over posix") == 0);
    ingot_source_destroy(emu);
    ingot_source_destroy(direct);
}

static void test_emulation_spec(void)
{
    ingot_source_emulation_t e;
    char err[256];
    CHECK(ingot_source_emulation_parse("bw=200MiB/s,lat=5ms", &e, err, sizeof(err)) == 0);
    CHECK(e.bandwidth == 200ull << 20 && e.latency_ns == 5000000ull);
    CHECK(ingot_source_emulation_parse("lat=250us", &e, err, sizeof(err)) == 0);
    CHECK(e.bandwidth == 0 && e.latency_ns == 250000ull);
    CHECK(ingot_source_emulation_parse("none", &e, err, sizeof(err)) == 0 && e.bandwidth == 0);
    CHECK(!ingot_source_emulation_active(&e));
    static const struct {
        const char *spec, *why;
    } bad[] = {
        {"bw=200MiB", "needs a rate such as 200MiB/s"},
        {"bw=0/s", "is not a positive size per second"},
        {"bw=abc/s", "is not a positive size per second"},
        {"lat=5", "is not a duration"},
        {"speed=1", "unknown key 'speed'"},
        {"bw", "is not key=value"},
        {",", "empty specification"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK(ingot_source_emulation_parse(bad[i].spec, &e, err, sizeof(err)) == -1);
        CHECK_CONTAINS(err, bad[i].why);
    }
}

int main(void)
{
    char dir[1024], mpath[1100];
    snprintf(log_path, sizeof(log_path), "%.900s/source.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    CHECK_OK(ingot_config_load());
    snprintf(dir, sizeof(dir), "%.900s/data", test_tmpdir());
    CHECK(data_pack(dir, 96, 128 << 10, 0) == 0);
    snprintf(mpath, sizeof(mpath), "%s/manifest.ingot", dir);
    CHECK_OK(ingot_manifest_open(mpath, 0, &man));
    ingot_shard_info_t si;
    CHECK_OK(ingot_manifest_shard_get(man, 0, &si));
    size0 = si.size;
    CHECK_OK(ingot_manifest_shard_path(man, 0, shard0, sizeof(shard0)));
    CHECK_OK(ingot_manifest_shard_path(man, 1, shard1, sizeof(shard1)));
    ingot_source_t *posix;
    CHECK_OK(ingot_source_posix_create(man, INGOT_SOURCE_POSIX_PREAD, &posix));
    test_posix_scatter(posix);
    ingot_source_destroy(posix);
    CHECK_OK(ingot_source_posix_create(man, INGOT_SOURCE_POSIX_MAP, &posix));
    test_posix_scatter(posix); /* the same bytes copied out of the mapping */
    ingot_source_destroy(posix);
    test_emulated();
    test_deadline_quarantine();
    test_wait_stopped();
    test_describe();
    test_emulation_spec();
    test_posix_errors();        /* it truncates shard 1 */
    test_posix_mapped_shrink(); /* last: it truncates shard 0 */
    ingot_manifest_close(man);
    return 0;
}
