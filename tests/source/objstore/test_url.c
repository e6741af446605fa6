/*
 * URLs: parsing (and every malformed URL named), S3 key encoding vectors (space, '+', '=', '%',
 * UTF-8), sorted queries with continuation tokens, request URLs (path-style on an endpoint,
 * virtual-hosted on AWS), endpoint checks.
 */
#include "test.h"
#include "source/objstore/url.h"
#include <stdlib.h>

static void expect_bad(const char *text, int need_key, const char *why)
{
    ingot_objstore_url_t u;
    CHECK_STATUS(ingot_objstore_url_parse(text, need_key, &u), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), why);
    CHECK(u.key == NULL && u.bucket == NULL && u.host == NULL);
}

static void test_parse_good(void)
{
    ingot_objstore_url_t u;
    CHECK_OK(ingot_objstore_url_parse("s3://my-bucket/dir/k=v +%.tar", 1, &u));
    CHECK(u.scheme == INGOT_OBJSTORE_SCHEME_S3);
    CHECK(strcmp(u.bucket, "my-bucket") == 0);
    CHECK(strcmp(u.key, "dir/k=v +%.tar") == 0); /* literal, as the AWS CLI takes it */
    ingot_objstore_url_release(&u);

    CHECK_OK(ingot_objstore_url_parse("S3://b/", 0, &u)); /* a bucket prefix for LIST */
    CHECK(strcmp(u.bucket, "b") == 0 && u.key[0] == '\0');
    ingot_objstore_url_release(&u);

    CHECK_OK(ingot_objstore_url_parse("http://127.0.0.1:8080/data/shard-0001.tar", 1, &u));
    CHECK(u.scheme == INGOT_OBJSTORE_SCHEME_HTTP);
    CHECK(strcmp(u.host, "127.0.0.1:8080") == 0);
    CHECK(strcmp(u.key, "/data/shard-0001.tar") == 0);
    ingot_objstore_url_release(&u);

    CHECK_OK(ingot_objstore_url_parse("https://[::1]:8443/a%20b", 1, &u));
    CHECK(u.scheme == INGOT_OBJSTORE_SCHEME_HTTPS && strcmp(u.host, "[::1]:8443") == 0);
    ingot_objstore_url_release(&u);
}

static void test_parse_bad(void)
{
    expect_bad("s3:/x", 1, "expected s3://BUCKET/KEY");
    expect_bad("s3:x", 1, "expected s3://BUCKET/KEY");
    expect_bad("s3://", 1, "no bucket");
    expect_bad("s3:///key", 1, "no bucket");
    expect_bad("s3://bucket", 1, "no key");
    expect_bad("s3://bucket/", 1, "no key");
    expect_bad("s3://bu cket/k", 1, "not allowed in a bucket name");
    expect_bad("s3://bucket\xc3\xa9/k", 1, "not allowed in a bucket name");
    expect_bad("ftp://host/x", 1, "unsupported scheme");
    expect_bad("/local/path.tar", 1, "unsupported scheme");
    expect_bad("", 1, "empty");
    expect_bad("http://host", 1, "no path");
    expect_bad("http://host/", 1, "no path");
    expect_bad("http://user:secret@host/p", 1, "user:password@");
    CHECK(strstr(ingot_last_error(), "secret") == NULL);
    CHECK_CONTAINS(ingot_last_error(), "'http://***@host/p'");
    expect_bad("https://host/shard.tar?X-Amz-Signature=abc", 1, "a query is not accepted");
    expect_bad("http://:80/p", 1, "no host");
    expect_bad("http://host:99999/p", 1, "port");
    expect_bad("http://host:0/p", 1, "port");
    expect_bad("http://host:8x/p", 1, "port");
    expect_bad("http://host/a b", 1, "percent-encode");
    expect_bad("https://host/caf\xc3\xa9", 1, "percent-encode");
    expect_bad("http://[::1/p", 1, "unclosed");
    char longkey[1100] = "s3://b/";
    memset(longkey + 7, 'k', 1030);
    longkey[1037] = '\0';
    expect_bad(longkey, 1, "longer than 1024");
    /* the message names the URL as written */
    expect_bad("s3://bucket", 1, "'s3://bucket'");
}

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

static void check_request(const char *url, const char *base, int path_style, const char *want)
{
    ingot_objstore_url_t u;
    ingot_objstore_endpoint_t ep = {(char *)base, path_style};
    char *out = NULL;
    CHECK_OK(ingot_objstore_url_parse(url, 1, &u));
    CHECK_OK(ingot_objstore_url_request(&u, &ep, "eu-west-1", &out));
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "request(%s) = %s, want %s\n", url, out, want);
        exit(1);
    }
    free(out);
    ingot_objstore_url_release(&u);
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

    ingot_objstore_url_t u;
    ingot_objstore_endpoint_t ep = {"http://127.0.0.1:9", 1};
    char *out = NULL;
    CHECK_OK(ingot_objstore_url_parse("s3://b/pre fix/", 0, &u));
    CHECK_OK(ingot_objstore_url_bucket(&u, &ep, "us-east-1", &out));
    CHECK(strcmp(out, "http://127.0.0.1:9/b/") == 0);
    free(out);
    ingot_objstore_url_release(&u);
    CHECK_OK(ingot_objstore_url_parse("http://h/x", 0, &u));
    CHECK_STATUS(ingot_objstore_url_bucket(&u, &ep, "us-east-1", &out), INGOT_ERR_UNSUPPORTED);
    ingot_objstore_url_release(&u);
}

static void test_endpoint_check(void)
{
    char *base = NULL;
    CHECK_OK(ingot_objstore_endpoint_check("http://127.0.0.1:9000/", "AWS_ENDPOINT_URL", &base));
    CHECK(strcmp(base, "http://127.0.0.1:9000") == 0);
    free(base);
    CHECK_OK(ingot_objstore_endpoint_check("https://s3.example/base//", "X", &base));
    CHECK(strcmp(base, "https://s3.example/base") == 0);
    free(base);
    CHECK_STATUS(ingot_objstore_endpoint_check("127.0.0.1:9000", "AWS_ENDPOINT_URL_S3", &base),
                 INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "AWS_ENDPOINT_URL_S3");
    CHECK_STATUS(ingot_objstore_endpoint_check("http://u:pw@h:1", "X", &base), INGOT_ERR_CONFIG);
    CHECK(strstr(ingot_last_error(), "pw") == NULL);
    CHECK_CONTAINS(ingot_last_error(), "http://***@h:1");
    CHECK_STATUS(ingot_objstore_endpoint_check("http://h:1/?x=1", "X", &base), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "endpoint 'http://h:1/?x=1' from X: a space, control byte, "
                                       "'#', '?' or non-ASCII byte");
    CHECK_STATUS(ingot_objstore_endpoint_check("http://h:70000", "Y", &base), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(),
                   "endpoint 'http://h:70000' from Y: the port is not a number in 1-65535");
}

int main(void)
{
    test_parse_good();
    test_parse_bad();
    test_encode();
    test_decode();
    test_query();
    test_request_urls();
    test_endpoint_check();
    printf("objstore url: ok\n");
    return 0;
}
