/*
 * Manifest: build from tars written here, open from a file and from a buffer (full and lazy),
 * O(1) lookups, reading and decoding (zstd included), and every bad manifest the issue lists:
 * wrong magic or version, corrupt header or tables, rows beyond a shard's size or overflowing,
 * path traversal in shard paths, duplicate keys, a shrunken shard, bit flips, zstd bombs;
 * format versions: a version-1 file (tests/fixtures/manifest-v1, written by the code before
 * version 2) still opens, and files claiming a version they are not laid out as are refused.
 */
#include "common/shard_test_util.h"
#include "shard/manifest_format.h"
#include "shard/manifest.h"
#include <ingot/shard.h>
#include <zstd.h>
#include <sys/stat.h>

#define NSAMPLES 20
#define ZLEVEL   3

static char payload[NSAMPLES][64];

/* shard.tar: NSAMPLES samples k000..: .txt (plain), .bin.zst (zstd), .cls */
static void make_shard(const char *path)
{
    tb_t t = {0};
    for (int i = 0; i < NSAMPLES; i++) {
        char name[64], cls[8], z[256];
        snprintf(payload[i], sizeof(payload[i]), "sample %d payload %s", i, i % 2 ? "odd" : "even");
        snprintf(name, sizeof(name), "k%03d.txt", i);
        tb_file(&t, name, payload[i]);
        size_t zl = ZSTD_compress(z, sizeof(z), payload[i], strlen(payload[i]), ZLEVEL);
        CHECK(!ZSTD_isError(zl));
        snprintf(name, sizeof(name), "k%03d.bin.zst", i);
        tb_member(&t, name, '0', z, zl);
        snprintf(name, sizeof(name), "k%03d.cls", i);
        snprintf(cls, sizeof(cls), "%d\n", i % 10);
        tb_file(&t, name, cls);
    }
    tb_end(&t);
    tb_write(&t, path);
    free(t.buf);
}

static void build(const char *manifest, const char *shard)
{
    ingot_manifest_builder_h b;
    CHECK_OK(ingot_manifest_builder_create(manifest, NULL, &b));
    CHECK_OK(ingot_manifest_builder_add_shard(b, shard));
    CHECK_OK(ingot_manifest_builder_write(b));
    ingot_manifest_builder_destroy(b);
}

static void check_contents(ingot_manifest_h m)
{
    ingot_manifest_info_t info;
    ingot_shard_reader_h r;
    uint8_t buf[4096], out[256];
    size_t len;
    CHECK_OK(ingot_manifest_query(m, &info));
    CHECK(info.sample_count == NSAMPLES && info.shard_count == 1 &&
          info.field_count == 3 * NSAMPLES);
    CHECK_OK(ingot_shard_reader_create(m, &r));
    for (uint64_t i = 0; i < NSAMPLES; i++) {
        ingot_sample_info_t s;
        ingot_field_info_t f;
        char key[16];
        snprintf(key, sizeof(key), "k%03d", (int)i);
        CHECK_OK(ingot_manifest_sample_get(m, i, &s));
        CHECK(strcmp(s.key, key) == 0 && s.label == (int32_t)(i % 10) && s.field_count == 3);
        CHECK_OK(ingot_shard_reader_read(r, i, buf, sizeof(buf)));
        CHECK_OK(ingot_manifest_field_get(m, &s, 1, &f));
        CHECK(strcmp(f.name, "bin") == 0 && f.codec == INGOT_CODEC_ZSTD);
        CHECK(f.raw_len == strlen(payload[i]));
        CHECK_OK(ingot_shard_reader_decode(r, i, buf, 1, out, sizeof(out), &len));
        CHECK(len == strlen(payload[i]) && memcmp(out, payload[i], len) == 0);
        CHECK_OK(ingot_shard_reader_decode(r, i, buf, 0, out, sizeof(out), &len));
        CHECK(len == strlen(payload[i]) && memcmp(out, payload[i], len) == 0);
        uint64_t found;
        CHECK_OK(ingot_manifest_find(m, key, -1, &found));
        CHECK(found == i);
    }
    CHECK_STATUS(ingot_manifest_sample_get(m, NSAMPLES, &(ingot_sample_info_t){0}),
                 INGOT_ERR_OUT_OF_RANGE);
    ingot_shard_reader_destroy(r);
}

