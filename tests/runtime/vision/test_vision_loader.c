/*
 * The image transform through the loader (one rank, MPI singleton), on an ImageFolder of JPEGs
 * packed with its class labels: every sample's label is its folder's index and its output
 * equals a direct call with the (loader seed, epoch, index) the loader passes; two runs give
 * the same outputs bit for bit, with one worker or two; another epoch gives other crops; a run
 * resumed from a cursor mid-epoch gives the uninterrupted run's outputs, every sample of the
 * epoch exactly once across the save and the resume. Each bad image fails its step with
 * INGOT_ERR_FORMAT (or OUT_OF_RANGE for a bomb), the message naming the shard, the key and the
 * sample's offset in the shard: a truncated JPEG, a file that is no image, a zero-byte file, a
 * 60,000 x 60,000 header; a 16-bit PNG is decoded.
 */
#include "vision_data.h"

#define N     48
#define BATCH 8
#define SEED  5

static ingot_ctx_h ctx;
static ingot_vision_h vis;

typedef struct run {
    uint64_t hash[2][N]; /* per epoch, per global index */
    uint8_t times[2][N]; /* deliveries per epoch, per global index */
    uint64_t seen[2];
} run_t;

static ingot_loader_params_t params(const char *m, uint32_t workers, const ingot_cursor_t *c)
{
    return (ingot_loader_params_t){
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_DEVICE | INGOT_LOADER_PARAM_FIELD_TRANSFORM |
                      INGOT_LOADER_PARAM_FIELD_THREADS | (c ? INGOT_LOADER_PARAM_FIELD_CURSOR : 0),
        .manifest_path = m,
        .global_batch = BATCH,
        .seed = SEED,
        .epochs = 2,
        .device = INGOT_DEVICE_HOST,
        .transform = ingot_transform_image_decode,
        .transform_arg = vis,
        .sample_out_size = ingot_vision_out_size(vis),
        .workers = workers,
        .cursor = c};
}

/* The sample's image, read through the manifest, transformed directly. */
static uint64_t direct_hash(ingot_manifest_h m, uint64_t index, uint64_t epoch)
{
    ingot_shard_reader_h r;
    ingot_sample_info_t s;
    ingot_field_info_t f;
    CHECK_OK(ingot_manifest_sample_get(m, index, &s));
    CHECK_OK(ingot_manifest_field_get(m, &s, 0, &f));
    uint8_t *buf = malloc(s.length), *img = malloc(f.raw_len), out[3 * VD_SIDE * VD_SIDE * 4];
    size_t len;
    CHECK(buf != NULL && img != NULL);
    CHECK_OK(ingot_shard_reader_create(m, &r));
    CHECK_OK(ingot_shard_reader_read(r, index, buf, s.length));
    CHECK_OK(ingot_shard_reader_decode(r, index, buf, 0, img, f.raw_len, &len));
    ingot_field_view_t fv = {.name = f.name, .data = img, .len = len};
    ingot_sample_view_t sv = {.index = index,
                              .key = s.key,
                              .field_count = 1,
                              .fields = &fv,
                              .field_mask = INGOT_SAMPLE_VIEW_FIELD_EPOCH |
                                            INGOT_SAMPLE_VIEW_FIELD_SEED,
                              .epoch = epoch,
                              .seed = SEED};
    CHECK_OK(ingot_transform_image_decode(&sv, out, sizeof(out), vis));
    ingot_shard_reader_destroy(r);
    free(buf);
    free(img);
    return vd_hash(out, sizeof(out));
}

/* Deliver up to @p steps batches (0: all) into @p run, checking labels against keys. */
static ingot_status_t drain(ingot_loader_h l, run_t *run, uint64_t steps)
{
    ingot_batch_t b;
    ingot_status_t st = INGOT_OK;
    uint64_t k = 0;
    while ((steps == 0 || k < steps) && (st = ingot_loader_next(l, &b)) == INGOT_OK) {
        for (uint32_t i = 0; i < b.count; i++) {
            CHECK(b.lengths[i] == ingot_vision_out_size(vis) && b.epoch < 2);
            CHECK(b.labels[i] == b.keys[i][1] - '0'); /* key "c<k>/<n>": class k */
            const uint8_t *o = (const uint8_t *)b.data + b.offsets[i];
            CHECK(b.indices[i] < N);
            run->hash[b.epoch][b.indices[i]] = vd_hash(o, b.lengths[i]);
            run->times[b.epoch][b.indices[i]]++;
            run->seen[b.epoch]++;
        }
        CHECK_OK(ingot_loader_release(l, &b));
        k++;
    }
    return steps && k == steps ? INGOT_OK : st;
}

/* Epoch 1 saved in @p c and resumed in @p r: every sample exactly once across the two, each
 * with the uninterrupted run @p a's output. */
static void check_resumed(const run_t *a, const run_t *c, const run_t *r)
{
    for (uint64_t i = 0; i < N; i++) {
        CHECK(c->times[1][i] + r->times[1][i] == 1);
        CHECK((c->times[1][i] ? c->hash[1][i] : r->hash[1][i]) == a->hash[1][i]);
    }
}

