/*
 * objstore_get: the object-store client's ranged-GET throughput, for choosing INGOT_S3_PART_SIZE
 * by measurement (tests/perf/objstore_perf.py drives it against SeaweedFS).
 *
 *   objstore_get --url s3://BUCKET/KEY --size BYTES [--part 8MiB] [--inflight 4]
 *                [--connections 4] [--bytes 1GiB] [--verify]
 *
 * Reads --bytes from the object in --part ranges, --inflight requests at a time (each
 * completion submits the next part from the I/O thread, as a prefetching reader would), into
 * pre-faulted buffers; prints one JSON line: MiB/s, this process's CPU-seconds per GiB (user +
 * system, getrusage), requests, GET latency p50/p99. Endpoint and credentials come the AWS way.
 */
#include "client/objstore.h"
#include "base/time.h"
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_INFLIGHT 64

typedef struct {
    ingot_objstore_t *client;
    ingot_objstore_object_t *object;
    uint64_t size, part, total, next_off, issued, done_bytes;
    int verify, failed;
    const char *key;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int outstanding;
} bench_t;

typedef struct {
    ingot_objstore_req_t req;
    struct iovec iov;
    bench_t *b;
} slot_t;

static uint64_t parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    uint64_t mul = 1;
    if (strncmp(end, "KiB", 3) == 0) mul = 1ull << 10;
    if (strncmp(end, "MiB", 3) == 0) mul = 1ull << 20;
    if (strncmp(end, "GiB", 3) == 0) mul = 1ull << 30;
    return (uint64_t)(v * (double)mul);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* Byte i of a test object (tests/client/objstore/harness.py). */
static unsigned char pattern(const char *key, uint64_t i)
{
    unsigned seed = 0;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) seed += *p;
    return (unsigned char)(((i * 2654435761ull) >> 13) ^ (seed % 251));
}

/* Set @p s up for the next part; 0 when every byte has been asked for (b->lock held). */
static int next_part(bench_t *b, slot_t *s)
{
    if (b->issued >= b->total || b->failed) return 0;
    uint64_t off = b->next_off, len = b->size - off < b->part ? b->size - off : b->part;
    if (len > b->total - b->issued) len = b->total - b->issued;
    b->next_off = off + len == b->size ? 0 : off + len;
    b->issued += len;
    s->iov.iov_len = len;
    s->req = (ingot_objstore_req_t){.object = b->object,
                                    .offset = off,
                                    .length = len,
                                    .object_size = b->size,
                                    .iov = &s->iov,
                                    .iovcnt = 1,
                                    .deadline_ns = ingot_deadline_after(60 * INGOT_NSEC_PER_SEC),
                                    .arg = s};
    return 1;
}

static void on_done(ingot_objstore_req_t *req);

static void submit_next(bench_t *b, slot_t *s)
{
    pthread_mutex_lock(&b->lock);
    int more = next_part(b, s);
    if (!more) b->outstanding--;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (more) {
        s->req.cb = on_done;
        if (ingot_objstore_submit(b->client, &s->req) != INGOT_OK) exit(1);
    }
}

static void on_done(ingot_objstore_req_t *req)
{
    slot_t *s = req->arg;
    bench_t *b = s->b;
    if (req->status != INGOT_OK) {
        fprintf(stderr, "%s\n", req->message);
        b->failed = 1;
    }
    for (uint64_t i = 0; b->verify && req->status == INGOT_OK && i < req->length; i++) {
        if (((unsigned char *)s->iov.iov_base)[i] != pattern(b->key, req->offset + i)) {
            fprintf(stderr, "byte %" PRIu64 " differs\n", req->offset + i);
            b->failed = 1;
            break;
        }
    }
    pthread_mutex_lock(&b->lock);
    b->done_bytes += req->length;
    pthread_mutex_unlock(&b->lock);
    submit_next(b, s);
}

static void usage(void)
{
    fprintf(stderr, "usage: objstore_get --url s3://BUCKET/KEY --size BYTES [--part 8MiB] "
                    "[--inflight 4] [--connections 4] [--bytes 1GiB] [--verify]\n");
    exit(2);
}