static void test_round_trip(const char *mpath)
{
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open(mpath, 0, &m));
    check_contents(m);
    ingot_manifest_close(m);
    CHECK_OK(ingot_manifest_open(mpath, INGOT_MANIFEST_OPEN_LAZY, &m));
    check_contents(m);
    CHECK_OK(ingot_manifest_verify(m, NULL, NULL, NULL));
    ingot_manifest_close(m);
    size_t len;
    char *buf = test_read_file(mpath, &len);
    CHECK_OK(ingot_manifest_open_buffer(buf, len, test_tmpdir(), 0, &m));
    check_contents(m);
    ingot_manifest_close(m);
    free(buf);
}

/* Re-seal a modified manifest buffer (body and header hashes) so structural checks are reached. */
static void reseal(uint8_t *buf, size_t len)
{
    manifest_header_t *h = (manifest_header_t *)buf;
    h->body_hash = ingot_hash64(buf + h->header_size, len - h->header_size);
    h->header_hash = ingot_manifest_header_hash(h);
}

static void expect_open_fails(uint8_t *buf, size_t len, unsigned flags, ingot_status_t want,
                              const char *msg1, const char *msg2)
{
    ingot_manifest_h m;
    ingot_last_error_clear();
    CHECK_STATUS(ingot_manifest_open_buffer(buf, len, test_tmpdir(), flags, &m), want);
    CHECK_CONTAINS(ingot_last_error(), msg1);
    if (msg2) CHECK_CONTAINS(ingot_last_error(), msg2);
}

static uint8_t *load(const char *mpath, size_t *len_p)
{
    return (uint8_t *)test_read_file(mpath, len_p);
}

static void test_bad_header(const char *mpath)
{
    size_t len;
    uint8_t *buf = load(mpath, &len);
    manifest_header_t *h = (manifest_header_t *)buf;
    h->magic[0] = 'X';
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "wrong magic", NULL);
    h->magic[0] = 'I';
    h->version = 99;
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "unsupported manifest version 99", NULL);
    h->version = MANIFEST_VERSION;
    h->sample_count++;
    expect_open_fails(buf, len, 0, INGOT_ERR_CORRUPT, "header checksum", NULL);
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "inconsistent", NULL);
    expect_open_fails(buf, 100, 0, INGOT_ERR_FORMAT, "too short", NULL);
    free(buf);
    buf = load(mpath, &len);
    buf[len - 30] ^= 0x40; /* a byte in the tables */
    expect_open_fails(buf, len, 0, INGOT_ERR_CORRUPT, "checksum of the tables", NULL);
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open_buffer(buf, len, test_tmpdir(), INGOT_MANIFEST_OPEN_LAZY, &m));
    ingot_manifest_close(m);
    free(buf);
}

static void test_bad_rows(const char *mpath)
{
    size_t len;
    uint8_t *buf = load(mpath, &len);
    manifest_header_t *h = (manifest_header_t *)buf;
    manifest_sample_t *s = (manifest_sample_t *)(buf + h->sample_off);
    manifest_field_t *f = (manifest_field_t *)(buf + h->field_off);
    manifest_shard_t *sh = (manifest_shard_t *)(buf + h->shard_off);
    uint64_t keep = s[5].offset;
    s[5].offset = sh[0].size - 10; /* beyond the shard's size */
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "sample row 5 (key 'k005')", "beyond shard");
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open_buffer(buf, len, test_tmpdir(), INGOT_MANIFEST_OPEN_LAZY, &m));
    ingot_sample_info_t si;
    CHECK_STATUS(ingot_manifest_sample_get(m, 5, &si), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "key 'k005'");
    CHECK_OK(ingot_manifest_sample_get(m, 4, &si));
    ingot_manifest_close(m);
    s[5].offset = UINT64_MAX - 2; /* overflowing */
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "sample row 5", "beyond shard");
    s[5].offset = keep;
    f[7].stored_len = UINT32_MAX; /* overflowing field length */
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "sample row 2 (key 'k002')", NULL);
    free(buf);
}

