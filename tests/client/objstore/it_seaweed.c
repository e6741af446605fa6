/*
 * Scenarios against a real S3 server (SeaweedFS), directly or through the fault proxy, run by
 * integration.py as "it_seaweed SCENARIO". The objects and their sizes and ETags are listed in
 * $INGOT_IT_OBJECTS ("SIZE ETAG KEY" lines, uploaded by the driver); the bucket is
 * $INGOT_IT_BUCKET; endpoint and credentials come the AWS way (AWS_ENDPOINT_URL, ...).
 */
#include "it_util.h"
#include "loopback.h"

#define MAX_OBJECTS 64

typedef struct {
    char key[1100];
    char etag[INGOT_OBJSTORE_ETAG_MAX + 1];
    uint64_t size;
} it_obj_t;

static it_obj_t objs[MAX_OBJECTS];
static int nobjs;
static const char *bucket;

static void load_objects(void)
{
    FILE *f = fopen(it_env("INGOT_IT_OBJECTS"), "r");
    char line[1300];
    CHECK(f != NULL);
    while (nobjs < MAX_OBJECTS && fgets(line, sizeof(line), f) != NULL) {
        it_obj_t *o = &objs[nobjs];
        int at = 0;
        line[strcspn(line, "\n")] = '\0';
        CHECK(sscanf(line, "%llu %128s %n", (unsigned long long *)&o->size, o->etag, &at) == 2);
        snprintf(o->key, sizeof(o->key), "%s", line + at);
        nobjs++;
    }
    fclose(f);
    CHECK(nobjs > 0);
}

static const it_obj_t *find(const char *key)
{
    for (int i = 0; i < nobjs; i++) {
        if (strcmp(objs[i].key, key) == 0) return &objs[i];
    }
    fprintf(stderr, "no object %s in INGOT_IT_OBJECTS\n", key);
    exit(2);
}

static const it_obj_t *largest(void)
{
    const it_obj_t *big = &objs[0];
    for (int i = 1; i < nobjs; i++) big = objs[i].size > big->size ? &objs[i] : big;
    return big;
}

static ingot_objstore_t *s3_client(void)
{
    char url[256];
    snprintf(url, sizeof(url), "s3://%s/", bucket);
    return it_client(url);
}

/* ------------------------------------------------------------------ the clean path */

static void check_listing(ingot_objstore_t *c)
{
    ingot_objstore_listing_t l;
    char url[256];
    snprintf(url, sizeof(url), "s3://%s/", bucket);
    CHECK_OK(ingot_objstore_list(c, url, 2, 1000, ingot_deadline_after(10 * INGOT_NSEC_PER_SEC),
                                 &l));
    CHECK(l.count == (size_t)nobjs && l.pages >= (uint32_t)(nobjs + 1) / 2);
    for (size_t i = 0; i < l.count; i++) {
        const it_obj_t *o = find(l.entries[i].key); /* every key decoded exactly */
        CHECK(l.entries[i].size == o->size && strcmp(l.entries[i].etag, o->etag) == 0);
    }
    ingot_objstore_listing_free(&l);
}

static void check_whole_gets(ingot_objstore_t *c)
{
    for (int i = 0; i < nobjs; i++) {
        ingot_objstore_object_t *o = it_object(c, bucket, objs[i].key);
        char etag[INGOT_OBJSTORE_ETAG_MAX + 1];
        void *data = NULL;
        size_t size = 0;
        CHECK_OK(ingot_objstore_get(c, o, 64 << 20, ingot_deadline_after(10 * INGOT_NSEC_PER_SEC),
                                    &data, &size, etag));
        CHECK(size == objs[i].size && strcmp(etag, objs[i].etag) == 0);
        for (size_t k = 0; k < size; k++)
            CHECK(((unsigned char *)data)[k] == it_byte(objs[i].key, k));
        free(data);
        ingot_objstore_object_destroy(o);
    }
}

typedef struct {
    ingot_objstore_req_t req;
    struct iovec iov[2];
    unsigned char *buf;
    const it_obj_t *obj;
} async_read_t;