static void report(const bench_t *b, int inflight, long conns, double secs, double cpu)
{
    ingot_objstore_stats_t st;
    ingot_objstore_stats(b->client, &st);
    double gib = (double)b->done_bytes / (1ull << 30);
    printf("{\"part\": %llu, \"inflight\": %d, \"connections\": %ld, \"bytes\": %llu, "
           "\"seconds\": %.3f, \"mib_s\": %.1f, \"cpu_s\": %.3f, \"cpu_s_per_gib\": %.3f, "
           "\"requests\": %llu, \"retries\": %llu, \"p50_ms\": %.2f, \"p99_ms\": %.2f}\n",
           (unsigned long long)b->part, inflight, conns, (unsigned long long)b->done_bytes, secs,
           (double)b->done_bytes / (1 << 20) / secs, cpu, cpu / gib,
           (unsigned long long)st.requests,
           (unsigned long long)st.retries[0] + st.retries[1] + st.retries[2] + st.retries[3],
           st.latency_p50_ns / 1e6, st.latency_p99_ns / 1e6);
}

int main(int argc, char **argv)
{
    bench_t b = {.part = 8 << 20,
                 .total = 1ull << 30,
                 .lock = PTHREAD_MUTEX_INITIALIZER,
                 .cond = PTHREAD_COND_INITIALIZER};
    const char *url = NULL;
    int inflight = 4;
    long conns = 4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--verify") == 0) {
            b.verify = 1;
            continue;
        }
        if (v == NULL) usage();
        if (strcmp(a, "--url") == 0)
            url = v;
        else if (strcmp(a, "--size") == 0)
            b.size = parse_size(v);
        else if (strcmp(a, "--part") == 0)
            b.part = parse_size(v);
        else if (strcmp(a, "--inflight") == 0)
            inflight = atoi(v);
        else if (strcmp(a, "--connections") == 0)
            conns = atol(v);
        else if (strcmp(a, "--bytes") == 0)
            b.total = parse_size(v);
        else
            usage();
        i++;
    }
    if (url == NULL || b.size == 0 || b.part == 0 || inflight < 1 || inflight > MAX_INFLIGHT) {
        usage();
    }
    const ingot_objstore_config_t *dflt = NULL;
    if (ingot_objstore_config(&dflt) != INGOT_OK) return 1;
    ingot_objstore_config_t cfg = *dflt;
    cfg.connections = conns;
    ingot_objstore_params_t p = {.field_mask = INGOT_OBJSTORE_PARAM_URL |
                                               INGOT_OBJSTORE_PARAM_CONFIG,
                                 .url = url,
                                 .config = &cfg};
    if (ingot_objstore_create(&p, &b.client) != INGOT_OK ||
        ingot_objstore_object_create(b.client, url, &b.object) != INGOT_OK) {
        return 1;
    }
    b.key = strchr(url + 5, '/') + 1;
    slot_t *slots = calloc((size_t)inflight, sizeof(*slots));
    for (int i = 0; i < inflight; i++) {
        slots[i].b = &b;
        slots[i].iov.iov_base = malloc(b.part);
        memset(slots[i].iov.iov_base, 0, b.part); /* pre-faulted: page faults are not measured */
    }
    double cpu0 = cpu_seconds();
    uint64_t t0 = ingot_time_ns();
    b.outstanding = inflight;
    for (int i = 0; i < inflight; i++) submit_next(&b, &slots[i]);
    pthread_mutex_lock(&b.lock);
    while (b.outstanding > 0) pthread_cond_wait(&b.cond, &b.lock);
    pthread_mutex_unlock(&b.lock);
    double secs = (double)(ingot_time_ns() - t0) / 1e9, cpu = cpu_seconds() - cpu0;
    report(&b, inflight, conns, secs, cpu);
    ingot_objstore_object_destroy(b.object);
    ingot_objstore_destroy(b.client);
    for (int i = 0; i < inflight; i++) free(slots[i].iov.iov_base);
    free(slots);
    return b.failed;
}