static void test_bad_strings(const char *mpath)
{
    size_t len;
    uint8_t *buf = load(mpath, &len);
    manifest_header_t *h = (manifest_header_t *)buf;
    manifest_shard_t *sh = (manifest_shard_t *)(buf + h->shard_off);
    char *path = (char *)buf + h->strtab_off + manifest_strref_off(sh[0].path);
    memcpy(path, "../x", 4); /* "shard.tar" -> "../xd.tar" */
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "path traversal", "../xd.tar");
    free(buf);
    buf = load(mpath, &len);
    h = (manifest_header_t *)buf;
    manifest_sample_t *s = (manifest_sample_t *)(buf + h->sample_off);
    s[3].key = s[2].key;
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "duplicate key 'k002'", "shard.tar");
    free(buf);
}

typedef struct faults {
    int n;
    char keys[NSAMPLES + 2][32];
    int shard_level;
} faults_t;

static void on_fault(const ingot_verify_fault_t *f, void *arg)
{
    faults_t *fl = arg;
    if (f->key == NULL) {
        fl->shard_level++;
    } else if (fl->n < NSAMPLES) {
        snprintf(fl->keys[fl->n++], sizeof(fl->keys[0]), "%s", f->key);
    }
}

static void test_bit_flip(const char *mpath, const char *shard)
{
    size_t len;
    char *data = test_read_file(shard, &len);
    ingot_manifest_h m;
    ingot_sample_info_t s;
    CHECK_OK(ingot_manifest_open(mpath, 0, &m));
    CHECK_OK(ingot_manifest_sample_get(m, 7, &s));
    data[s.offset + 2] ^= 0x04; /* k007.txt */
    CHECK_OK(ingot_manifest_sample_get(m, 12, &s));
    data[s.offset + s.length - 1] ^= 0x80; /* last byte of k012.cls */
    FILE *f = fopen(shard, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
    faults_t fl = {0};
    ingot_verify_report_t rep;
    CHECK_STATUS(ingot_manifest_verify(m, on_fault, &fl, &rep), INGOT_ERR_CORRUPT);
    CHECK(fl.n == 2 && strcmp(fl.keys[0], "k007") == 0 && strcmp(fl.keys[1], "k012") == 0);
    CHECK(fl.shard_level == 1 && rep.samples_bad == 2 && rep.samples_checked == NSAMPLES);
    ingot_shard_reader_h r;
    uint8_t buf[4096];
    CHECK_OK(ingot_shard_reader_create(m, &r));
    ingot_last_error_clear();
    CHECK_STATUS(ingot_shard_reader_read(r, 7, buf, sizeof(buf)), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(ingot_last_error(), "sample 'k007' (index 7) field 'txt' in shard '");
    CHECK_CONTAINS(ingot_last_error(), "shard.tar");
    CHECK_OK(ingot_shard_reader_read(r, 8, buf, sizeof(buf)));
    ingot_shard_reader_destroy(r);
    /* a shard that shrank after the build */
    CHECK(truncate(shard, (off_t)(len - 3000)) == 0);
    CHECK_OK(ingot_shard_reader_create(m, &r));
    ingot_last_error_clear();
    CHECK_STATUS(ingot_shard_reader_read(r, 0, buf, sizeof(buf)), INGOT_ERR_MISMATCH);
    CHECK_CONTAINS(ingot_last_error(), "shrank");
    CHECK_CONTAINS(ingot_last_error(), "shard.tar");
    ingot_shard_reader_destroy(r);
    fl = (faults_t){0};
    CHECK_STATUS(ingot_manifest_verify(m, on_fault, &fl, &rep), INGOT_ERR_CORRUPT);
    CHECK(fl.shard_level == 1 && rep.samples_bad == NSAMPLES);
    ingot_manifest_close(m);
    free(data);
}

/* zstd bomb: the manifest's raw length is smaller than what the frame decodes to. */
static void test_zstd_bomb(const char *mpath)
{
    size_t len;
    uint8_t *buf = load(mpath, &len), sample[4096], out[256];
    manifest_header_t *h = (manifest_header_t *)buf;
    manifest_field_t *f = (manifest_field_t *)(buf + h->field_off);
    f[3 * 4 + 1].raw_len -= 5; /* k004.bin */
    reseal(buf, len);
    ingot_manifest_h m;
    ingot_shard_reader_h r;
    size_t n;
    CHECK_OK(ingot_manifest_open_buffer(buf, len, test_tmpdir(), 0, &m));
    CHECK_OK(ingot_shard_reader_create(m, &r));
    CHECK_OK(ingot_shard_reader_read(r, 4, sample, sizeof(sample)));
    ingot_last_error_clear();
    CHECK_STATUS(ingot_shard_reader_decode(r, 4, sample, 1, out, sizeof(out), &n), INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), "exceeds the raw length");
    CHECK_CONTAINS(ingot_last_error(), "key 'k004' field 'bin'");
    ingot_shard_reader_destroy(r);
    ingot_manifest_close(m);
    free(buf);
}

/* Builder: truncated and corrupt frames, duplicate keys, special members, shard outside. */
static void expect_build_fails(const tb_t *t, ingot_tar_special_policy_t pol, ingot_status_t want,
                               const char *msg)
{
    ingot_manifest_builder_h b;
    ingot_manifest_builder_params_t p = {.field_mask = INGOT_MANIFEST_BUILDER_PARAM_FIELD_SPECIAL,
                                         .special = pol};
    tb_write(t, tpath("bad.tar"));
    CHECK_OK(ingot_manifest_builder_create(tpath("bad.ingot"), &p, &b));
    ingot_last_error_clear();
    CHECK_STATUS(ingot_manifest_builder_add_shard(b, tpath("bad.tar")), want);
    CHECK_CONTAINS(ingot_last_error(), "bad.tar");
    CHECK_CONTAINS(ingot_last_error(), msg);
    ingot_manifest_builder_destroy(b);
}

static void test_builder_rejects(void)
{
    char z[256];
    size_t zl = ZSTD_compress(z, sizeof(z), payload[0], strlen(payload[0]), ZLEVEL);
    tb_t t = {0};
    tb_member(&t, "a.bin.zst", '0', z, zl - 4);
    tb_end(&t);
    expect_build_fails(&t, INGOT_TAR_SPECIAL_SKIP, INGOT_ERR_ZSTD, "truncated zstd frame");
    free(t.buf);
    t = (tb_t){0};
    z[0] ^= 0xff; /* frame magic: a raw block's bytes alone would decode to other bytes */
    tb_member(&t, "a.bin.zst", '0', z, zl);
    tb_end(&t);
    expect_build_fails(&t, INGOT_TAR_SPECIAL_SKIP, INGOT_ERR_ZSTD, "member 'a.bin.zst'");
    free(t.buf);
    t = (tb_t){0};
    tb_file(&t, "a.jpg", "1");
    tb_file(&t, "b.jpg", "2");
    tb_file(&t, "a.cls", "3");
    tb_end(&t);
    expect_build_fails(&t, INGOT_TAR_SPECIAL_SKIP, INGOT_ERR_FORMAT, "duplicate key 'a'");
    free(t.buf);
    t = (tb_t){0};
    tb_file(&t, "a.jpg", "1");
    tb_member(&t, "link.jpg", '2', "", 0);
    tb_end(&t);
    expect_build_fails(&t, INGOT_TAR_SPECIAL_REJECT, INGOT_ERR_FORMAT, "member 'link.jpg'");
    ingot_manifest_builder_h b;
    CHECK_OK(ingot_manifest_builder_create(tpath("skip.ingot"), NULL, &b));
    CHECK_OK(ingot_manifest_builder_add_shard(b, tpath("bad.tar"))); /* default: skip */
    CHECK_OK(ingot_manifest_builder_write(b));
    ingot_manifest_builder_destroy(b);
    free(t.buf);
    CHECK(mkdir(tpath("sub"), 0755) == 0);
    CHECK_OK(ingot_manifest_builder_create(tpath("sub/m.ingot"), NULL, &b));
    CHECK_STATUS(ingot_manifest_builder_add_shard(b, tpath("bad.tar")), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "outside the manifest's directory");
    ingot_manifest_builder_destroy(b);
}

static ingot_status_t build_with_labels(const char *labels, ingot_manifest_h *m_p)
{
    FILE *f = fopen(tpath("labels.txt"), "w");
    CHECK(f && fputs(labels, f) >= 0 && fclose(f) == 0);
    ingot_manifest_builder_params_t p = {.field_mask = INGOT_MANIFEST_BUILDER_PARAM_FIELD_LABELS,
                                         .label_path = tpath("labels.txt")};
    ingot_manifest_builder_h b;
    ingot_last_error_clear();
    ingot_status_t st = ingot_manifest_builder_create(tpath("lab.ingot"), &p, &b);
    if (st != INGOT_OK) {
        return st;
    }
    CHECK_OK(ingot_manifest_builder_add_shard(b, tpath("lab.tar")));
    CHECK_OK(ingot_manifest_builder_write(b));
    ingot_manifest_builder_destroy(b);
    CHECK_OK(ingot_manifest_open(tpath("lab.ingot"), 0, m_p));
    return INGOT_OK;
}

static void test_label_file(void)
{
    tb_t t = {0};
    tb_file(&t, "a.jpg", "1");
    tb_file(&t, "b.jpg", "2");
    tb_file(&t, "c.jpg", "3");
    tb_file(&t, "c.cls", "5");
    tb_file(&t, "d.jpg", "4");
    tb_end(&t);
    tb_write(&t, tpath("lab.tar"));
    free(t.buf);
    ingot_manifest_h m;
    CHECK_OK(build_with_labels("a 3\n\n# comment\nb\t4\nc 9\n", &m));
    const int32_t want[] = {3, 4, 5, INGOT_LABEL_NONE}; /* .cls wins; d has no label */
    for (uint64_t i = 0; i < 4; i++) {
        ingot_sample_info_t si;
        CHECK_OK(ingot_manifest_sample_get(m, i, &si));
        CHECK(si.label == want[i]);
    }
    ingot_manifest_close(m);
    CHECK_STATUS(build_with_labels("a 1\nb x\n", &m), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "labels.txt: line 2");
    CHECK_STATUS(build_with_labels("a 1\n\na 2\n", &m), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "labels.txt: line 3: key 'a' listed twice");
}

/* ---------------------------------------------------------------- format versions */

#define V1_FIXTURE INGOT_TEST_SRCDIR "/tests/fixtures/manifest-v1/manifest.ingot"

/* Write @p buf to a file and open it: the error must name the file and every string given. */
static void expect_file_fails(const uint8_t *buf, size_t len, ingot_status_t want, const char *msg1,
                              const char *msg2)
{
    const char *path = tpath("claims.ingot");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len && close(fd) == 0);
    ingot_manifest_h m;
    ingot_last_error_clear();
    CHECK_STATUS(ingot_manifest_open(path, 0, &m), want);
    CHECK_CONTAINS(ingot_last_error(), path);
    CHECK_CONTAINS(ingot_last_error(), msg1);
    if (msg2) CHECK_CONTAINS(ingot_last_error(), msg2);
}

