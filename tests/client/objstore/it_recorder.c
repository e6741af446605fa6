/*
 * Scenarios against the loopback recorder (recorder.py), which checks every signature with
 * botocore as S3 would and plays the answers SeaweedFS cannot give, and the IMDSv2 stand-in
 * (imds.py). Run by integration.py as "it_recorder SCENARIO"; the bucket is $INGOT_IT_BUCKET,
 * the recorder's base URL $INGOT_IT_RECORDER, its region eu-west-1.
 */
#include "it_util.h"

static const char *bucket;

static ingot_objstore_t *s3_client(void)
{
    char url[256];
    snprintf(url, sizeof(url), "s3://%s/", bucket);
    return it_client(url);
}

static void read_ok(ingot_objstore_t *c, const char *key, uint64_t size)
{
    ingot_objstore_object_t *o = it_object(c, bucket, key);
    ingot_objstore_req_t req;
    CHECK_OK(it_read(c, o, key, 0, size, size, NULL, 10, &req));
    CHECK_OK(it_read(c, o, key, size / 3, size / 2, size, NULL, 10, &req));
    ingot_objstore_object_destroy(o);
}

static void expect_fail(ingot_objstore_t *c, const char *key, uint64_t size, double deadline_s,
                        ingot_status_t want, const char *const *needles)
{
    ingot_objstore_object_t *o = it_object(c, bucket, key);
    ingot_objstore_req_t req;
    CHECK_STATUS(it_read(c, o, key, 10, size - 20, size, NULL, deadline_s, &req), want);
    it_names(req.message, getenv("AWS_SECRET_ACCESS_KEY"), needles);
    it_names_request(&req, bucket, key);
    printf("  named: %s\n", req.message);
    ingot_objstore_object_destroy(o);
}

static void check_listing(ingot_objstore_t *c, uint32_t page_keys, uint32_t pages)
{
    static const char *const keys[] = {
        "list/a b.tar",   "list/a+b.tar",    "list/caf\xc3\xa9.tar",
        "list/k=v/x.tar", "list/pct%25.tar", "list/\xe6\x97\xa5\xe6\x9c\xac.tar",
        "list/z.tar"};
    ingot_objstore_listing_t l;
    char url[256];
    snprintf(url, sizeof(url), "s3://%s/list/", bucket);
    CHECK_OK(ingot_objstore_list(c, url, page_keys, 100, ingot_deadline_after(10e9), &l));
    CHECK(l.count == 7 && l.pages == pages);
    for (size_t i = 0; i < l.count; i++) {
        CHECK(strcmp(l.entries[i].key, keys[i]) == 0 && l.entries[i].size == 10 + i);
        CHECK(l.entries[i].etag[0] == '"');
    }
    ingot_objstore_listing_free(&l);
    CHECK_STATUS(ingot_objstore_list(c, url, 2, 5, ingot_deadline_after(10e9), &l),
                 INGOT_ERR_NO_RESOURCE);
}

static void scenario_sigv4(void)
{
    ingot_objstore_t *c = s3_client(), *plain = it_client(NULL);
    ingot_objstore_object_t *o = NULL;
    ingot_objstore_req_t req;
    void *data = NULL;
    size_t size = 0;
    char url[512];

    read_ok(c, "obj/1000/plain.bin", 1000);
    read_ok(c, "obj/300/a b+c=d%e/caf\xc3\xa9 \xe6\x97\xa5.bin", 300);
    read_ok(c, "obj/100/year=2024/month=01/part-0.tar", 100);
    read_ok(c, "obj/64/dots/./x/../y.bin", 64);
    read_ok(c, "obj/50/~tilde_-.bin", 50);
    o = it_object(c, bucket, "obj/5000/manifest.ingot");
    CHECK_OK(ingot_objstore_get(c, o, 1 << 20, ingot_deadline_after(10e9), &data, &size, NULL));
    CHECK(size == 5000 &&
          ((unsigned char *)data)[4999] == it_byte("obj/5000/manifest.ingot", 4999));
    free(data);
    ingot_objstore_object_destroy(o);
    CHECK_STATUS(ingot_objstore_get(c, o = it_object(c, bucket, "obj/5000/big"), 4096,
                                    ingot_deadline_after(10e9), &data, &size, NULL),
                 INGOT_ERR_OUT_OF_RANGE);
    ingot_objstore_object_destroy(o);
    check_listing(c, 2, 4);
    check_listing(c, 0, 1);
    /* unsigned http(s): a client without credentials */
    snprintf(url, sizeof(url), "%s/%s/public/100/x.bin", it_env("INGOT_IT_RECORDER"), bucket);
    CHECK_OK(ingot_objstore_object_create(plain, url, &o));
    CHECK_OK(it_read(plain, o, "public/100/x.bin", 0, 100, 100, NULL, 10, &req));
    ingot_objstore_object_destroy(o);
    CHECK_STATUS(ingot_objstore_object_create(plain, "s3://b/k", &o), INGOT_ERR_INVALID_PARAM);
    ingot_objstore_destroy(plain);
    ingot_objstore_destroy(c);
}