static void check_async_ranges(ingot_objstore_t *c, int n)
{
    it_batch_t b = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    ingot_objstore_object_t *os[MAX_OBJECTS];
    async_read_t *r = calloc((size_t)n, sizeof(*r));
    uint64_t rng = 7;
    for (int i = 0; i < nobjs; i++) os[i] = it_object(c, bucket, objs[i].key);
    for (int i = 0; i < n; i++) {
        int k = i % nobjs;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t off = (rng >> 20) % objs[k].size, len = 1 + (rng >> 40) % (objs[k].size - off);
        r[i].obj = &objs[k];
        r[i].buf = malloc(len);
        r[i].iov[0] = (struct iovec){r[i].buf, len / 2};
        r[i].iov[1] = (struct iovec){r[i].buf + len / 2, len - len / 2};
        r[i].req = (ingot_objstore_req_t){.object = os[k],
                                          .offset = off,
                                          .length = len,
                                          .object_size = objs[k].size,
                                          .etag = objs[k].etag,
                                          .iov = r[i].iov,
                                          .iovcnt = 2,
                                          .cb = it_batch_cb,
                                          .arg = &b};
        r[i].req.deadline_ns = ingot_deadline_after(30 * INGOT_NSEC_PER_SEC);
        CHECK_OK(ingot_objstore_submit(c, &r[i].req));
    }
    it_batch_wait(&b, n, 60);
    CHECK(b.failed == 0);
    for (int i = 0; i < n; i++) {
        for (uint64_t k = 0; k < r[i].req.length; k++) {
            CHECK(r[i].buf[k] == it_byte(r[i].obj->key, r[i].req.offset + k));
        }
        free(r[i].buf);
    }
    for (int i = 0; i < nobjs; i++) ingot_objstore_object_destroy(os[i]);
    free(r);
}

static void scenario_basic(void)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_identity_t id;
    ingot_objstore_stats_t s;

    ingot_objstore_identity(c, &id);
    CHECK_CONTAINS(id.endpoint, it_env("AWS_ENDPOINT_URL"));
    CHECK(strcmp(id.credential_source, "env") == 0);
    check_listing(c);
    check_whole_gets(c);
    check_async_ranges(c, 300);
    ingot_objstore_stats(c, &s);
    /* no retry: one attempt per request, besides the hedges a busy machine may start (a GET
     * behind the client's recent pace); a hedge that lost was cancelled, so its latency is not
     * counted */
    CHECK(s.failed == 0 && s.requests + s.hedges == s.attempts);
    CHECK(s.latency_count >= s.requests && s.latency_count <= s.attempts);
    CHECK(s.latency_p50_ns > 0 && s.latency_p50_ns <= s.latency_p99_ns);
    printf("basic: %llu requests, %llu bytes, p50 %.2f ms, p99 %.2f ms\n",
           (unsigned long long)s.requests, (unsigned long long)s.bytes, s.latency_p50_ns / 1e6,
           s.latency_p99_ns / 1e6);
    ingot_objstore_destroy(c);
}

/* ------------------------------------------------------------------ bad inputs */

static void expect_fail(ingot_objstore_t *c, const char *key, uint64_t off, uint64_t len,
                        uint64_t size, const char *etag, ingot_status_t want,
                        const char *const *needles)
{
    ingot_objstore_object_t *o = it_object(c, bucket, key);
    ingot_objstore_req_t req;
    CHECK_STATUS(it_read(c, o, key, off, len, size, etag, 10, &req), want);
    CHECK(strcmp(ingot_last_error(), req.message) == 0);
    it_names(req.message, getenv("AWS_SECRET_ACCESS_KEY"), needles);
    it_names_request(&req, bucket, key);
    printf("  named: %s\n", req.message);
    ingot_objstore_object_destroy(o);
}

