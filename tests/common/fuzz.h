/*
 * What the libFuzzer targets share: the input copied into memory of exactly its size (a read past
 * it is AddressSanitizer's to report, which libFuzzer's own buffer would hide behind its
 * capacity) or into a NUL-terminated string for an API that takes one, the input taken apart
 * field by field (a field past the end reads as zeros, so every input means something), a file
 * for an API that reads one (a memfd: nothing on disk, nothing shared with another target), and
 * the library's log kept quiet (the errors are expected).
 */
#ifndef INGOT_TESTS_COMMON_FUZZ_H
#define INGOT_TESTS_COMMON_FUZZ_H

#include "base/log.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** No log line: a fuzzed parser refuses most inputs, and says so. */
static inline void fuzz_quiet(void)
{
    atomic_store(&ingot_log_level_current, -1);
}

/** A malloc'd copy of @p size bytes, exactly that large (no terminator); NULL when out of memory
 *  (the input is then skipped). */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
    uint8_t *p = malloc(size > 0 ? size : 1);
    if (p != NULL && size > 0) memcpy(p, data, size);
    return p;
}

/** A malloc'd NUL-terminated copy of @p size bytes, for an API that takes a C string (an
 *  embedded NUL ends the string there, as it would in the caller's). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *p = malloc(size + 1);
    if (p != NULL) {
        if (size > 0) memcpy(p, data, size);
        p[size] = '\0';
    }
    return p;
}

/** The input taken apart from the front. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t left;
} fuzz_in_t;

/** The next @p n (<= 8) bytes as a little-endian number; missing bytes are zeros. */
static inline uint64_t fuzz_take(fuzz_in_t *in, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && in->left > 0; i++, in->p++, in->left--) {
        v |= (uint64_t)in->p[0] << (8 * i);
    }
    return v;
}

/** The next line (up to and with its '\n', or the rest): *len_p bytes at the returned pointer,
 *  NULL when nothing is left. */
static inline const uint8_t *fuzz_line(fuzz_in_t *in, size_t *len_p)
{
    if (in->left == 0) return NULL;
    const uint8_t *at = in->p, *nl = memchr(at, '\n', in->left);
    size_t n = nl != NULL ? (size_t)(nl - at) + 1 : in->left;
    in->p += n;
    in->left -= n;
    *len_p = n;
    return at;
}

/** The descriptor of this process's file for the target (a memfd made on first use), holding
 *  exactly the @p n bytes at @p p. */
static inline int fuzz_file(const void *p, size_t n)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0) abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, p, n, 0) != (ssize_t)n) abort();
    return fd;
}

#endif