static void scenario_scripts(void)
{
    ingot_objstore_t *c = s3_client();
    const char *ep = it_env("AWS_ENDPOINT_URL");
    expect_fail(c, "script/200/1000/x", 1000, 10, INGOT_ERR_FORMAT,
                (const char *[]){ep, "HTTP 200", "ignored the Range", "bytes 10-989 of 1000",
                                 NULL});
    expect_fail(c, "script/badrange/1000/x", 1000, 10, INGOT_ERR_MISMATCH,
                (const char *[]){"Content-Range bytes 11-990 answers bytes 10-989", NULL});
    expect_fail(c, "script/short/1000/x", 1000, 10, INGOT_ERR_MISMATCH,
                (const char *[]){"short or long body", "Content-Length 490", NULL});
    expect_fail(c, "script/long/1000/x", 1000, 10, INGOT_ERR_MISMATCH,
                (const char *[]){"Content-Length 990", NULL});
    expect_fail(c, "script/301/1000/x", 1000, 10, INGOT_ERR_CONFIG,
                (const char *[]){"HTTP 301", "wrong region", "eu-central-1", "eu-west-1", NULL});
    expect_fail(c, "script/307/1000/x", 1000, 10, INGOT_ERR_CONFIG,
                (const char *[]){"HTTP 307", "eu-central-1", NULL});
    expect_fail(c, "script/slowdown/1000/x", 1000, 1.5, INGOT_ERR_TIMED_OUT,
                (const char *[]){"HTTP 503 SlowDown", "retries", NULL});
    expect_fail(c, "nothing/here", 1000, 10, INGOT_ERR_NOT_FOUND,
                (const char *[]){"HTTP 404 NoSuchKey", "key 'nothing/here'", NULL});
    ingot_objstore_destroy(c);
}

static void scenario_region(void)
{
    ingot_objstore_t *c = s3_client();
    expect_fail(c, "obj/100/x", 100, 10, INGOT_ERR_CONFIG,
                (const char *[]){"HTTP 400 AuthorizationHeaderMalformed", "region eu-west-1",
                                 "signed for us-east-1 (from AWS_REGION)", NULL});
    ingot_objstore_destroy(c);
}

static void check_auth_retry(ingot_objstore_t *c)
{
    ingot_objstore_stats_t s;
    read_ok(c, "obj/1000/after-expiry.bin", 1000);
    ingot_objstore_stats(c, &s);
    CHECK(s.retries[INGOT_OBJSTORE_RETRY_AUTH] == 1 && s.failed == 0);
}

static void scenario_expired_profile(void)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_identity_t id;
    const char *path = it_env("INGOT_IT_CRED_FILE");
    ingot_objstore_identity(c, &id);
    CHECK_CONTAINS(id.credential_source, "profile default from ");
    /* the credentials are renewed in the file after the client read them */
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f,
            "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
            "aws_session_token = fresh-token\n",
            it_env("INGOT_IT_KEY"), it_env("INGOT_IT_SECRET"));
    fclose(f);
    check_auth_retry(c);
    ingot_objstore_destroy(c);
}

static void scenario_expired_env(void)
{
    ingot_objstore_t *c = s3_client();
    expect_fail(c, "obj/100/x", 100, 10, INGOT_ERR_PERMISSION,
                (const char *[]){"ExpiredToken", "could not be renewed", NULL});
    ingot_objstore_destroy(c);
}

static void scenario_imds(void)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_identity_t id;
    char want[256];
    ingot_objstore_identity(c, &id);
    snprintf(want, sizeof(want), "imds (%s)", it_env("AWS_EC2_METADATA_SERVICE_ENDPOINT"));
    CHECK(strcmp(id.credential_source, want) == 0);
    check_auth_retry(c); /* the first token is refused as expired: the service gives another */
    ingot_objstore_destroy(c);
}