static void scenario_errors(void)
{
    ingot_objstore_t *c = s3_client();
    const char *ep = it_env("AWS_ENDPOINT_URL");
    const it_obj_t *big = largest();
    char bkt[128], sizes[64];
    snprintf(bkt, sizeof(bkt), "bucket '%s'", bucket);

    expect_fail(c, "no/such-key.tar", 0, 10, INGOT_OBJSTORE_SIZE_UNKNOWN, NULL, INGOT_ERR_NOT_FOUND,
                (const char *[]){ep, bkt, "key 'no/such-key.tar'", "bytes 0-9", "HTTP 404", NULL});
    expect_fail(c, "x", 0, 10, INGOT_OBJSTORE_SIZE_UNKNOWN, NULL, INGOT_ERR_NOT_FOUND,
                (const char *[]){ep, "HTTP 404", NULL});
    /* another bucket */
    ingot_objstore_object_t *o = NULL;
    ingot_objstore_req_t req;
    CHECK_OK(ingot_objstore_object_create(c, "s3://no-such-bucket-ingot/k.tar", &o));
    CHECK_STATUS(it_read(c, o, "k.tar", 0, 5, INGOT_OBJSTORE_SIZE_UNKNOWN, NULL, 10, &req),
                 INGOT_ERR_NOT_FOUND);
    it_names(req.message, NULL,
             (const char *[]){"bucket 'no-such-bucket-ingot'", "HTTP 404", "NoSuchBucket", NULL});
    printf("  named: %s\n", req.message);
    ingot_objstore_object_destroy(o);

    /* the object was replaced after its ETag and size were recorded */
    const it_obj_t *rep = find(it_env("INGOT_IT_REPLACED_KEY"));
    expect_fail(c, rep->key, 0, 10, rep->size, it_env("INGOT_IT_OLD_ETAG"), INGOT_ERR_MISMATCH,
                (const char *[]){"HTTP 412", "replaced", NULL});
    uint64_t old_size = strtoull(it_env("INGOT_IT_OLD_SIZE"), NULL, 10);
    snprintf(sizes, sizeof(sizes), "the object has %llu bytes, %llu were recorded",
             (unsigned long long)rep->size, (unsigned long long)old_size);
    expect_fail(c, rep->key, 0, 10, old_size, NULL, INGOT_ERR_MISMATCH,
                (const char *[]){"size mismatch", sizes, NULL});
    /* a range past the object's end */
    expect_fail(c, big->key, big->size + 100, 10, INGOT_OBJSTORE_SIZE_UNKNOWN, NULL,
                INGOT_ERR_OUT_OF_RANGE, (const char *[]){"HTTP 416", NULL});
    ingot_objstore_destroy(c);
}

/* @p r refused at submit, the message saying @p why and naming its range. */
static void submit_refused(ingot_objstore_t *c, ingot_objstore_req_t *r, const char *why)
{
    char want[256];
    CHECK_STATUS(ingot_objstore_submit(c, r), INGOT_ERR_INVALID_PARAM);
    snprintf(want, sizeof(want), "request refused: %s (offset %llu, length %llu)", why,
             (unsigned long long)r->offset, (unsigned long long)r->length);
    CHECK_CONTAINS(ingot_last_error(), want);
}

static void scenario_requests_refused(void)
{
    ingot_objstore_t *c = s3_client();
    const it_obj_t *big = largest();
    ingot_objstore_object_t *o = it_object(c, bucket, big->key), *bad = NULL;
    char buf[16];
    struct iovec iov = {buf, sizeof(buf)};
    ingot_objstore_req_t r = {.object = o,
                              .offset = 0,
                              .length = 16,
                              .object_size = big->size,
                              .iov = &iov,
                              .iovcnt = 1,
                              .deadline_ns = ingot_deadline_after(1e9)};
    r.length = 0;
    submit_refused(c, &r, "an empty range or no iovecs");
    r.length = 15; /* iovecs hold 16 */
    submit_refused(c, &r, "iovecs that do not add up to the length");
    r.length = 16;
    r.offset = big->size - 8; /* past the recorded size */
    submit_refused(c, &r, "a range past the object's recorded size");
    const char *urls[] = {"s3:/x",        "s3://",      "s3://bucket",
                          "s3://bucket/", "s3://b c/k", "ftp://x/y"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        CHECK_STATUS(ingot_objstore_object_create(c, urls[i], &bad), INGOT_ERR_INVALID_PARAM);
        CHECK_CONTAINS(ingot_last_error(), urls[i]);
    }
    ingot_objstore_listing_t l;
    CHECK_STATUS(ingot_objstore_list(c, "https://host/prefix/", 0, 10, ingot_deadline_after(1e9),
                                     &l),
                 INGOT_ERR_UNSUPPORTED);
    ingot_objstore_object_destroy(o);
    ingot_objstore_destroy(c);
}

