/*
 * zstd member decoding and I/O faults: a reused context decodes many frames (plain and with a
 * dictionary); truncated and corrupt frames, frames beyond the window limit and frames whose
 * output exceeds the raw length fail with messages naming the member; injected open and pread
 * failures surface as I/O errors naming the shard, never as good samples.
 */
#include "common/shard_test_util.h"
#include "shard/zstd_codec.h"
#include "base/fault.h"
#include <ingot/shard.h>
#include <zdict.h>
#include <zstd.h>

#define WHAT    "s.tar: key 'k' field 'bin'"
#define NFRAMES 200
#define LEVEL   3

static void test_reuse_and_dict(void)
{
    char text[NFRAMES][96], z[256], out[128];
    size_t sizes[NFRAMES], total = 0;
    char *all = malloc(NFRAMES * sizeof(text[0]));
    for (int i = 0; i < NFRAMES; i++) {
        sizes[i] = (size_t)snprintf(text[i], sizeof(text[i]),
                                    "{\"id\": %d, \"name\": \"sample-%d\", "
                                    "\"tags\": [\"a\", \"b\"], \"v\": %d}",
                                    i, i * 7, i % 13);
        memcpy(all + total, text[i], sizes[i]);
        total += sizes[i];
    }
    char dict[4096];
    size_t dl = ZDICT_trainFromBuffer(dict, sizeof(dict), all, sizes, NFRAMES);
    CHECK(!ZDICT_isError(dl));
    shard_zstd_t plain, withdict;
    CHECK_OK(ingot_shard_zstd_init(&plain, NULL, 0));
    CHECK_OK(ingot_shard_zstd_init(&withdict, dict, dl));
    ZSTD_CCtx *c = ZSTD_createCCtx();
    for (int i = 0; i < NFRAMES; i++) {
        size_t zl = ZSTD_compress_usingDict(c, z, sizeof(z), text[i], sizes[i], dict, dl, LEVEL);
        CHECK(!ZSTD_isError(zl));
        CHECK_OK(ingot_shard_zstd_decode(&withdict, z, zl, out, sizes[i], WHAT));
        CHECK(memcmp(out, text[i], sizes[i]) == 0);
        CHECK_STATUS(ingot_shard_zstd_decode(&plain, z, zl, out, sizes[i], WHAT), INGOT_ERR_ZSTD);
        zl = ZSTD_compressCCtx(c, z, sizeof(z), text[i], sizes[i], LEVEL);
        CHECK_OK(ingot_shard_zstd_decode(&plain, z, zl, out, sizes[i], WHAT));
        CHECK(memcmp(out, text[i], sizes[i]) == 0);
    }
    ZSTD_freeCCtx(c);
    ingot_shard_zstd_release(&plain);
    ingot_shard_zstd_release(&withdict);
    free(all);
}

static void test_bad_frames(void)
{
    shard_zstd_t z;
    char src[4096], frame[4096], out[8192];
    memset(src, 'a', sizeof(src));
    size_t zl = ZSTD_compress(frame, sizeof(frame), src, sizeof(src), LEVEL);
    CHECK_OK(ingot_shard_zstd_init(&z, NULL, 0));
    CHECK_OK(ingot_shard_zstd_decode(&z, frame, zl, out, sizeof(src), WHAT));
    ingot_last_error_clear();
    CHECK_STATUS(ingot_shard_zstd_decode(&z, frame, zl - 3, out, sizeof(src), WHAT),
                 INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), WHAT);
    CHECK_CONTAINS(ingot_last_error(), "truncated zstd frame");
    CHECK_STATUS(ingot_shard_zstd_decode(&z, frame, zl, out, sizeof(src) - 1, WHAT),
                 INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), "exceeds the raw length 4095");
    CHECK_STATUS(ingot_shard_zstd_decode(&z, frame, zl, out, sizeof(src) + 1, WHAT),
                 INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), "manifest says 4097");
    frame[0] ^= 0xff;
    CHECK_STATUS(ingot_shard_zstd_decode(&z, frame, zl, out, sizeof(src), WHAT), INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), "corrupt zstd frame");
    CHECK_STATUS(ingot_shard_zstd_decode(&z, frame, 0, out, sizeof(src), WHAT), INGOT_ERR_ZSTD);
    /* A frame asking for a 256 MiB window (beyond the 128 MiB limit): magic, FHD, window
     * descriptor (2^28), then a last raw block of one byte. */
    const uint8_t big_window[] = {0x28,           0xb5, 0x2f, 0xfd, 0x00,
                                  (28 - 10) << 3, 0x09, 0x00, 0x00, 'x'};
    CHECK_STATUS(ingot_shard_zstd_decode(&z, big_window, sizeof(big_window), out, 1, WHAT),
                 INGOT_ERR_ZSTD);
    CHECK_CONTAINS(ingot_last_error(), WHAT);
    CHECK_CONTAINS(ingot_last_error(), "window beyond the limit of 2^27");
    ingot_shard_zstd_release(&z);
}

/* Injected open / pread failures while reading a sample: I/O errors naming the shard. */
static void test_io_faults(void)
{
    if (!INGOT_FAULT_ENABLED) {
        printf("fault injection not compiled in: I/O fault part skipped\n");
        return;
    }
    tb_t t = {0};
    tb_file(&t, "k.txt", "payload");
    tb_end(&t);
    tb_write(&t, tpath("s.tar"));
    ingot_manifest_builder_h b;
    CHECK_OK(ingot_manifest_builder_create(tpath("m.ingot"), NULL, &b));
    CHECK_OK(ingot_manifest_builder_add_shard(b, tpath("s.tar")));
    CHECK_OK(ingot_manifest_builder_write(b));
    ingot_manifest_builder_destroy(b);
    ingot_manifest_h m;
    ingot_shard_reader_h r;
    uint8_t buf[64];
    char err[128];
    CHECK_OK(ingot_manifest_open(tpath("m.ingot"), 0, &m));
    CHECK_OK(ingot_shard_reader_create(m, &r));
    CHECK_OK(ingot_fault_arm("open:*:EACCES", err, sizeof(err)));
    CHECK_STATUS(ingot_shard_reader_read(r, 0, buf, sizeof(buf)), INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(ingot_last_error(), "cannot open shard '");
    CHECK_CONTAINS(ingot_last_error(), "s.tar': Permission denied");
    CHECK_OK(ingot_fault_arm("pread:*:EIO", err, sizeof(err)));
    CHECK_STATUS(ingot_shard_reader_read(r, 0, buf, sizeof(buf)), INGOT_ERR_IO);
    CHECK_CONTAINS(ingot_last_error(), "s.tar: pread of");
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    CHECK_OK(ingot_shard_reader_read(r, 0, buf, sizeof(buf)));
    CHECK(memcmp(buf, "payload", 7) == 0);
    ingot_shard_reader_destroy(r);
    ingot_manifest_close(m);
    free(t.buf);
}

int main(void)
{
    test_reuse_and_dict();
    test_bad_frames();
    test_io_faults();
    return 0;
}