static void test_determinism(const char *m)
{
    static run_t a, b, c, r;
    ingot_loader_h l;
    ingot_loader_params_t p = params(m, 2, NULL);
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, &a, 0), INGOT_END_OF_DATA);
    ingot_loader_destroy(l);
    CHECK(a.seen[0] == N && a.seen[1] == N);
    ingot_manifest_h man;
    CHECK_OK(ingot_manifest_open(m, 0, &man));
    int differ = 0;
    for (uint64_t i = 0; i < N; i++) {
        CHECK(a.hash[0][i] == direct_hash(man, i, 0) && a.hash[1][i] == direct_hash(man, i, 1));
        differ += a.hash[0][i] != a.hash[1][i];
    }
    ingot_manifest_close(man);
    CHECK(differ >= N - 2); /* another epoch, other crops */
    p = params(m, 1, NULL);
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, &b, 0), INGOT_END_OF_DATA);
    ingot_loader_destroy(l);
    CHECK(memcmp(a.hash, b.hash, sizeof(a.hash)) == 0); /* another run, one worker */
    /* resume: 3 steps of epoch 1 (9 steps in), cursor, a new loader from it */
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_OK(drain(l, &c, N / BATCH + 3));
    ingot_cursor_t cur;
    CHECK_OK(ingot_loader_save(l, &cur));
    ingot_loader_destroy(l);
    p = params(m, 2, &cur);
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    CHECK_STATUS(drain(l, &r, 0), INGOT_END_OF_DATA);
    ingot_loader_destroy(l);
    ingot_cursor_release(&cur);
    CHECK(c.seen[1] == 3 * BATCH && r.seen[0] == 0 && r.seen[1] == N - 3 * BATCH);
    check_resumed(&a, &c, &r);
}

/* A dataset whose image @p bad (class 1) holds @p len bytes of @p data: the step fails naming
 * it. */
static void bad_image(const char *name, const void *data, size_t len, ingot_status_t want,
                      const char *what)
{
    char root[1024], out[1024], path[2048];
    snprintf(root, sizeof(root), "%s/bad-%s", test_tmpdir(), name);
    snprintf(out, sizeof(out), "%s/bad-%s-packed", test_tmpdir(), name);
    vd_folder(root, BATCH);
    snprintf(path, sizeof(path), "%s/c1/0005.jpg", root);
    remove(path); /* replaced by the bad image (a PNG keeps the key: its own extension) */
    snprintf(path, sizeof(path), "%s/c1/0005.%s", root, strcmp(name, "png16") ? "jpg" : "png");
    vd_write(path, data, len);
    const char *m = vd_pack(root, out);
    ingot_loader_params_t p = params(m, 2, NULL);
    p.epochs = 1;
    ingot_loader_h l;
    ingot_batch_t b;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_status_t st = ingot_loader_next(l, &b);
    CHECK_STATUS(st, want);
    if (st == INGOT_OK) {
        CHECK_OK(ingot_loader_release(l, &b));
    } else {
        ingot_manifest_h man;
        ingot_sample_info_t s;
        uint64_t index;
        char where[256];
        CHECK_OK(ingot_manifest_open(m, 0, &man));
        CHECK_OK(ingot_manifest_find(man, "c1/0005", -1, &index));
        CHECK_OK(ingot_manifest_sample_get(man, index, &s));
        snprintf(where, sizeof(where), "shard 'shard-000000.tar' key 'c1/0005' offset %llu",
                 (unsigned long long)s.offset);
        fprintf(stderr, "%s: %s\n", name, ingot_last_error());
        CHECK_CONTAINS(ingot_last_error(), "transform failed on sample 'c1/0005'");
        CHECK_CONTAINS(ingot_last_error(), where);
        CHECK_CONTAINS(ingot_last_error(), what);
        ingot_manifest_close(man);
    }
    ingot_loader_destroy(l);
}

static void test_bad_images(void)
{
    uint8_t *px = img_pixels(64, 48, 3, 1);
    size_t len;
    uint8_t *j = img_jpeg(px, 64, 48, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    bad_image("truncated", j, len / 2, INGOT_ERR_FORMAT, "JPEG: no end-of-image marker");
    bad_image("text", "class notes\n", 12, INGOT_ERR_FORMAT, "not a JPEG, PNG or binary PNM");
    bad_image("empty", "", 0, INGOT_ERR_FORMAT, "an empty field (0 bytes)");
    size_t sof = 2;
    while (!(j[sof] == 0xff && j[sof + 1] == 0xc0)) {
        sof++;
    }
    j[sof + 5] = j[sof + 7] = 60000 >> 8;
    j[sof + 6] = j[sof + 8] = 60000 & 0xff;
    bad_image("bomb", j, len, INGOT_ERR_OUT_OF_RANGE, "60000x60000");
    uint8_t *w16 = malloc((size_t)64 * 48 * 6);
    CHECK(w16 != NULL);
    for (size_t i = 0; i < (size_t)64 * 48 * 3; i++) {
        w16[2 * i] = px[i];
        w16[2 * i + 1] = 0;
    }
    uint8_t *png = img_png(w16, 64, 48, 3, 16, 0, &len);
    bad_image("png16", png, len, INGOT_OK, "");
    free(png);
    free(w16);
    free(j);
    free(px);
}

int main(void)
{
    char root[1024], out[1024];
    setenv("INGOT_TIMEOUT", "60s", 1);
    CHECK_OK(ingot_init(NULL, &ctx));
    vis = vd_vision();
    snprintf(root, sizeof(root), "%s/folder", test_tmpdir());
    snprintf(out, sizeof(out), "%s/packed", test_tmpdir());
    vd_folder(root, N);
    test_determinism(vd_pack(root, out));
    test_bad_images();
    ingot_vision_destroy(vis);
    ingot_finalize(ctx);
    printf("vision loader: ok\n");
    return 0;
}