static void scenario_wrong_secret(void)
{
    ingot_objstore_t *c = s3_client();
    const it_obj_t *big = largest();
    expect_fail(c, big->key, 0, 100, big->size, NULL, INGOT_ERR_PERMISSION,
                (const char *[]){it_env("AWS_ENDPOINT_URL"), "HTTP 403", "bytes 0-99", NULL});
    ingot_objstore_destroy(c);
}

static void expect_create_fails(ingot_status_t want, const char *const *needles)
{
    ingot_objstore_params_t p = {.field_mask = INGOT_OBJSTORE_PARAM_URL, .url = "s3://b/k"};
    ingot_objstore_t *c = NULL;
    uint64_t t0 = ingot_time_ns();
    CHECK_STATUS(ingot_objstore_create(&p, &c), want);
    CHECK(it_seconds_since(t0) < 3); /* bounded */
    it_names(ingot_last_error(), NULL, needles);
    printf("  named: %s\n", ingot_last_error());
}

static void scenario_no_credentials(void)
{
    int fd;
    char url[64];
    expect_create_fails(INGOT_ERR_NOT_FOUND,
                        (const char *[]){"no credentials", "AWS_ACCESS_KEY_ID", NULL});
    setenv("AWS_PROFILE", "ghost", 1);
    expect_create_fails(INGOT_ERR_NOT_FOUND, (const char *[]){"profile 'ghost'", NULL});
    unsetenv("AWS_PROFILE");
    /* the metadata service: silent (bounded by INGOT_S3_IMDS_TIMEOUT, set to 500ms) */
    unsetenv("AWS_EC2_METADATA_DISABLED");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", test_loopback_port(1, &fd));
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
    expect_create_fails(INGOT_ERR_TIMED_OUT, (const char *[]){url, "INGOT_S3_IMDS_TIMEOUT", NULL});
    close(fd);
}

/* ------------------------------------------------------------------ faults */

/* A read of 10 bytes of "any.tar" from a loopback endpoint that never answers (@p listening: it
 * takes the connection; else nobody listens, every attempt refused at once) with a deadline of
 * @p deadline_s: its status; the endpoint into @p ep, the request into @p req, the seconds from
 * submission to its end into *@p took_p. AWS_ENDPOINT_URL is left as it was. */
static ingot_status_t read_silent(int listening, double deadline_s, char *ep, size_t eplen,
                                  ingot_objstore_req_t *req, double *took_p)
{
    int fd;
    char was[512];
    snprintf(was, sizeof(was), "%s", it_env("AWS_ENDPOINT_URL"));
    snprintf(ep, eplen, "http://127.0.0.1:%d", test_loopback_port(listening, &fd));
    setenv("AWS_ENDPOINT_URL", ep, 1);
    ingot_objstore_t *c = s3_client();
    setenv("AWS_ENDPOINT_URL", was, 1);
    ingot_objstore_object_t *o = it_object(c, bucket, "any.tar");
    uint64_t t0 = ingot_time_ns();
    ingot_status_t st = it_read(c, o, "any.tar", 0, 10, 100, NULL, deadline_s, req);
    *took_p = it_seconds_since(t0);
    ingot_objstore_object_destroy(o);
    ingot_objstore_destroy(c);
    if (fd >= 0) {
        close(fd);
    }
    return st;
}

/* How late past its deadline a client ends a request on this machine now: the slowest of
 * three reads from a server that takes the connection and never answers, with a deadline of
 * 0.3 s (below INGOT_S3_STALL_TIMEOUT: ended by the deadline). The bounds on a request ended
 * at its deadline grow with it: a loaded machine wakes the I/O thread late, which says nothing
 * of the client. */
static double lateness_baseline(void)
{
    double late = 0, took;
    char ep[64];
    ingot_objstore_req_t req;
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(read_silent(1, 0.3, ep, sizeof(ep), &req, &took), INGOT_ERR_TIMED_OUT);
        late = took - 0.3 > late ? took - 0.3 : late;
    }
    return late;
}

