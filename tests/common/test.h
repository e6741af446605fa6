/*
 * Minimal test helpers: a failed CHECK prints where and what, then exits 1; SKIP exits 77 with a
 * reason (ctest reports it as skipped). Each test is its own process.
 */
#ifndef INGOT_TEST_H
#define INGOT_TEST_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ingot/status.h>

#define CHECK(_cond) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #_cond); \
            exit(1); \
        } \
    } while (0)

#define CHECK_STATUS(_expr, _expected) \
    do { \
        ingot_status_t _s = (_expr), _e = (_expected); \
        if (_s != _e) { \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, __LINE__, \
                    #_expr, (int)_s, ingot_status_string(_s), (int)_e, ingot_status_string(_e)); \
            exit(1); \
        } \
    } while (0)

#define CHECK_OK(_expr) CHECK_STATUS(_expr, INGOT_OK)

/** Check that @p _hay contains @p _needle (strings). */
#define CHECK_CONTAINS(_hay, _needle) \
    do { \
        const char *_h = (_hay), *_n = (_needle); \
        if (_h == NULL || strstr(_h, _n) == NULL) { \
            fprintf(stderr, "%s:%d: expected \"%s\" in \"%s\"\n", __FILE__, __LINE__, _n, \
                    _h ? _h : "(null)"); \
            exit(1); \
        } \
    } while (0)

#define SKIP(...) \
    do { \
        fprintf(stderr, "SKIP: "); \
        fprintf(stderr, __VA_ARGS__); \
        fprintf(stderr, "\n"); \
        exit(77); \
    } while (0)

static int test_rm_cb_(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static char test_tmpdir_[512];

static void test_tmpdir_cleanup_(void)
{
    if (test_tmpdir_[0] != '\0' && getenv("INGOT_TEST_KEEP") == NULL) {
        nftw(test_tmpdir_, test_rm_cb_, 16, FTW_DEPTH | FTW_PHYS);
    }
}

/** A fresh directory under $TMPDIR (default /tmp), removed at exit (INGOT_TEST_KEEP keeps it). */
static inline const char *test_tmpdir(void)
{
    if (test_tmpdir_[0] == '\0') {
        const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(test_tmpdir_, sizeof(test_tmpdir_), "%s/ingot-test.XXXXXX", base);
        if (mkdtemp(test_tmpdir_) == NULL) {
            fprintf(stderr, "mkdtemp(%s): %s\n", test_tmpdir_, strerror(errno));
            exit(1);
        }
        atexit(test_tmpdir_cleanup_);
    }
    return test_tmpdir_;
}

/** Read a whole file into a NUL-terminated malloc'd buffer (exits on error). */
static inline char *test_read_file(const char *path, size_t *len_p)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    CHECK(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len_p) *len_p = (size_t)n;
    return buf;
}

#endif
