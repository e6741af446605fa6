/*
 * ingot-train's checkpoints: model.ckpt holds a header (magic, version, the model's shape and
 * name, the training manifest's digest, the seed, the generation and the cursor's position),
 * the weights and the momentum, and a checksum over all of it; written to a temporary file,
 * fsync'ed and renamed, then the directory fsync'ed. The loader's cursor goes first into one of
 * two slots, so the model always names a cursor that is whole.
 */
#include "train/train.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CKPT_MAGIC   "INGOTTRN"
#define CKPT_VERSION 1u
#define CKPT_NAME    "model.ckpt"

typedef struct ckpt_header {
    char magic[8];
    uint32_t version, pad;
    uint64_t nparams;
    train_ckpt_meta_t meta;
} ckpt_header_t;

uint64_t train_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

/* The checksum of a checkpoint: header, weights, momentum. */
static uint64_t ckpt_sum(const ckpt_header_t *h, const train_model_t *m)
{
    size_t bytes = m->nparams * sizeof(float);
    uint64_t sum = train_fnv(TRAIN_FNV_BASIS, h, sizeof(*h));
    return train_fnv(train_fnv(sum, m->params, bytes), m->velocity, bytes);
}

static const char *model_name(uint32_t kind)
{
    return kind == TRAIN_MLP ? "mlp" : "softmax";
}

static void cursor_path(char *buf, size_t len, const char *dir, uint64_t generation)
{
    snprintf(buf, len, "%s/cursor.%u.ingot", dir, (unsigned)(generation % 2));
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int train_ckpt_write(const char *dir, const train_model_t *m, const train_ckpt_meta_t *meta,
                     const ingot_cursor_t *cursor)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, TRAIN_TOOL ": checkpoint directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    cursor_path(path, sizeof(path), dir, meta->generation);
    if (ingot_cursor_write(path, cursor) != INGOT_OK) {
        fprintf(stderr, TRAIN_TOOL ": %s: %s\n", path, ingot_last_error());
        return -1;
    }
    ckpt_header_t h = {.version = CKPT_VERSION, .nparams = m->nparams, .meta = *meta};
    memcpy(h.magic, CKPT_MAGIC, sizeof(h.magic));
    size_t bytes = m->nparams * sizeof(float);
    uint64_t sum = ckpt_sum(&h, m);
    snprintf(path, sizeof(path), "%s/" CKPT_NAME, dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = fd < 0 ? -1 : 0;
    if (rc == 0) {
        rc = write_all(fd, &h, sizeof(h)) || write_all(fd, m->params, bytes) ||
                     write_all(fd, m->velocity, bytes) || write_all(fd, &sum, sizeof(sum)) ||
                     fsync(fd) != 0
                 ? -1
                 : 0;
    }
    if (fd >= 0 && close(fd) != 0) {
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
    }
    if (rc == 0) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    } else {
        fprintf(stderr, TRAIN_TOOL ": writing %s: %s\n", tmp, strerror(errno));
        unlink(tmp);
    }
    return rc;
}

/* The file's header and payload, whole and with a good checksum; 0 or -1 (reported). */
static int ckpt_load(const char *path, train_model_t *m, const train_ckpt_meta_t *expect,
                     ckpt_header_t *h)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, TRAIN_TOOL ": --resume: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat stt;
    size_t bytes = m->nparams * sizeof(float);
    size_t want = sizeof(*h) + 2 * bytes + sizeof(uint64_t);
    int rc = fstat(fileno(f), &stt) == 0 && fread(h, sizeof(*h), 1, f) == 1 ? 0 : -1;
    if (rc != 0 || memcmp(h->magic, CKPT_MAGIC, sizeof(h->magic)) != 0 ||
        h->version != CKPT_VERSION) {
        fprintf(stderr, TRAIN_TOOL ": --resume: %s is not an ingot-train checkpoint (version %u)\n",
                path, CKPT_VERSION);
        fclose(f);
        return -1;
    }
    if (h->meta.shape != expect->shape) {
        fprintf(stderr,
                TRAIN_TOOL ": --resume: %s holds a %s model (hidden %u); this run trains a %s "
                           "model (hidden %u)\n",
                path, model_name(h->meta.kind), h->meta.hidden, model_name(expect->kind),
                expect->hidden);
        fclose(f);
        return -1;
    }
    if (h->nparams != m->nparams || (size_t)stt.st_size != want) {
        fprintf(stderr,
                TRAIN_TOOL ": --resume: %s: %llu bytes, expected %zu for a %s model of %zu "
                           "parameters (truncated or extended)\n",
                path, (unsigned long long)stt.st_size, want, model_name(m->kind), m->nparams);
        fclose(f);
        return -1;
    }
    uint64_t sum = 0;
    rc = fread(m->params, 1, bytes, f) == bytes && fread(m->velocity, 1, bytes, f) == bytes &&
                 fread(&sum, sizeof(sum), 1, f) == 1
             ? 0
             : -1;
    fclose(f);
    if (rc != 0 || sum != ckpt_sum(h, m)) {
        fprintf(stderr, TRAIN_TOOL ": --resume: %s: checksum mismatch (a damaged file)\n", path);
        return -1;
    }
    return 0;
}

int train_ckpt_read(const char *dir, train_model_t *m, const train_ckpt_meta_t *expect,
                    uint32_t world, train_ckpt_meta_t *meta_p, ingot_cursor_t *cursor_p)
{
    char path[PATH_MAX];
    ckpt_header_t h;
    snprintf(path, sizeof(path), "%s/" CKPT_NAME, dir);
    if (ckpt_load(path, m, expect, &h) != 0) {
        return -1;
    }
    const train_ckpt_meta_t *got = &h.meta;
    if (got->manifest_digest != expect->manifest_digest || got->seed != expect->seed) {
        fprintf(stderr,
                TRAIN_TOOL ": --resume: %s was trained on dataset %016llx with seed %llu; this "
                           "run reads dataset %016llx with seed %llu\n",
                path, (unsigned long long)got->manifest_digest, (unsigned long long)got->seed,
                (unsigned long long)expect->manifest_digest, (unsigned long long)expect->seed);
        return -1;
    }
    cursor_path(path, sizeof(path), dir, got->generation);
    ingot_cursor_expect_t ce = {
        .manifest_digest = expect->manifest_digest, .seed = expect->seed, .world_size = world};
    if (ingot_cursor_read(path, &ce, cursor_p) != INGOT_OK) {
        fprintf(stderr, TRAIN_TOOL ": --resume: %s: %s\n", path, ingot_last_error());
        return -1;
    }
    if (cursor_p->epoch != got->epoch || cursor_p->consumed != got->consumed) {
        fprintf(stderr,
                TRAIN_TOOL ": --resume: %s is at epoch %llu, sample %llu, but the model is at "
                           "epoch %llu, sample %llu\n",
                path, (unsigned long long)cursor_p->epoch, (unsigned long long)cursor_p->consumed,
                (unsigned long long)got->epoch, (unsigned long long)got->consumed);
        ingot_cursor_release(cursor_p);
        return -1;
    }
    *meta_p = *got;
    return 0;
}