/* Past the deadline by at most a second and a half, plus 4 times this machine's baseline. */
#define LATE_MAX_S(base) (1.5 + 4 * (base))

static void scenario_server_down(void)
{
    char ep[64];
    double base = lateness_baseline(), took;
    ingot_objstore_req_t req;
    CHECK_STATUS(read_silent(0, 2.0, ep, sizeof(ep), &req, &took), INGOT_ERR_TIMED_OUT);
    CHECK(took > 1.0 && took - 2.0 < LATE_MAX_S(base) && req.retries > 2);
    it_names_request(&req, bucket, "any.tar");
    it_names(req.message, NULL, (const char *[]){ep, "deadline", "retries", "connect", NULL});
    printf("  named after %.2f s (lateness baseline %.3f s): %s\n", took, base, req.message);
}

/* Read the largest object whole in 1 MiB-or-less ranges; all must succeed. */
static void read_all_ok(ingot_objstore_t *c, int rounds)
{
    const it_obj_t *big = largest();
    ingot_objstore_object_t *o = it_object(c, bucket, big->key);
    ingot_objstore_req_t req;
    for (int i = 0; i < rounds; i++) {
        uint64_t off = (uint64_t)i * 65536 % big->size,
                 len = big->size - off < 65536 ? big->size - off : 65536;
        CHECK_OK(it_read(c, o, big->key, off, len, big->size, big->etag, 30, &req));
    }
    CHECK_OK(it_read(c, o, big->key, 0, big->size, big->size, big->etag, 30, &req));
    ingot_objstore_object_destroy(o);
}

static void print_stats(const char *what, ingot_objstore_t *c, ingot_objstore_stats_t *s)
{
    ingot_objstore_stats(c, s);
    printf("%s: requests %llu, attempts %llu, retries throttle %llu server %llu network %llu "
           "stall %llu, throttle events %llu\n",
           what, (unsigned long long)s->requests, (unsigned long long)s->attempts,
           (unsigned long long)s->retries[INGOT_OBJSTORE_RETRY_THROTTLE],
           (unsigned long long)s->retries[INGOT_OBJSTORE_RETRY_SERVER],
           (unsigned long long)s->retries[INGOT_OBJSTORE_RETRY_NETWORK],
           (unsigned long long)s->retries[INGOT_OBJSTORE_RETRY_STALL],
           (unsigned long long)s->throttle_events);
}

/* Faults that are retried away: the reads succeed, the counters show the retries. */
static void scenario_retried(const char *cls_name, int cls, int min_retries)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_stats_t s;
    read_all_ok(c, 40);
    print_stats(cls_name, c, &s);
    CHECK(s.failed == 0 && s.retries[cls] >= (uint64_t)min_retries);
    if (cls == INGOT_OBJSTORE_RETRY_THROTTLE) CHECK(s.throttle_events >= 1);
    ingot_objstore_destroy(c);
}

/* Faults every attempt meets: the request fails by its deadline (3 s), named; nothing hangs
 * (how late it may end grows with the machine's lateness baseline). */
static void scenario_always(ingot_status_t want, const char *const *needles)
{
    double base = lateness_baseline();
    ingot_objstore_t *c = s3_client();
    const it_obj_t *big = largest();
    ingot_objstore_object_t *o = it_object(c, bucket, big->key);
    ingot_objstore_req_t req;
    uint64_t t0 = ingot_time_ns();
    CHECK_STATUS(it_read(c, o, big->key, 0, big->size, big->size, NULL, 3.0, &req), want);
    double took = it_seconds_since(t0);
    CHECK(took - 3.0 < LATE_MAX_S(base) && (want != INGOT_ERR_TIMED_OUT || took > 2.5));
    it_names(req.message, NULL, needles);
    it_names_request(&req, bucket, big->key);
    printf("  named after %.2f s (%u retries; lateness baseline %.3f s): %s\n", took, req.retries,
           base, req.message);
    ingot_objstore_object_destroy(o);
    ingot_objstore_destroy(c);
}

