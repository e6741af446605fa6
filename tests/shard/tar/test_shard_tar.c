/*
 * Tar reader: good archives (ustar, pax long names, GNU long names, base-256 sizes) and every
 * bad input the issue lists, each checked for its status and for a message naming the archive,
 * the offset and the member.
 */
#include "common/shard_test_util.h"

#define ARCH "mem.tar"

/* Read every member of an in-memory archive; returns the status, counts members. */
static ingot_status_t scan(const tb_t *t, tar_member_t *last, int *count)
{
    ingot_file_t src = {.fd = -1, .mem = t->buf, .size = t->len, .name = ARCH};
    tar_reader_t r;
    tar_member_t m;
    CHECK_OK(ingot_tar_reader_init(&r, &src));
    ingot_status_t st;
    int end = 0;
    *count = 0;
    ingot_last_error_clear();
    while ((st = ingot_tar_reader_next(&r, &m, &end)) == INGOT_OK && !end) {
        (*count)++;
        if (last) *last = m;
    }
    ingot_tar_reader_release(&r);
    return st;
}

static void expect_bad(const tb_t *t, const char *msg1, const char *msg2)
{
    int n;
    CHECK_STATUS(scan(t, NULL, &n), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), ARCH);
    CHECK_CONTAINS(ingot_last_error(), msg1);
    if (msg2) CHECK_CONTAINS(ingot_last_error(), msg2);
}

static void test_good(void)
{
    tb_t t = {0};
    tar_member_t m;
    int n;
    tb_file(&t, "a.jpg", "hello");
    tb_file(&t, "a.cls", "3");
    char longname[300];
    memset(longname, 'x', 250);
    strcpy(longname + 250, ".txt");
    /* GNU long name */
    tb_member(&t, "././@LongLink", 'L', longname, strlen(longname) + 1);
    size_t h = tb_file(&t, "truncated-name", "long");
    tb_end(&t);
    CHECK_OK(scan(&t, &m, &n));
    CHECK(n == 3);
    CHECK(strcmp(m.name, longname) == 0);
    CHECK(m.size == 4 && m.data_off == h + TAR_BLOCK);
    CHECK(memcmp(t.buf + m.data_off, "long", 4) == 0);
    free(t.buf);
}

static void test_pax_path_and_size(void)
{
    tb_t t = {0};
    tar_member_t m;
    int n;
    const char pax[] = "22 path=dir/pax.field\n";
    tb_member(&t, "PaxHeader", 'x', pax, strlen(pax));
    tb_file(&t, "short", "12345");
    tb_end(&t);
    CHECK_OK(scan(&t, &m, &n));
    CHECK(n == 1 && strcmp(m.name, "dir/pax.field") == 0 && m.size == 5);
    free(t.buf);
}

static void test_base256_size(void)
{
    uint8_t f[12] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00};
    uint64_t v;
    CHECK(ingot_tar_parse_number(f, sizeof(f), &v) == 0 && v == 256);
    f[0] = 0xff; /* negative */
    CHECK(ingot_tar_parse_number(f, sizeof(f), &v) == -1);
    const uint8_t oct[12] = "00000000012";
    CHECK(ingot_tar_parse_number(oct, sizeof(oct), &v) == 0 && v == 10);
    const uint8_t bad[12] = "0000000001z";
    CHECK(ingot_tar_parse_number(bad, sizeof(bad), &v) == -1);
}

static void test_truncated(void)
{
    tb_t t = {0};
    tb_file(&t, "a.jpg", "hello");
    tb_end(&t);
    t.len = TAR_BLOCK + 3; /* cut inside the data */
    expect_bad(&t, "truncated", "offset 0");
    t.len = TAR_BLOCK * 2; /* member complete, no end marker */
    expect_bad(&t, "end-of-archive marker", "offset 1024");
    t.len = 100; /* partial header */
    expect_bad(&t, "partial header", "offset 0");
    free(t.buf);
}

static void test_bad_checksum(void)
{
    tb_t t = {0};
    tb_file(&t, "a.jpg", "hello");
    size_t h = tb_file(&t, "b.jpg", "world");
    tb_end(&t);
    t.buf[h + 10] ^= 1;
    expect_bad(&t, "bad header checksum", "offset 1024");
    free(t.buf);
}

