/*
 * Locations (base/location.h): the one parser of paths and URLs (and every malformed URL named),
 * folders and the names under them, identities, endpoint checks.
 */
#include "common/test.h"
#include "base/location.h"
#include "base/log.h"

static void expect_bad(const char *text, unsigned flags, const char *why)
{
    ingot_location_t u;
    CHECK_STATUS(ingot_location_parse(text, flags, &u), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), why);
    CHECK(u.text == NULL && u.key == NULL && u.bucket == NULL && u.host == NULL);
}

#define OBJECT (INGOT_LOCATION_URL | INGOT_LOCATION_OBJECT)

static void test_parse_good(void)
{
    ingot_location_t u;
    CHECK_OK(ingot_location_parse("s3://my-bucket/dir/k=v +%.tar", OBJECT, &u));
    CHECK(u.scheme == INGOT_LOCATION_S3 && ingot_location_is_remote(&u));
    CHECK(strcmp(u.bucket, "my-bucket") == 0 && u.host == NULL);
    CHECK(strcmp(u.key, "dir/k=v +%.tar") == 0); /* literal, as the AWS CLI takes it */
    CHECK(strcmp(u.text, "s3://my-bucket/dir/k=v +%.tar") == 0);
    CHECK(u.endpoint == NULL && u.region == NULL && u.credentials == NULL);
    ingot_location_release(&u);

    CHECK_OK(ingot_location_parse("S3://b/", INGOT_LOCATION_URL, &u)); /* a prefix for LIST */
    CHECK(strcmp(u.bucket, "b") == 0 && u.key[0] == '\0');
    ingot_location_release(&u);

    CHECK_OK(ingot_location_parse("http://127.0.0.1:8080/data/shard-0001.tar", OBJECT, &u));
    CHECK(u.scheme == INGOT_LOCATION_HTTP && u.bucket == NULL);
    CHECK(strcmp(u.host, "127.0.0.1:8080") == 0);
    CHECK(strcmp(u.key, "/data/shard-0001.tar") == 0);
    ingot_location_release(&u);

    CHECK_OK(ingot_location_parse("https://[::1]:8443/a%20b", OBJECT, &u));
    CHECK(u.scheme == INGOT_LOCATION_HTTPS && strcmp(u.host, "[::1]:8443") == 0);
    ingot_location_release(&u);

    /* a path is a file; so is anything that does not begin with a URL's scheme and "://" */
    const char *paths[] = {"/data/train/manifest.ingot",
                           "m.ingot",
                           "s3:/x",
                           "s3:x",
                           "ftp://h/x",
                           "https:/x",
                           "./s3://x",
                           ""};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        CHECK(!ingot_location_is_url(paths[i]));
        CHECK_OK(ingot_location_parse(paths[i], 0, &u));
        CHECK(u.scheme == INGOT_LOCATION_FILE && !ingot_location_is_remote(&u));
        CHECK(strcmp(u.text, paths[i]) == 0 && u.key == NULL && u.bucket == NULL);
        ingot_location_release(&u);
    }
    CHECK(ingot_location_is_url("s3://b/k") && ingot_location_is_url("HTTPS://h/p"));
    CHECK(ingot_location_is_url("Http://h/p") && !ingot_location_is_url(NULL));
    CHECK(strcmp(ingot_location_scheme_name(INGOT_LOCATION_HTTPS), "https") == 0);
    CHECK(strcmp(ingot_location_scheme_name(INGOT_LOCATION_FILE), "file") == 0);
}

