/*
 * The process-wide clients (ingot_objstore_shared): keyed by what they are, endpoint, region and
 * the credentials' identity, never by scheme. Two buckets at two endpoints in one process get a
 * client each; the buckets of one endpoint share one; another region or another principal gets
 * its own; an http(s) host is a client of its own, unsigned, even where an s3 endpoint is the
 * same host. No request is made: a client resolves its settings at create and starts its I/O
 * thread, nothing more. HOME and every AWS_* variable are the test's own.
 */
#include "test.h"
#include "aws_env.h"
#include "client/objstore.h"
#include "base/log.h"
#include <sys/stat.h>

#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static char home[600];

static void clean_env(void)
{
    aws_env_clean(home);
    setenv("AWS_ACCESS_KEY_ID", "AKIDSHARED", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
}

/* The shared client of @p url; its identity (written into the location) checked against
 * @p endpoint (a part of it) and @p credentials, and never a secret. */
static ingot_objstore_t *shared(const char *url, const char *endpoint, const char *credentials)
{
    ingot_location_t loc;
    ingot_objstore_t *c = NULL;
    CHECK_OK(ingot_location_parse(url, INGOT_LOCATION_URL, &loc));
    CHECK_OK(ingot_objstore_shared(&loc, &c));
    CHECK(c != NULL);
    CHECK_CONTAINS(loc.endpoint, endpoint);
    CHECK(strcmp(loc.credentials, credentials) == 0);
    CHECK(strstr(loc.endpoint, SECRET) == NULL && strstr(loc.credentials, SECRET) == NULL);
    ingot_location_release(&loc);
    return c;
}

static void test_endpoints(void)
{
    clean_env();
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    ingot_objstore_t *one = shared("s3://bucket-a/x", "http://127.0.0.1:1 (path-style", "env");
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:2", 1);
    ingot_objstore_t *two = shared("s3://bucket-b/y", "http://127.0.0.1:2", "env");
    CHECK(one != two); /* two buckets at two endpoints: a client each */
    CHECK(shared("s3://bucket-a/z", "127.0.0.1:2", "env") == two); /* the endpoint decides */
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    CHECK(shared("s3://bucket-b/w", "127.0.0.1:1", "env") == one); /* one endpoint: one client */
    CHECK(shared("S3://bucket-c/", "127.0.0.1:1", "env") == one);  /* a prefix, any case */

    char d[INGOT_OBJSTORE_DESCRIBE_MAX];
    CHECK_CONTAINS(ingot_objstore_describe(one, d, sizeof(d)), "http://127.0.0.1:1");
    CHECK_CONTAINS(ingot_objstore_describe(two, d, sizeof(d)), "http://127.0.0.1:2");

    /* another region, another principal: other clients; the first one again after them */
    setenv("AWS_REGION", "eu-west-1", 1);
    ingot_objstore_t *region = shared("s3://bucket-a/x", "127.0.0.1:1", "env");
    CHECK(region != one && region != two);
    unsetenv("AWS_REGION");
    setenv("AWS_ACCESS_KEY_ID", "AKIDOTHER", 1);
    ingot_objstore_t *other = shared("s3://bucket-a/x", "127.0.0.1:1", "env");
    CHECK(other != one && other != two && other != region);
    setenv("AWS_ACCESS_KEY_ID", "AKIDSHARED", 1);
    CHECK(shared("s3://bucket-a/x", "127.0.0.1:1", "env") == one);
}

static void test_http(void)
{
    clean_env();
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    ingot_objstore_t *s3 = shared("s3://bucket-a/x", "127.0.0.1:1", "env");
    /* the same host over plain http: unsigned, not the signing client */
    ingot_objstore_t *web = shared("http://127.0.0.1:1/bucket-a/x", "http://127.0.0.1:1", "none");
    CHECK(web != s3);
    CHECK(shared("http://127.0.0.1:1/other/y", "http://127.0.0.1:1", "none") == web);
    ingot_objstore_t *web2 = shared("https://127.0.0.1:1/x", "https://127.0.0.1:1", "none");
    ingot_objstore_t *web3 = shared("http://localhost:1/x", "http://localhost:1", "none");
    CHECK(web2 != web && web3 != web && web2 != web3);
    ingot_objstore_identity_t id;
    ingot_objstore_identity(web, &id);
    CHECK(strcmp(id.credential_source, "none") == 0);
}

static void test_errors(void)
{
    ingot_location_t loc;
    ingot_objstore_t *c = NULL;
    clean_env();
    setenv("AWS_PROFILE", "nosuch", 1);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK_OK(ingot_location_parse("s3://bucket-a/x", INGOT_LOCATION_URL, &loc));
    CHECK_STATUS(ingot_objstore_shared(&loc, &c), INGOT_ERR_NOT_FOUND); /* named, no client */
    CHECK_CONTAINS(ingot_last_error(), "nosuch");
    CHECK(c == NULL);
    ingot_location_release(&loc);

    /* no credentials anywhere: the metadata service is the source, refused when the client is
     * made (the error is create's, said once) */
    unsetenv("AWS_PROFILE");
    CHECK_OK(ingot_location_parse("s3://bucket-a/x", INGOT_LOCATION_URL, &loc));
    CHECK_STATUS(ingot_objstore_shared(&loc, &c), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(ingot_last_error(), "no credentials");
    ingot_location_release(&loc);

    CHECK_OK(ingot_location_parse("/local/file", 0, &loc));
    CHECK_STATUS(ingot_objstore_shared(&loc, &c), INGOT_ERR_INVALID_PARAM);
    ingot_location_release(&loc);
}

int main(void)
{
    snprintf(home, sizeof(home), "%s", test_tmpdir());
    test_endpoints();
    test_http();
    test_errors();
    printf("shared clients: ok\n");
    return 0;
}