static void test_size_beyond_eof(void)
{
    tb_t t = {0};
    size_t h = tb_file(&t, "a.jpg", "hello");
    tb_end(&t);
    memcpy(t.buf + h + 124, "00000777777", 11);
    tb_rechecksum(&t, h);
    expect_bad(&t, "extends beyond the end", "offset 0");
    free(t.buf);
}

static void test_non_octal_size(void)
{
    tb_t t = {0};
    size_t h = tb_file(&t, "a.jpg", "hello");
    tb_end(&t);
    memcpy(t.buf + h + 124, "0000000008x", 11);
    tb_rechecksum(&t, h);
    expect_bad(&t, "size field is not", "offset 0");
    free(t.buf);
}

static void test_pax_size_disagrees(void)
{
    tb_t t = {0};
    const char pax[] = "10 size=7\n";
    tb_member(&t, "PaxHeader", 'x', pax, strlen(pax));
    tb_file(&t, "a.jpg", "hello");
    tb_end(&t);
    expect_bad(&t, "pax size 7 disagrees with ustar size 5", "a.jpg");
    free(t.buf);
}

static void test_bad_pax_records(void)
{
    const char *bad[] = {"99 path=x.y\n", "5 a=b\n", "x path=a.b\n", "12 noequals\n"};
    for (size_t i = 0; i < INGOT_ARRAY_SIZE(bad); i++) {
        tb_t t = {0};
        tb_member(&t, "PaxHeader", 'x', bad[i], strlen(bad[i]));
        tb_file(&t, "a.jpg", "hello");
        tb_end(&t);
        expect_bad(&t, "pax record", "offset 0");
        free(t.buf);
    }
}

static void test_path_traversal(void)
{
    const char *names[] = {"../evil.jpg", "/abs/evil.jpg", "a/../../evil.jpg", ".."};
    for (size_t i = 0; i < INGOT_ARRAY_SIZE(names); i++) {
        tb_t t = {0};
        tb_file(&t, "ok.jpg", "fine");
        tb_file(&t, names[i], "evil");
        tb_end(&t);
        expect_bad(&t, "path traversal", names[i]);
        CHECK_CONTAINS(ingot_last_error(), "offset 1024");
        free(t.buf);
    }
    CHECK(ingot_tar_path_is_safe("a/..b/c..", 9) == 0);
}

static void test_special_header_cap(void)
{
    tb_t t = {0};
    uint8_t h[TAR_BLOCK];
    ingot_tar_header_fill(h, "PaxHeader", (uint64_t)TAR_SPECIAL_MAX + 1, 'x');
    tb_data(&t, h, TAR_BLOCK);
    tb_end(&t);
    expect_bad(&t, "exceeds the", "offset 0");
    free(t.buf);
}

static void test_unknown_type_and_dangling_pax(void)
{
    tb_t t = {0};
    tb_member(&t, "sparse.bin", 'S', "", 0);
    tb_end(&t);
    expect_bad(&t, "unsupported tar member type 'S'", "offset 0");
    free(t.buf);
    tb_t u = {0};
    const char pax[] = "14 path=a.jpg\n";
    tb_member(&u, "PaxHeader", 'x', pax, strlen(pax));
    tb_end(&u);
    expect_bad(&u, "right after a special header", NULL);
    free(u.buf);
}

static void test_name_split(void)
{
    const char *key, *field;
    size_t klen;
    CHECK_OK(ingot_tar_name_split("a", 0, "./dir/s001.seg.png", &key, &klen, &field));
    CHECK(klen == 8 && strncmp(key, "dir/s001", klen) == 0 && strcmp(field, "seg.png") == 0);
    CHECK_STATUS(ingot_tar_name_split("arch.tar", 512, "dir/nofield", &key, &klen, &field),
                 INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "arch.tar: offset 512: member 'dir/nofield'");
    CHECK_STATUS(ingot_tar_name_split("a", 0, "dir/.hidden", &key, &klen, &field),
                 INGOT_ERR_FORMAT);
}

int main(void)
{
    test_good();
    test_pax_path_and_size();
    test_base256_size();
    test_truncated();
    test_bad_checksum();
    test_size_beyond_eof();
    test_non_octal_size();
    test_pax_size_disagrees();
    test_bad_pax_records();
    test_path_traversal();
    test_special_header_cap();
    test_unknown_type_and_dangling_pax();
    test_name_split();
    return 0;
}