static void test_parse_bad(void)
{
    expect_bad("s3:/x", OBJECT, "expected s3://BUCKET/KEY");
    expect_bad("s3:x", OBJECT, "expected s3://BUCKET/KEY");
    expect_bad("s3://", OBJECT, "no bucket");
    expect_bad("s3://", 0, "no bucket"); /* a URL is a URL, flags or not */
    expect_bad("s3:///key", OBJECT, "no bucket");
    expect_bad("s3://bucket", OBJECT, "no key");
    expect_bad("s3://bucket/", OBJECT, "no key");
    expect_bad("s3://bu cket/k", OBJECT, "not allowed in a bucket name");
    expect_bad("s3://bucket\xc3\xa9/k", OBJECT, "not allowed in a bucket name");
    expect_bad("ftp://host/x", OBJECT, "unsupported scheme");
    expect_bad("/local/path.tar", INGOT_LOCATION_URL, "unsupported scheme");
    expect_bad("", INGOT_LOCATION_URL, "empty");
    expect_bad("http://host", OBJECT, "no path");
    expect_bad("http://host/", 0, "no path");
    expect_bad("http://user:secret@host/p", OBJECT, "user:password@");
    CHECK(strstr(ingot_last_error(), "secret") == NULL);
    CHECK_CONTAINS(ingot_last_error(), "'http://***@host/p'");
    expect_bad("https://host/shard.tar?X-Amz-Signature=abc", OBJECT, "a query is not accepted");
    expect_bad("http://:80/p", OBJECT, "no host");
    expect_bad("http://host:99999/p", OBJECT, "port");
    expect_bad("http://host:0/p", OBJECT, "port");
    expect_bad("http://host:8x/p", OBJECT, "port");
    expect_bad("http://host/a b", OBJECT, "percent-encode");
    expect_bad("https://host/caf\xc3\xa9", OBJECT, "percent-encode");
    expect_bad("http://[::1/p", OBJECT, "unclosed");
    char longkey[1100] = "s3://b/";
    memset(longkey + 7, 'k', 1030);
    longkey[1037] = '\0';
    expect_bad(longkey, OBJECT, "longer than 1024");
    /* the message names the URL as written */
    expect_bad("s3://bucket", OBJECT, "'s3://bucket'");

    ingot_location_t u;
    CHECK_OK(ingot_location_parse("s3://bucket/", INGOT_LOCATION_URL, &u));
    CHECK_STATUS(ingot_location_need_object(&u), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "no key: it names a bucket");
    ingot_location_release(&u);
    ingot_location_release(NULL);
}

/* The folder of @p text: its text and key. */
static void check_dir(const char *text, const char *want, const char *want_key)
{
    ingot_location_t of, dir;
    CHECK_OK(ingot_location_parse(text, 0, &of));
    CHECK_OK(ingot_location_dir(&of, &dir));
    if (strcmp(dir.text, want) != 0 || (want_key ? strcmp(dir.key, want_key) : dir.key != NULL)) {
        fprintf(stderr, "dir(%s) = %s key %s, want %s key %s\n", text, dir.text,
                dir.key ? dir.key : "NULL", want, want_key ? want_key : "NULL");
        exit(1);
    }
    CHECK(dir.scheme == of.scheme);
    ingot_location_release(&of);
    ingot_location_release(&dir);
}

/* @p name under the folder of @p text: the joined text and its key, which the parser agrees
 * with (the key is the text's tail). */
static void check_join(const char *text, const char *name, const char *want, const char *want_key)
{
    ingot_location_t of, dir, child, again;
    char buf[256];
    CHECK_OK(ingot_location_parse(text, 0, &of));
    CHECK_OK(ingot_location_dir(&of, &dir));
    CHECK_OK(ingot_location_join(&dir, name, &child));
    CHECK(ingot_location_join_text(&dir, name, buf, sizeof(buf)) == strlen(want));
    if (strcmp(child.text, want) != 0 || strcmp(buf, want) != 0 ||
        (want_key ? strcmp(child.key, want_key) : child.key != NULL)) {
        fprintf(stderr, "join(%s, %s) = %s key %s, want %s key %s\n", text, name, child.text,
                child.key ? child.key : "NULL", want, want_key ? want_key : "NULL");
        exit(1);
    }
    CHECK_OK(ingot_location_parse(child.text, 0, &again));
    CHECK(again.scheme == child.scheme);
    CHECK(want_key == NULL || strcmp(again.key, child.key) == 0);
    ingot_location_release(&again);
    ingot_location_release(&of);
    ingot_location_release(&dir);
    ingot_location_release(&child);
}