/* The maxima a full scan finds, to compare with what the header says. */
static ingot_manifest_maxima_t scan_maxima(ingot_manifest_h m)
{
    ingot_manifest_info_t info;
    ingot_manifest_maxima_t max = {0};
    CHECK_OK(ingot_manifest_query(m, &info));
    for (uint64_t i = 0; i < info.sample_count; i++) {
        ingot_sample_info_t s;
        ingot_field_info_t f;
        uint64_t raw = 0;
        CHECK_OK(ingot_manifest_sample_get(m, i, &s));
        for (uint32_t k = 0; k < s.field_count; k++) {
            CHECK_OK(ingot_manifest_field_get(m, &s, k, &f));
            raw += f.raw_len;
        }
        max.raw_bytes = raw > max.raw_bytes ? raw : max.raw_bytes;
        max.stored_bytes = s.length > max.stored_bytes ? s.length : max.stored_bytes;
        max.fields = s.field_count > max.fields ? s.field_count : max.fields;
    }
    return max;
}

static void check_maxima(const char *path, uint32_t version)
{
    const unsigned flags[] = {0, INGOT_MANIFEST_OPEN_LAZY};
    for (int k = 0; k < 2; k++) {
        ingot_manifest_h m;
        ingot_manifest_info_t info;
        ingot_manifest_maxima_t got, want;
        CHECK_OK(ingot_manifest_open(path, flags[k], &m));
        CHECK_OK(ingot_manifest_query(m, &info));
        CHECK(info.version == version);
        CHECK(m->has_max == (version >= MANIFEST_VERSION || flags[k] == 0)); /* v1: full open */
        want = scan_maxima(m);
        CHECK_OK(ingot_manifest_maxima_get(m, &got));
        CHECK(got.raw_bytes == want.raw_bytes && got.stored_bytes == want.stored_bytes &&
              got.fields == want.fields && want.fields > 0 && want.raw_bytes > 0);
        ingot_manifest_close(m);
    }
}