/* A few reads: the driver checks which way they went (http_proxy, NO_PROXY). */
static void scenario_plain_read(void)
{
    ingot_objstore_t *c = s3_client();
    const it_obj_t *big = largest();
    ingot_objstore_object_t *o = it_object(c, bucket, big->key);
    ingot_objstore_req_t req;
    CHECK_OK(it_read(c, o, big->key, 0, 1 << 20, big->size, big->etag, 10, &req));
    CHECK_OK(it_read(c, o, big->key, 1000, 5000, big->size, big->etag, 10, &req));
    ingot_objstore_object_destroy(o);
    ingot_objstore_destroy(c);
}

static void scenario_short(void)
{
    ingot_objstore_t *c = s3_client();
    const it_obj_t *big = largest();
    expect_fail(c, big->key, 0, big->size, big->size, NULL, INGOT_ERR_MISMATCH,
                (const char *[]){"short", "HTTP 206", NULL});
    ingot_objstore_destroy(c);
}

static const char *proxy_ep;

static void slowdown_20(void)
{
    scenario_retried("slowdown-20", INGOT_OBJSTORE_RETRY_THROTTLE, 1);
}
static void error500(void)
{
    scenario_retried("error500", INGOT_OBJSTORE_RETRY_SERVER, 2);
}
static void reset(void)
{
    scenario_retried("reset", INGOT_OBJSTORE_RETRY_NETWORK, 2);
}
static void truncate_once(void)
{
    scenario_retried("truncate", INGOT_OBJSTORE_RETRY_NETWORK, 1);
}
static void stall_once(void)
{
    scenario_retried("stall-once", INGOT_OBJSTORE_RETRY_STALL, 1);
}
/* The same stall with hedging on and the stall timeout far off (30 s): a hedge asks for the
 * missing bytes once the body has gone quiet, wins, and the reads end long before the timeout. */
static void stall_hedged(void)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_stats_t s;
    uint64_t t0 = ingot_time_ns();
    read_all_ok(c, 40);
    double took = it_seconds_since(t0);
    print_stats("stall-hedged", c, &s);
    printf("  hedges %llu, won %llu, %.2f s\n", (unsigned long long)s.hedges,
           (unsigned long long)s.hedge_wins, took);
    CHECK(s.failed == 0 && s.hedges >= 1 && s.hedge_wins >= 1);
    CHECK(s.retries[INGOT_OBJSTORE_RETRY_STALL] == 0 && took < 15);
    ingot_objstore_destroy(c);
}
static void slowdown_100(void)
{
    scenario_always(INGOT_ERR_TIMED_OUT,
                    (const char *[]){proxy_ep, "HTTP 503 SlowDown", "retries", NULL});
}
static void stall_always(void)
{
    scenario_always(INGOT_ERR_TIMED_OUT, (const char *[]){proxy_ep, "stalled", "retries", NULL});
}
static void max_retries(void)
{
    scenario_always(INGOT_ERR_IO, (const char *[]){proxy_ep, "HTTP 500 InternalError",
                                                   "INGOT_S3_MAX_RETRIES reached after 2", NULL});
}
static void retry_budget(void)
{
    /* spent after 2 retries: the request goes on, slowed, until its deadline */
    scenario_always(INGOT_ERR_TIMED_OUT, (const char *[]){proxy_ep, "HTTP 500", "deadline reached",
                                                          "INGOT_S3_RETRY_BUDGET spent", NULL});
}

static const struct {
    const char *name;
    void (*run)(void);
} scenarios[] = {
    {"basic", scenario_basic},
    {"errors", scenario_errors},
    {"refused", scenario_requests_refused},
    {"wrong-secret", scenario_wrong_secret},
    {"no-credentials", scenario_no_credentials},
    {"server-down", scenario_server_down},
    {"slowdown-20", slowdown_20},
    {"error500", error500},
    {"reset", reset},
    {"truncate", truncate_once},
    {"stall-once", stall_once},
    {"stall-hedged", stall_hedged},
    {"slowdown-100", slowdown_100},
    {"stall-always", stall_always},
    {"max-retries", max_retries},
    {"retry-budget", retry_budget},
    {"short", scenario_short},
    {"plain-read", scenario_plain_read},
};

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    proxy_ep = getenv("AWS_ENDPOINT_URL");
    bucket = it_env("INGOT_IT_BUCKET");
    load_objects();
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].run();
            printf("it_seaweed %s: ok\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
