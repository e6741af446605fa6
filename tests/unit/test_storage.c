/*
 * Storage backends: scatter reads beyond IOV_MAX land byte-exact, reads past the end and files
 * whose size changed are errors naming the file, and the emulation spec parser accepts and
 * rejects what it should, saying why.
 */
#include "test.h"
#include "base/config.h"
#include "runtime/storage.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>

#define PIECES 3000 /* > IOV_MAX (1024): the read is split */
#define PIECE  7

static char path[1024], log_path[1024];

static void make_file(size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)(i * 13 + 5);
        CHECK(write(fd, &c, 1) == 1);
    }
    close(fd);
}

static void test_scatter_beyond_iov_max(void)
{
    const size_t len = (size_t)PIECES * PIECE;
    make_file(len + 100);
    ingot_storage_params_t sp = {0};
    ingot_storage_t *s;
    CHECK_OK(ingot_storage_create(&sp, 1, &s));
    CHECK_OK(ingot_storage_open(s, 0, path, len + 100));
    static unsigned char dst[PIECES][PIECE];
    static struct iovec iov[PIECES];
    for (int i = 0; i < PIECES; i++) { /* pieces land in reverse order: a real scatter */
        iov[i] = (struct iovec){.iov_base = dst[PIECES - 1 - i], .iov_len = PIECE};
    }
    CHECK(PIECES > IOV_MAX);
    CHECK_OK(ingot_storage_readv(s, 0, iov, PIECES, 50));
    for (int i = 0; i < PIECES; i++) {
        for (int j = 0; j < PIECE; j++) {
            size_t at = 50 + (size_t)i * PIECE + (size_t)j;
            CHECK(dst[PIECES - 1 - i][j] == (unsigned char)(at * 13 + 5));
        }
    }
    /* Beyond the end: refused before any read, naming the shard. */
    unsigned char buf[64];
    CHECK_STATUS(ingot_storage_read(s, 0, buf, sizeof(buf), len + 90), INGOT_ERR_OUT_OF_RANGE);
    ingot_storage_destroy(s);
    /* A size other than the manifest's: mismatch naming both sizes. */
    CHECK_OK(ingot_storage_create(&sp, 1, &s));
    CHECK_STATUS(ingot_storage_open(s, 0, path, len + 101), INGOT_ERR_MISMATCH);
    ingot_storage_destroy(s);
    char *text = test_read_file(log_path, NULL), want[1200];
    snprintf(want, sizeof(want), "is beyond the end of shard '%s'", path);
    CHECK_CONTAINS(text, want);
    snprintf(want, sizeof(want), "shard '%s' has %zu bytes but the manifest recorded %zu", path,
             len + 100, len + 101);
    CHECK_CONTAINS(text, want);
    free(text);
}

static void test_emulation_spec(void)
{
    ingot_storage_emulation_t e;
    char err[256];
    CHECK(ingot_storage_emulation_parse("bw=200MiB/s,lat=5ms", &e, err, sizeof(err)) == 0);
    CHECK(e.bandwidth == 200ull << 20 && e.latency_ns == 5000000ull);
    CHECK(ingot_storage_emulation_parse("lat=250us", &e, err, sizeof(err)) == 0);
    CHECK(e.bandwidth == 0 && e.latency_ns == 250000ull);
    CHECK(ingot_storage_emulation_parse("none", &e, err, sizeof(err)) == 0 && e.bandwidth == 0);
    static const struct { const char *spec, *why; } bad[] = {
        {"bw=200MiB", "needs a rate such as 200MiB/s"},
        {"bw=0/s", "is not a positive size per second"},
        {"bw=abc/s", "is not a positive size per second"},
        {"lat=5", "is not a duration"},
        {"speed=1", "unknown key 'speed'"},
        {"bw", "is not key=value"},
        {",", "empty specification"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK(ingot_storage_emulation_parse(bad[i].spec, &e, err, sizeof(err)) == -1);
        CHECK_CONTAINS(err, bad[i].why);
    }
}

int main(void)
{
    snprintf(path, sizeof(path), "%.900s/shard.bin", test_tmpdir());
    snprintf(log_path, sizeof(log_path), "%.900s/storage.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    CHECK_OK(ingot_config_load());
    test_scatter_beyond_iov_max();
    test_emulation_spec();
    return 0;
}