static void scenario_cancel(void)
{
    ingot_objstore_t *c = s3_client();
    ingot_objstore_object_t *o = it_object(c, bucket, "script/slowdown/1000/x");
    it_batch_t b = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    static char buf[8][100];
    struct iovec iov[8];
    ingot_objstore_req_t req[8];
    int taken_back = 0;
    uint64_t t0 = ingot_time_ns();

    for (int i = 0; i < 8; i++) {
        iov[i] = (struct iovec){buf[i], 100};
        req[i] = (ingot_objstore_req_t){.object = o,
                                        .length = 100,
                                        .object_size = 1000,
                                        .iov = &iov[i],
                                        .iovcnt = 1,
                                        .cb = it_batch_cb,
                                        .arg = &b};
        req[i].deadline_ns = ingot_deadline_after(60e9);
        CHECK_OK(ingot_objstore_submit(c, &req[i]));
    }
    for (int i = 0; i < 4; i++) {
        ingot_status_t st = ingot_objstore_cancel(c, &req[i]);
        CHECK(st == INGOT_OK || st == INGOT_ERR_BUSY);
        taken_back += st == INGOT_OK;
    }
    it_batch_wait(&b, 4 - taken_back, 5); /* the cancelled ones come back at once */
    ingot_objstore_destroy(c);            /* the others are cancelled by destroy */
    CHECK(b.done == 8 - taken_back && b.failed == b.done);
    for (int i = 4; i < 8; i++) CHECK(req[i].status == INGOT_ERR_CANCELED);
    CHECK(it_seconds_since(t0) < 5);
    ingot_objstore_object_destroy(o);
}

/* 40 reads of 100 bytes through @p c, submitted at once: seconds until all are back, none
 * failed. */
static double forty_reads(ingot_objstore_t *c)
{
    ingot_objstore_object_t *o = it_object(c, bucket, "obj/100/rate");
    it_batch_t b = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    static char buf[40][100];
    struct iovec iov[40];
    ingot_objstore_req_t req[40];
    uint64_t t0 = ingot_time_ns();
    for (int i = 0; i < 40; i++) {
        iov[i] = (struct iovec){buf[i], 100};
        req[i] = (ingot_objstore_req_t){.object = o,
                                        .length = 100,
                                        .object_size = 100,
                                        .iov = &iov[i],
                                        .iovcnt = 1,
                                        .cb = it_batch_cb,
                                        .arg = &b};
        req[i].deadline_ns = ingot_deadline_after(30e9);
        CHECK_OK(ingot_objstore_submit(c, &req[i]));
    }
    it_batch_wait(&b, 40, 20);
    double took = it_seconds_since(t0);
    CHECK(b.failed == 0);
    ingot_objstore_object_destroy(o);
    return took;
}

/* INGOT_S3_RATE_LIMIT=20: 40 reads take about 2 s (a burst of 2, then 20 a second), and the
 * cap adds no more than that, and a margin, to what the same reads take uncapped here now (the
 * baseline: a loaded machine slows both; capped, the waits overlap the service). */
static void scenario_rate(void)
{
    const ingot_objstore_config_t *cfg;
    CHECK_OK(ingot_objstore_config(&cfg));
    ingot_objstore_config_t uncapped = *cfg;
    uncapped.rate_limit = 0;
    char url[256];
    snprintf(url, sizeof(url), "s3://%s/", bucket);
    ingot_objstore_params_t p = {.field_mask = INGOT_OBJSTORE_PARAM_URL |
                                               INGOT_OBJSTORE_PARAM_CONFIG,
                                 .url = url,
                                 .config = &uncapped};
    ingot_objstore_t *c = NULL;
    CHECK_OK(ingot_objstore_create(&p, &c));
    double base = forty_reads(c);
    ingot_objstore_destroy(c);
    c = s3_client();
    double took = forty_reads(c);
    ingot_objstore_stats_t s;
    ingot_objstore_stats(c, &s);
    printf("rate: 40 requests at INGOT_S3_RATE_LIMIT=20 took %.2f s (%.2f s uncapped), %llu "
           "held\n",
           took, base, (unsigned long long)s.rate_waits);
    CHECK(took > 1.3 && took < 2.5 + base && s.rate_waits > 0);
    ingot_objstore_destroy(c);
}

static const struct {
    const char *name;
    void (*run)(void);
} scenarios[] = {
    {"sigv4", scenario_sigv4},
    {"scripts", scenario_scripts},
    {"region", scenario_region},
    {"expired-profile", scenario_expired_profile},
    {"expired-env", scenario_expired_env},
    {"imds", scenario_imds},
    {"cancel", scenario_cancel},
    {"rate", scenario_rate},
};

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    bucket = it_env("INGOT_IT_BUCKET");
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].run();
            printf("it_recorder %s: ok\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