/* A version-1 file (written by the code before version 2) opens; maxima come from a scan. */
static void test_version_1_fixture(void)
{
    check_maxima(V1_FIXTURE, MANIFEST_VERSION_1);
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open(V1_FIXTURE, 0, &m));
    CHECK_OK(ingot_manifest_verify(m, NULL, NULL, NULL)); /* its shard is there and intact */
    ingot_manifest_close(m);
}

/* Files claiming a version they are not laid out as: refused, naming the file and version. */
static void test_version_claims(const char *mpath)
{
    size_t len, len1;
    uint8_t *buf = load(mpath, &len), *v1 = load(V1_FIXTURE, &len1);
    manifest_header_t *h = (manifest_header_t *)buf, *h1 = (manifest_header_t *)v1;
    CHECK(h->version == MANIFEST_VERSION && h1->version == MANIFEST_VERSION_1);
    h->version = MANIFEST_VERSION_MAX + 1; /* a version this build does not know */
    expect_file_fails(buf, len, INGOT_ERR_FORMAT, "unsupported manifest version 4", NULL);
    h->version = MANIFEST_VERSION_1; /* says 1, carries the version-2 fields */
    reseal(buf, len);
    expect_file_fails(buf, len, INGOT_ERR_FORMAT,
                      "claims manifest version 1 but its header is "
                      "168 bytes",
                      "laid out as version 2");
    h1->version = MANIFEST_VERSION; /* says 2, laid out as 1 */
    reseal(v1, len1);
    expect_file_fails(v1, len1, INGOT_ERR_FORMAT,
                      "claims manifest version 2 but its header is "
                      "144 bytes",
                      "laid out as version 1");
    h1->header_size = sizeof(manifest_header_v2_t); /* ... even with a version-2 header size */
    reseal(v1, len1);
    expect_file_fails(v1, len1, INGOT_ERR_FORMAT, "version 2 header: section offsets", NULL);
    free(v1);
    free(buf);
}

