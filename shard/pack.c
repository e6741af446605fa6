/* Packer: samples -> tar shards of a target size (+ zstd, dictionary) -> manifest. See pack.h. */
#include "shard/pack.h"
#include "shard/shard_err.h"
#include "shard/tar_write.h"
#include "shard/vec.h"
#include "runtime/base/mem.h"
#include "runtime/base/status.h"
#include <ingot/shard.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#define PACK_SHARD_FMT      "%s/shard-%06u.tar"
#define PACK_PROGRESS_EVERY 1000
#define PACK_CLS_FIELD      "cls"
#define PACK_ZST_SUFFIX     ".zst"
#define PACK_MIB            (1024.0 * 1024.0)

struct packer {
    pack_params_t prm;
    tar_writer_t  w;
    char          path[PATH_MAX];
    unsigned      shards;
    uint64_t      samples, bytes;
    char         *key;        /* current sample's key */
    ZSTD_CCtx    *cctx;
    ZSTD_CDict   *cdict;
    void         *zbuf;
    size_t        zcap;
};

ingot_status_t pack_create(const pack_params_t *params, packer_t **p_p)
{
    if (mkdir(params->out_dir, 0755) != 0 && errno != EEXIST) {
        return shard_err(INGOT_ERR_IO, "%s: cannot create: %s", params->out_dir, strerror(errno));
    }
    packer_t *p = ingot_calloc(1, sizeof(*p), "packer");
    if (p == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    p->prm = *params;
    p->w.fd = -1;
    if (params->zstd_level != 0) {
        p->cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(p->cctx, ZSTD_c_compressionLevel, params->zstd_level);
        if (params->dict != NULL) {
            p->cdict = ZSTD_createCDict(params->dict, params->dict_len, params->zstd_level);
            ZSTD_CCtx_refCDict(p->cctx, p->cdict);
        }
        if (p->cctx == NULL || (params->dict != NULL && p->cdict == NULL)) {
            pack_destroy(p);
            return shard_err(INGOT_ERR_ZSTD, "zstd: cannot create a compression context");
        }
    }
    *p_p = p;
    return INGOT_OK;
}

static ingot_status_t pack_close_shard(packer_t *p)
{
    if (p->w.fd < 0) {
        return INGOT_OK;
    }
    ingot_status_t st = tar_write_end(&p->w);
    if (st == INGOT_OK && (fsync(p->w.fd) != 0 || close(p->w.fd) != 0)) {
        st = shard_err(INGOT_ERR_IO, "%s: fsync/close failed: %s", p->path, strerror(errno));
    } else if (st != INGOT_OK) {
        close(p->w.fd);
    }
    p->w.fd = -1;
    return st;
}

static ingot_status_t pack_open_shard(packer_t *p)
{
    snprintf(p->path, sizeof(p->path), PACK_SHARD_FMT, p->prm.out_dir, p->shards);
    int fd = open(p->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return shard_err(INGOT_ERR_IO, "%s: create failed: %s", p->path, strerror(errno));
    }
    p->w = (tar_writer_t){.fd = fd, .off = 0, .name = p->path};
    p->shards++;
    return INGOT_OK;
}

/* A new key: roll the shard over when it has reached the target size. */
static ingot_status_t pack_new_sample(packer_t *p, const char *key)
{
    if (p->w.fd >= 0 && p->w.off >= p->prm.shard_size) {
        INGOT_CHECK(pack_close_shard(p));
    }
    if (p->w.fd < 0) {
        INGOT_CHECK(pack_open_shard(p));
    }
    free(p->key);
    p->key = strdup(key);
    p->samples++;
    if (p->prm.progress && p->samples % PACK_PROGRESS_EVERY == 0) {
        fprintf(stderr, "\rpacked %llu samples, %.1f MiB, %u shards", (unsigned long long)p->samples,
                (double)p->bytes / PACK_MIB, p->shards);
    }
    return p->key ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

static ingot_status_t pack_compress(packer_t *p, const void *data, size_t len, size_t *zlen_p)
{
    size_t bound = ZSTD_compressBound(len);
    if (bound > p->zcap) {
        void *n = realloc(p->zbuf, bound);
        if (n == NULL) {
            return shard_err(INGOT_ERR_NO_MEMORY, "packer: out of memory");
        }
        p->zbuf = n;
        p->zcap = bound;
    }
    size_t r = ZSTD_compress2(p->cctx, p->zbuf, p->zcap, data, len);
    if (ZSTD_isError(r)) {
        return shard_err(INGOT_ERR_ZSTD, "%s: key '%s': zstd: %s", p->path, p->key,
                         ZSTD_getErrorName(r));
    }
    *zlen_p = r;
    return INGOT_OK;
}

ingot_status_t pack_add(packer_t *p, const char *key, const char *field, const void *data,
                        size_t len)
{
    char name[PATH_MAX];
    if (p->key == NULL || strcmp(p->key, key) != 0) {
        INGOT_CHECK(pack_new_sample(p, key));
    }
    size_t flen = strlen(field);
    int stored = strcmp(field, PACK_CLS_FIELD) == 0 ||
                 (flen > 4 && strcmp(field + flen - 4, PACK_ZST_SUFFIX) == 0);
    if (p->cctx != NULL && !stored) {
        size_t zlen = 0;
        INGOT_CHECK(pack_compress(p, data, len, &zlen));
        snprintf(name, sizeof(name), "%s.%s" PACK_ZST_SUFFIX, key, field);
        data = p->zbuf;
        len  = zlen;
    } else {
        snprintf(name, sizeof(name), "%s.%s", key, field);
    }
    p->bytes += len;
    return tar_write_member(&p->w, name, data, len);
}

static ingot_status_t pack_write_dict(const packer_t *p, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "%s/" PACK_DICT_NAME, p->prm.out_dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p->prm.dict, 1, p->prm.dict_len, f) != p->prm.dict_len ||
        fclose(f) != 0) {
        return shard_err(INGOT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return INGOT_OK;
}

ingot_status_t pack_finish(packer_t *p, uint64_t *samples_p, uint64_t *shards_p)
{
    char mpath[PATH_MAX], dpath[PATH_MAX];
    ingot_manifest_builder_params_t bp = {0};
    INGOT_CHECK(pack_close_shard(p));
    if (p->prm.progress) {
        fprintf(stderr, "\rpacked %llu samples, %.1f MiB, %u shards\n",
                (unsigned long long)p->samples, (double)p->bytes / PACK_MIB, p->shards);
    }
    if (p->prm.dict != NULL) {
        INGOT_CHECK(pack_write_dict(p, dpath, sizeof(dpath)));
        bp.field_mask = INGOT_MANIFEST_BUILDER_PARAM_FIELD_DICT;
        bp.dict_path  = dpath;
    }
    snprintf(mpath, sizeof(mpath), "%s/" PACK_MANIFEST_NAME, p->prm.out_dir);
    ingot_manifest_builder_h b;
    INGOT_CHECK(ingot_manifest_builder_create(mpath, &bp, &b));
    ingot_status_t st = INGOT_OK;
    for (unsigned i = 0; st == INGOT_OK && i < p->shards; i++) {
        snprintf(p->path, sizeof(p->path), PACK_SHARD_FMT, p->prm.out_dir, i);
        st = ingot_manifest_builder_add_shard(b, p->path);
    }
    if (st == INGOT_OK) {
        st = ingot_manifest_builder_write(b);
    }
    ingot_manifest_builder_destroy(b);
    if (st == INGOT_OK) {
        *samples_p = p->samples;
        *shards_p  = p->shards;
    }
    return st;
}

void pack_destroy(packer_t *p)
{
    if (p == NULL) {
        return;
    }
    if (p->w.fd >= 0) {
        close(p->w.fd);
    }
    ZSTD_freeCCtx(p->cctx);
    ZSTD_freeCDict(p->cdict);
    free(p->zbuf);
    free(p->key);
    free(p);
}

ingot_status_t pack_dict_train(const void *buf, const size_t *sizes, unsigned n, void **dict_p,
                               size_t *len_p)
{
    void *dict = malloc(PACK_DICT_SIZE);
    if (dict == NULL) {
        return shard_err(INGOT_ERR_NO_MEMORY, "dictionary: out of memory");
    }
    size_t r = ZDICT_trainFromBuffer(dict, PACK_DICT_SIZE, buf, sizes, n);
    if (ZDICT_isError(r)) {
        free(dict);
        return shard_err(INGOT_ERR_ZSTD, "dictionary training on %u samples failed: %s", n,
                         ZDICT_getErrorName(r));
    }
    *dict_p = dict;
    *len_p  = r;
    return INGOT_OK;
}
