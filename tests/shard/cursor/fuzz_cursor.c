/*
 * Fuzz target: the resume cursor's reader (shard/cursor.h) over arbitrary files. Input: a byte of
 * flags (bit 0: the last 8 bytes made the file's checksum first, so that the fields behind it
 * are reached; bits 1-7: a world size for the checks against the resuming job), the rest is the
 * file. A cursor read must hold together (a known version, a size that is its skipped list's,
 * whole global batches, a locality order with its nodes); checked against a job that has its
 * manifest and seed it passes exactly when the world size divides its global batch; written
 * again it reads to the same cursor, and a current-version file is written back byte for byte.
 */
#include "shard/cursor.h"
#include "base/hash.h"
#include "common/fuzz.h"

#define FUZZ_CURSOR_MAX (64u << 10)

static int same_cursor(const ingot_cursor_t *a, const ingot_cursor_t *b)
{
    return a->order_window == b->order_window && a->manifest_digest == b->manifest_digest &&
           a->seed == b->seed && a->epoch == b->epoch && a->consumed == b->consumed &&
           a->global_batch == b->global_batch && a->skipped_count == b->skipped_count &&
           a->order_nodes == b->order_nodes &&
           (a->skipped_count == 0 ||
            memcmp(a->skipped, b->skipped, a->skipped_count * sizeof(uint64_t)) == 0);
}

/* Against a job of the cursor's manifest and seed on @p world ranks (and one of another seed). */
static void check_expect(const uint8_t *file, size_t len, const ingot_cursor_t *c, uint32_t world)
{
    ingot_cursor_expect_t e = {c->manifest_digest, c->seed, world};
    ingot_cursor_t again;
    int fits = world != 0 && c->global_batch % world == 0;
    ingot_status_t st = ingot_cursor_decode("fuzz", file, len, &e, &again);
    if ((st == INGOT_OK) != fits) abort();
    if (st == INGOT_OK) ingot_cursor_release(&again);
    e.seed++;
    if (ingot_cursor_decode("fuzz", file, len, &e, &again) != INGOT_ERR_MISMATCH) abort();
}

/* Written again (the current version), @p c reads to itself; from a current-version file, the
 * same bytes. */
static void check_rewrite(const uint8_t *file, size_t len, const ingot_cursor_t *c)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    ingot_cursor_t again;
    if (ingot_cursor_encode(c, &buf, &n) != INGOT_OK) return;
    if (ingot_cursor_decode("fuzz", buf, n, NULL, &again) != INGOT_OK ||
        again.version != INGOT_CURSOR_VERSION || !same_cursor(c, &again) ||
        (c->version == INGOT_CURSOR_VERSION && (n != len || memcmp(buf, file, n) != 0))) {
        abort();
    }
    ingot_cursor_release(&again);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > FUZZ_CURSOR_MAX) return 0;
    size_t len = size - 1;
    uint8_t *file = fuzz_copy(data + 1, len);
    ingot_cursor_t c;
    if (file == NULL) return 0;
    if ((data[0] & 1) && len >= sizeof(uint64_t)) {
        uint64_t sum = ingot_hash64(file, len - sizeof(sum)); /* the format's own checksum */
        memcpy(file + len - sizeof(sum), &sum, sizeof(sum));
    }
    if (ingot_cursor_decode("fuzz", file, len, NULL, &c) == INGOT_OK) {
        if (c.version < 1 || c.version > INGOT_CURSOR_VERSION || c.global_batch == 0 ||
            c.consumed % c.global_batch != 0 || (c.order_window == 0) != (c.order_nodes == 0) ||
            (c.version == 1 && c.order_window != 0) ||
            (c.skipped_count > 0) != (c.skipped != NULL) ||
            c.skipped_count > len / sizeof(uint64_t)) {
            abort();
        }
        check_expect(file, len, &c, data[0] >> 1);
        check_rewrite(file, len, &c);
        ingot_cursor_release(&c);
    }
    free(file);
    return 0;
}