/* The version-2 maxima are covered by the header checksum and checked against the rows. */
static void test_version_2_maxima(const char *mpath)
{
    check_maxima(mpath, MANIFEST_VERSION);
    size_t len;
    uint8_t *buf = load(mpath, &len);
    manifest_header_ext_t *x = &((manifest_header_v2_t *)buf)->ext;
    x->sample_stored_max--; /* unsealed: the checksum covers the new fields */
    expect_open_fails(buf, len, 0, INGOT_ERR_CORRUPT, "header checksum", NULL);
    reseal(buf, len); /* sealed: a row beyond the maxima is refused, at open or at lookup */
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "exceed the header's maxima", NULL);
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open_buffer(buf, len, test_tmpdir(), INGOT_MANIFEST_OPEN_LAZY, &m));
    int refused = 0;
    for (uint64_t i = 0; i < NSAMPLES; i++) {
        ingot_sample_info_t s;
        refused += ingot_manifest_sample_get(m, i, &s) == INGOT_ERR_FORMAT;
    }
    CHECK(refused > 0);
    ingot_manifest_close(m);
    x->sample_stored_max += 2; /* larger than any sample: not the maxima of these tables */
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "sample maxima", "differ from the tables'");
    x->sample_stored_max--;
    x->reserved = 1;
    reseal(buf, len);
    expect_open_fails(buf, len, 0, INGOT_ERR_FORMAT, "bad sample maxima", NULL);
    free(buf);
}

int main(void)
{
    char shard[4096], mpath[4096];
    snprintf(shard, sizeof(shard), "%s", tpath("shard.tar"));
    snprintf(mpath, sizeof(mpath), "%s", tpath("m.ingot"));
    make_shard(shard);
    build(mpath, shard);
    test_round_trip(mpath);
    test_bad_header(mpath);
    test_version_1_fixture();
    test_version_claims(mpath);
    test_version_2_maxima(mpath);
    test_bad_rows(mpath);
    test_bad_strings(mpath);
    test_zstd_bomb(mpath);
    test_builder_rejects();
    test_label_file();
    test_bit_flip(mpath, shard);
    return 0;
}