static void test_folders(void)
{
    check_dir("/data/train/manifest.ingot", "/data/train", NULL);
    check_dir("manifest.ingot", ".", NULL);
    check_dir("/manifest.ingot", "/", NULL);
    check_dir("s3://b/imagenet/train/manifest.ingot", "s3://b/imagenet/train", "imagenet/train");
    check_dir("s3://b/manifest.ingot", "s3://b", "");
    check_dir("https://h:8443/web/m.ingot", "https://h:8443/web", "/web");
    check_dir("http://h/m.ingot", "http://h", "");

    check_join("/data/m.ingot", "a b.tar", "/data/a b.tar", NULL);
    check_join("m.ingot", "x.tar", "./x.tar", NULL);
    check_join("s3://b/p/m.ingot", "k=v/a b+c.tar", "s3://b/p/k=v/a b+c.tar", "p/k=v/a b+c.tar");
    check_join("s3://b/m.ingot", "x.tar", "s3://b/x.tar", "x.tar");
    check_join("http://h:1/web/m.ingot", "caf\xc3\xa9 1.tar", "http://h:1/web/caf%C3%A9%201.tar",
               "/web/caf%C3%A9%201.tar");
    check_join("https://h/m.ingot", "x.tar", "https://h/x.tar", "/x.tar");
    /* a local folder whose name begins with "http" is still a folder: names are not encoded */
    check_join("httpdata/m.ingot", "a b.tar", "httpdata/a b.tar", NULL);

    /* the text is cut like snprintf, and the length it needs is returned */
    ingot_location_t dir;
    char small[8];
    CHECK_OK(ingot_location_parse("/d", 0, &dir));
    CHECK(ingot_location_join_text(&dir, "abcdefgh", small, sizeof(small)) == 11);
    CHECK(strcmp(small, "/d/abcd") == 0);
    ingot_location_release(&dir);

    /* an s3 key past 1024 bytes is refused when named, as the parser refuses it */
    char name[1100];
    memset(name, 'n', 1030);
    name[1030] = '\0';
    ingot_location_t of, child;
    CHECK_OK(ingot_location_parse("s3://b/m.ingot", 0, &of));
    CHECK_OK(ingot_location_dir(&of, &dir));
    CHECK_STATUS(ingot_location_join(&dir, name, &child), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "longer than 1024");
    ingot_location_release(&of);
    ingot_location_release(&dir);
}

static void test_identity(void)
{
    ingot_location_t m, dir, child, copy;
    CHECK_OK(ingot_location_parse("s3://b/p/m.ingot", OBJECT, &m));
    CHECK_OK(ingot_location_identify(&m, "http://127.0.0.1:9 (path-style, AWS_ENDPOINT_URL)",
                                     "eu-west-1", "env"));
    CHECK_OK(ingot_location_identify(&m, "http://127.0.0.1:8333 (path-style, AWS_ENDPOINT_URL)",
                                     "us-east-1", "env")); /* replaces */
    CHECK_OK(ingot_location_dir(&m, &dir));
    CHECK_OK(ingot_location_join(&dir, "s.tar", &child));
    CHECK_OK(ingot_location_copy(&child, &copy));
    CHECK(strcmp(copy.endpoint, "http://127.0.0.1:8333 (path-style, AWS_ENDPOINT_URL)") == 0);
    CHECK(strcmp(copy.region, "us-east-1") == 0 && strcmp(copy.credentials, "env") == 0);
    CHECK(strcmp(copy.text, "s3://b/p/s.tar") == 0 && strcmp(copy.bucket, "b") == 0);
    ingot_location_release(&m);
    ingot_location_release(&dir);
    ingot_location_release(&child);
    ingot_location_release(&copy);
}

static void test_endpoint_check(void)
{
    char *base = NULL;
    CHECK_OK(ingot_location_endpoint_check("http://127.0.0.1:9000/", "AWS_ENDPOINT_URL", &base));
    CHECK(strcmp(base, "http://127.0.0.1:9000") == 0);
    free(base);
    CHECK_OK(ingot_location_endpoint_check("https://s3.example/base//", "X", &base));
    CHECK(strcmp(base, "https://s3.example/base") == 0);
    free(base);
    CHECK_STATUS(ingot_location_endpoint_check("127.0.0.1:9000", "AWS_ENDPOINT_URL_S3", &base),
                 INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "AWS_ENDPOINT_URL_S3");
    CHECK_STATUS(ingot_location_endpoint_check("http://u:pw@h:1", "X", &base), INGOT_ERR_CONFIG);
    CHECK(strstr(ingot_last_error(), "pw") == NULL);
    CHECK_CONTAINS(ingot_last_error(), "http://***@h:1");
    CHECK_STATUS(ingot_location_endpoint_check("http://h:1/?x=1", "X", &base), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "endpoint 'http://h:1/?x=1' from X: a space, control byte, "
                                       "'#', '?' or non-ASCII byte");
    CHECK_STATUS(ingot_location_endpoint_check("http://h:70000", "Y", &base), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(),
                   "endpoint 'http://h:70000' from Y: the port is not a number in 1-65535");
    CHECK_STATUS(ingot_location_endpoint_check("s3://b/", "X", &base), INGOT_ERR_CONFIG);
}

int main(void)
{
    test_parse_good();
    test_parse_bad();
    test_folders();
    test_identity();
    test_endpoint_check();
    printf("locations: ok\n");
    return 0;
}
