/*
 * Helpers of the integration scenarios (it_seaweed.c, it_recorder.c), each run by
 * integration.py as "it_X SCENARIO" with the servers up and the environment set: clients and
 * objects, blocking and asynchronous reads checked byte for byte against the objects' known
 * contents (harness.content), message checks.
 */
#ifndef INGOT_TEST_OBJSTORE_IT_UTIL_H
#define INGOT_TEST_OBJSTORE_IT_UTIL_H

#include "test.h"
#include "client/objstore.h"
#include "base/time.h"
#include <pthread.h>

/** Byte @p i of the object @p key (harness.py pattern_byte/key_seed). */
static inline unsigned char it_byte(const char *key, uint64_t i)
{
    unsigned seed = 0;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) seed += *p;
    seed %= 251;
    return (unsigned char)(((i * 2654435761ull) >> 13) ^ seed);
}

static inline const char *it_env(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL) {
        fprintf(stderr, "%s is not set (run through integration.py)\n", name);
        exit(2);
    }
    return v;
}

static inline ingot_objstore_t *it_client(const char *url)
{
    ingot_objstore_params_t p = {.field_mask = url ? INGOT_OBJSTORE_PARAM_URL : 0, .url = url};
    ingot_objstore_t *c = NULL;
    CHECK_OK(ingot_objstore_create(&p, &c));
    return c;
}

static inline ingot_objstore_object_t *it_object(ingot_objstore_t *c, const char *bucket,
                                                 const char *key)
{
    char url[2048];
    ingot_objstore_object_t *o = NULL;
    CHECK(snprintf(url, sizeof(url), "s3://%s/%s", bucket, key) < (int)sizeof(url));
    CHECK_OK(ingot_objstore_object_create(c, url, &o));
    return o;
}

/** Check that @p msg names every one of the NULL-terminated @p needles and not @p secret. */
static inline void it_names(const char *msg, const char *secret, const char *const *needles)
{
    for (; *needles != NULL; needles++) CHECK_CONTAINS(msg, *needles);
    if (secret != NULL && strstr(msg, secret) != NULL) {
        fprintf(stderr, "a secret in the message: %s\n", msg);
        exit(1);
    }
}

/** Check that a failed request's message names its bucket, key and byte range. */
static inline void it_names_request(const ingot_objstore_req_t *req, const char *bucket,
                                    const char *key)
{
    char b[300], k[1200], r[80];
    snprintf(b, sizeof(b), "bucket '%s'", bucket);
    snprintf(k, sizeof(k), "key '%s'", key);
    snprintf(r, sizeof(r), "bytes %llu-%llu", (unsigned long long)req->offset,
             (unsigned long long)(req->offset + req->length - 1));
    it_names(req->message, NULL, (const char *[]){b, k, r, NULL});
}

/** Guard byte around read buffers: a byte written outside the range shows. */
#define IT_GUARD 0xA5

/**
 * Read bytes [off, off + len) of @p key into three iovecs (a guard byte around each) and check
 * them against the key's content when the read succeeds; the guards always.
 */
static inline ingot_status_t it_read(ingot_objstore_t *c, const ingot_objstore_object_t *o,
                                     const char *key, uint64_t off, uint64_t len, uint64_t size,
                                     const char *etag, double deadline_s, ingot_objstore_req_t *req)
{
    unsigned char *buf = malloc(len + 4);
    uint64_t a = len / 3, b = len / 3;
    CHECK(buf != NULL);
    memset(buf, IT_GUARD, len + 4);
    struct iovec iov[3] = {{buf + 1, a}, {buf + 2 + a, b}, {buf + 3 + a + b, len - a - b}};
    memset(req, 0, sizeof(*req));
    req->object = o;
    req->offset = off;
    req->length = len;
    req->object_size = size;
    req->etag = etag;
    req->iov = iov;
    req->iovcnt = 3;
    req->deadline_ns = ingot_deadline_after((uint64_t)(deadline_s * 1e9));
    ingot_status_t st = ingot_objstore_read(c, req);
    CHECK(buf[0] == IT_GUARD && buf[1 + a] == IT_GUARD && buf[2 + a + b] == IT_GUARD &&
          buf[len + 3] == IT_GUARD);
    for (uint64_t i = 0; st == INGOT_OK && i < len; i++) {
        unsigned char got = i < a ? buf[1 + i] : i < a + b ? buf[2 + i] : buf[3 + i];
        if (got != it_byte(key, off + i)) {
            fprintf(stderr, "%s: byte %llu is %u, want %u\n", key, (unsigned long long)(off + i),
                    got, it_byte(key, off + i));
            exit(1);
        }
    }
    free(buf);
    return st;
}

/** Many requests completing on the I/O thread: a counter the test waits on. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, failed;
} it_batch_t;

static inline void it_batch_cb(ingot_objstore_req_t *req)
{
    it_batch_t *b = req->arg;
    pthread_mutex_lock(&b->lock);
    b->done++;
    if (req->status != INGOT_OK) b->failed++;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

/** Wait until @p n requests of @p b completed; fail the test after @p limit_s seconds. */
static inline void it_batch_wait(it_batch_t *b, int n, double limit_s)
{
    uint64_t end = ingot_deadline_after((uint64_t)(limit_s * 1e9));
    pthread_mutex_lock(&b->lock);
    while (b->done < n) {
        pthread_mutex_unlock(&b->lock);
        CHECK(ingot_time_ns() < end); /* nothing hangs */
        usleep(2000);
        pthread_mutex_lock(&b->lock);
    }
    pthread_mutex_unlock(&b->lock);
}

static inline double it_seconds_since(uint64_t t0)
{
    return (double)(ingot_time_ns() - t0) / 1e9;
}

#endif
