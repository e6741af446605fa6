/*
 * Request URLs: S3 key encoding vectors (space, '+', '=', '%', UTF-8), sorted queries with
 * continuation tokens, request URLs (path-style on an endpoint, virtual-hosted on AWS) and the
 * endpoint a message names. Parsing URLs is base's (tests/base/location/).
 */
#include "test.h"
#include "client/url.h"
#include <stdlib.h>

static void check_encode(const char *in, int keep_slash, const char *want)
{
    char out[256];
    size_t n = ingot_uri_encode(in, strlen(in), keep_slash, out, sizeof(out));
    if (strcmp(out, want) != 0 || n != strlen(want)) {
        fprintf(stderr, "encode(\"%s\") = \"%s\", want \"%s\"\n", in, out, want);
        exit(1);
    }
}

static void test_encode(void)
{
    check_encode("a b", 1, "a%20b");
    check_encode("a+b", 1, "a%2Bb");
    check_encode("year=2024/month=01/part-0.tar", 1, "year%3D2024/month%3D01/part-0.tar");
    check_encode("100%", 1, "100%25");
    check_encode("caf\xc3\xa9", 1, "caf%C3%A9"); /* UTF-8 bytes, upper-case hex */
    check_encode("\xe6\x97\xa5\xe6\x9c\xac", 1, "%E6%97%A5%E6%9C%AC");
    check_encode("AZaz09-_.~", 1, "AZaz09-_.~"); /* unreserved kept */
    check_encode("a/b", 1, "a/b");
    check_encode("a/b", 0, "a%2Fb"); /* query values */
    check_encode("!*'();:@&$,?#[]", 1, "%21%2A%27%28%29%3B%3A%40%26%24%2C%3F%23%5B%5D");
    check_encode("tab\tnl\n", 1, "tab%09nl%0A");
    /* truncation reports the needed length */
    char small[4];
    CHECK(ingot_uri_encode("a b", 3, 1, small, sizeof(small)) == 5);
    CHECK(strcmp(small, "a%2") == 0);
}

static void test_decode(void)
{
    char out[64];
    CHECK(ingot_uri_decode("a%20b+c%2Bd", 1, out) == 0);
    CHECK(strcmp(out, "a b c+d") == 0);
    CHECK(ingot_uri_decode("a+b", 0, out) == 0 && strcmp(out, "a+b") == 0);
    CHECK(ingot_uri_decode("%C3%a9", 0, out) == 0 && strcmp(out, "\xc3\xa9") == 0);
    CHECK(ingot_uri_decode("bad%zz", 0, out) == -1);
    CHECK(ingot_uri_decode("bad%2", 0, out) == -1);
}

static void check_query(const ingot_objstore_param_t *p, size_t n, const char *want)
{
    char *q = NULL;
    CHECK_OK(ingot_objstore_query_build(p, n, &q));
    if (strcmp(q, want) != 0) {
        fprintf(stderr, "query = \"%s\", want \"%s\"\n", q, want);
        exit(1);
    }
    free(q);
}

static void test_query(void)
{
    ingot_objstore_param_t list[] = {{"prefix", "train/a b"},
                                     {"list-type", "2"},
                                     {"encoding-type", "url"},
                                     {"continuation-token", "1/x+y=z=="}};
    check_query(list, 4,
                "continuation-token=1%2Fx%2By%3Dz%3D%3D&encoding-type=url&list-type=2&"
                "prefix=train%2Fa%20b");
    ingot_objstore_param_t empty[] = {{"prefix", ""}, {"list-type", "2"}};
    check_query(empty, 2, "list-type=2&prefix=");
    /* same name: sorted by value; sorting is on the encoded bytes */
    ingot_objstore_param_t dup[] = {{"k", "b"}, {"k", "a"}, {"K", "z"}};
    check_query(dup, 3, "K=z&k=a&k=b");
    check_query(NULL, 0, "");
}

/* The request URL of @p url on the endpoint @p base, and the endpoint its messages name (the
 * request URL's scheme and host, or the custom endpoint). */
static void check_request(const char *url, const char *base, int path_style, const char *want)
{
    ingot_location_t u;
    ingot_objstore_endpoint_t ep = {(char *)base, path_style};
    char *out = NULL, *endpoint = NULL;
    CHECK_OK(ingot_location_parse(url, INGOT_LOCATION_URL | INGOT_LOCATION_OBJECT, &u));
    CHECK_OK(ingot_objstore_url_request(&u, &ep, "eu-west-1", &out));
    CHECK_OK(ingot_objstore_url_endpoint(&u, &ep, "eu-west-1", &endpoint));
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "request(%s) = %s, want %s\n", url, out, want);
        exit(1);
    }
    size_t n = strlen(endpoint);
    if (strncmp(out, endpoint, n) != 0 || out[n] != '/' || (base && strcmp(endpoint, base) != 0)) {
        fprintf(stderr, "endpoint(%s) = %s, not the start of %s\n", url, endpoint, out);
        exit(1);
    }
    free(out);
    free(endpoint);
    ingot_location_release(&u);
}

static void test_request_urls(void)
{
    check_request("s3://data/k=v/a b.tar", "http://127.0.0.1:8333", 1,
                  "http://127.0.0.1:8333/data/k%3Dv/a%20b.tar");
    check_request("s3://data/x", "https://minio.example:9000/base", 1,
                  "https://minio.example:9000/base/data/x");
    check_request("s3://my-bucket/caf\xc3\xa9", NULL, 0,
                  "https://my-bucket.s3.eu-west-1.amazonaws.com/caf%C3%A9");
    check_request("s3://my.dotted.bucket/x", NULL, 0,
                  "https://s3.eu-west-1.amazonaws.com/my.dotted.bucket/x");
    check_request("s3://Upper_Case/x", NULL, 0, "https://s3.eu-west-1.amazonaws.com/Upper_Case/x");
    check_request("s3://my-bucket/x", NULL, 1, "https://s3.eu-west-1.amazonaws.com/my-bucket/x");
    check_request("https://host:8443/a%20b/c.tar", NULL, 0, "https://host:8443/a%20b/c.tar");

    check_request("HTTP://host/x", NULL, 0, "http://host/x");

    ingot_location_t u;
    ingot_objstore_endpoint_t ep = {"http://127.0.0.1:9", 1};
    char *out = NULL;
    CHECK_OK(ingot_location_parse("s3://b/pre fix/", INGOT_LOCATION_URL, &u));
    CHECK_OK(ingot_objstore_url_bucket(&u, &ep, "us-east-1", &out));
    CHECK(strcmp(out, "http://127.0.0.1:9/b/") == 0);
    free(out);
    ingot_location_release(&u);
    CHECK_OK(ingot_location_parse("http://h/x", INGOT_LOCATION_URL, &u));
    CHECK_STATUS(ingot_objstore_url_bucket(&u, &ep, "us-east-1", &out), INGOT_ERR_UNSUPPORTED);
    ingot_location_release(&u);
}

int main(void)
{
    test_encode();
    test_decode();
    test_query();
    test_request_urls();
    printf("objstore url: ok\n");
    return 0;
}
