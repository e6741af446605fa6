/* Packer: samples -> tar shards of a target size (+ zstd, dictionary) -> manifest. See
 * include/ingot/pack.h. */
#include <ingot/pack.h>
#include "base/param.h"
#include "base/log.h"
#include "shard/tar.h"
#include "shard/tar_write.h"
#include "shard/vec.h"
#include "base/base_config.h"
#include "base/mem.h"
#include "base/pool.h"
#include "base/status.h"
#include "base/time.h"
#include <ingot/shard.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#define PACK_SHARD_FMT      "%s/shard-%06u.tar"
#define PACK_PROGRESS_EVERY 1000
#define PACK_BAR_WIDTH      30
#define PACK_PERCENT        100.0
#define PACK_CLS_FIELD      "cls"
#define PACK_ZST_SUFFIX     ".zst"
#define PACK_MIB            (1024.0 * 1024.0)
#define PACK_POOL_NAME      "pack"
/** Dictionary size trained by ingot_pack_dict_train() (zstd's own default for `zstd --train`). */
#define PACK_DICT_SIZE (112640u)
/** Wait for a worker this long without any shard finishing before giving up. */
#define PACK_WAIT_DEFAULT_NS (300ull * INGOT_NSEC_PER_SEC)

/* One member buffered for a shard job: name and data in the job's blob. */
typedef struct pack_member {
    size_t name_off, data_off, len;
    int compress;
} pack_member_t;

/* One shard: its members, compressed and written by a pool thread (or inline). */
typedef struct pack_job {
    struct ingot_packer *p;
    unsigned index;
    shard_vec_t members; /* pack_member_t */
    shard_vec_t blob;    /* char */
} pack_job_t;

struct ingot_packer {
    ingot_packer_params_t prm; /* defaults applied */
    ingot_pool_t *pool;
    pack_job_t *cur;
    unsigned shards;
    uint64_t samples, members, bytes, cur_bytes;
    char *key;             /* current sample's key */
    ZSTD_CDict *cdict;     /* shared read-only by the workers */
    void *dict;            /* copy of the dictionary, written at finish */
    _Atomic int err;       /* first job error (ingot_status_t), 0 if none */
    _Atomic unsigned done; /* jobs finished */
    uint64_t wait_ns;
};

static void pack_job_free(pack_job_t *j)
{
    if (j != NULL) {
        ingot_shard_vec_free(&j->members);
        ingot_shard_vec_free(&j->blob);
        free(j);
    }
}

static ingot_status_t pack_job_new(ingot_packer_h p, pack_job_t **j_p)
{
    pack_job_t *j = ingot_calloc(1, sizeof(*j), "pack job");
    if (j == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    j->p = p;
    j->index = p->shards++;
    shard_vec_init(&j->members, sizeof(pack_member_t));
    shard_vec_init(&j->blob, 1);
    *j_p = j;
    return INGOT_OK;
}

static ingot_status_t pack_compress(ZSTD_CCtx *cctx, const char *path, const void *data, size_t len,
                                    void **zbuf, size_t *zcap, size_t *zlen_p)
{
    size_t bound = ZSTD_compressBound(len);
    if (bound > *zcap) {
        void *n = realloc(*zbuf, bound);
        if (n == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory compressing", path);
        }
        *zbuf = n;
        *zcap = bound;
    }
    size_t r = ZSTD_compress2(cctx, *zbuf, *zcap, data, len);
    if (ZSTD_isError(r)) {
        return ingot_fail(INGOT_ERR_ZSTD, "%s: zstd: %s", path, ZSTD_getErrorName(r));
    }
    *zlen_p = r;
    return INGOT_OK;
}

static ingot_status_t pack_cctx(const struct ingot_packer *p, ZSTD_CCtx **cctx_p)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (c == NULL ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, p->prm.zstd_level)) ||
        (p->cdict != NULL && ZSTD_isError(ZSTD_CCtx_refCDict(c, p->cdict)))) {
        ZSTD_freeCCtx(c);
        return ingot_fail(INGOT_ERR_ZSTD, "zstd: cannot set up a compression context (level %d)",
                          p->prm.zstd_level);
    }
    *cctx_p = c;
    return INGOT_OK;
}

/* Write one shard file from a job's members. */
static ingot_status_t pack_job_write(pack_job_t *j, const char *path, ZSTD_CCtx *cctx)
{
    void *zbuf = NULL;
    size_t zcap = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ingot_fail(INGOT_ERR_IO, "%s: create failed: %s", path, strerror(errno));
    }
    tar_writer_t w = {.fd = fd, .off = 0, .name = path};
    ingot_status_t st = INGOT_OK;
    for (size_t i = 0; st == INGOT_OK && i < j->members.len; i++) {
        const pack_member_t *m = SHARD_VEC_AT(&j->members, pack_member_t, i);
        const char *blob = j->blob.data;
        const void *data = blob + m->data_off;
        size_t len = m->len;
        if (m->compress) {
            st = pack_compress(cctx, path, data, len, &zbuf, &zcap, &len);
            data = zbuf;
        }
        if (st == INGOT_OK) {
            st = ingot_tar_write_member(&w, blob + m->name_off, data, len);
        }
    }
    if (st == INGOT_OK) {
        st = ingot_tar_write_end(&w);
    }
    if (st == INGOT_OK && fsync(fd) != 0) {
        st = ingot_fail(INGOT_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
    }
    close(fd);
    free(zbuf);
    return st;
}

/* Pool task (or inline): write the job's shard, record the first error, free the job. */
static void pack_job_run(void *arg)
{
    pack_job_t *j = arg;
    ingot_packer_h p = j->p;
    char path[PATH_MAX];
    ZSTD_CCtx *cctx = NULL;
    snprintf(path, sizeof(path), PACK_SHARD_FMT, p->prm.out_dir, j->index);
    ingot_status_t st = p->prm.zstd_level != 0 ? pack_cctx(p, &cctx) : INGOT_OK;
    if (st == INGOT_OK) {
        st = pack_job_write(j, path, cctx);
    }
    int none = 0;
    if (st != INGOT_OK) {
        atomic_compare_exchange_strong(&p->err, &none, (int)st);
    }
    ZSTD_freeCCtx(cctx);
    pack_job_free(j);
    atomic_fetch_add(&p->done, 1);
}

/* Hand the current shard to a worker (or write it now). */
static ingot_status_t pack_submit(ingot_packer_h p)
{
    pack_job_t *j = p->cur;
    p->cur = NULL;
    p->cur_bytes = 0;
    if (j == NULL) {
        return INGOT_OK;
    }
    if (p->pool == NULL) {
        pack_job_run(j);
        return (ingot_status_t)atomic_load(&p->err);
    }
    ingot_status_t st = ingot_pool_submit(p->pool, pack_job_run, j,
                                          ingot_deadline_after(p->wait_ns));
    if (st != INGOT_OK) {
        pack_job_free(j);
        return ingot_fail(st, "%s: no packing worker became free within the deadline",
                          p->prm.out_dir);
    }
    return (ingot_status_t)atomic_load(&p->err);
}

/* mkdir -p: create @p dir and any missing parent; 0 or -1 with errno set. */
static int pack_mkdirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    return (mkdir(path, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

/* The caller's parameters with defaults applied to the unset fields. */
static ingot_status_t pack_params_apply(const ingot_packer_params_t *in, ingot_packer_params_t *out)
{
    if (in == NULL || !(in->field_mask & INGOT_PACKER_PARAM_FIELD_OUT_DIR) || in->out_dir == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "packer: no output directory");
    }
#define PACK_PARAM(_name, _bit, _default) \
    INGOT_PARAM_VALUE(in, _name, INGOT_PACKER_PARAM_FIELD_##_bit, _default)
    *out = (ingot_packer_params_t){
        .field_mask = in->field_mask,
        .out_dir = in->out_dir,
        .shard_size = PACK_PARAM(shard_size, SHARD_SIZE, INGOT_PACK_DEFAULT_SHARD_SIZE),
        .zstd_level = PACK_PARAM(zstd_level, ZSTD_LEVEL, 0),
        .dict = PACK_PARAM(dict, DICT, NULL),
        .dict_len = PACK_PARAM(dict_len, DICT, 0),
        .progress = PACK_PARAM(progress, PROGRESS, 0),
        .total_members = PACK_PARAM(total_members, TOTAL_MEMBERS, 0),
        .jobs = PACK_PARAM(jobs, JOBS, 1)};
#undef PACK_PARAM
    if (out->shard_size == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: shard size 0", in->out_dir);
    }
    return INGOT_OK;
}

ingot_status_t ingot_packer_create(const ingot_packer_params_t *params, ingot_packer_h *p_p)
{
    ingot_packer_params_t prm;
    INGOT_CHECK(pack_params_apply(params, &prm));
    if (p_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_packer_create: NULL packer_p");
    }
    if (pack_mkdirs(prm.out_dir) != 0) {
        return ingot_fail(INGOT_ERR_IO, "%s: cannot create: %s", prm.out_dir, strerror(errno));
    }
    ingot_packer_h p = ingot_calloc(1, sizeof(*p), "packer");
    if (p == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    p->prm = prm;
    p->prm.dict = NULL;
    const ingot_base_config_t *cfg;
    p->wait_ns = ingot_base_config(&cfg) == INGOT_OK ? cfg->timeout_ns : PACK_WAIT_DEFAULT_NS;
    ingot_status_t st = INGOT_OK;
    if (prm.zstd_level != 0 && prm.dict != NULL) {
        p->dict = ingot_malloc(prm.dict_len, "pack dictionary");
        p->cdict = ZSTD_createCDict(prm.dict, prm.dict_len, prm.zstd_level);
        st = p->dict && p->cdict ? INGOT_OK : ingot_fail(INGOT_ERR_ZSTD, "zstd: bad dictionary");
        if (p->dict != NULL) {
            memcpy(p->dict, prm.dict, prm.dict_len);
        }
    }
    if (st == INGOT_OK && prm.jobs > 1) {
        st = ingot_pool_create(PACK_POOL_NAME, prm.jobs, prm.jobs, &p->pool);
    }
    if (st != INGOT_OK) {
        ingot_packer_destroy(p);
        return st;
    }
    *p_p = p;
    return INGOT_OK;
}

/* A bar when the total is known, else a counter line; @p last ends the line. */
static void pack_progress(const struct ingot_packer *p, int last)
{
    char bar[PACK_BAR_WIDTH + 1];
    if (p->prm.total_members > 0) {
        double f = (double)p->members / (double)p->prm.total_members;
        int fill = (int)(f > 1 ? PACK_BAR_WIDTH : f * PACK_BAR_WIDTH);
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, ' ', (size_t)(PACK_BAR_WIDTH - fill));
        bar[PACK_BAR_WIDTH] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%% ", bar, f * PACK_PERCENT);
    } else {
        fprintf(stderr, "\rpacked ");
    }
    fprintf(stderr, "%llu samples, %.1f MiB, %u shards%s", (unsigned long long)p->samples,
            (double)p->bytes / PACK_MIB, p->shards, last ? "\n" : "");
}

/* A new key: hand the shard over when it has reached the target size. */
static ingot_status_t pack_new_sample(ingot_packer_h p, const char *key)
{
    if (p->cur != NULL && p->cur_bytes >= p->prm.shard_size) {
        INGOT_CHECK(pack_submit(p));
    }
    if (p->cur == NULL) {
        INGOT_CHECK(pack_job_new(p, &p->cur));
    }
    free(p->key);
    p->key = strdup(key);
    p->samples++;
    if (p->prm.progress && p->samples % PACK_PROGRESS_EVERY == 0) {
        pack_progress(p, 0);
    }
    return p->key ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

ingot_status_t ingot_packer_add(ingot_packer_h p, const char *key, const char *field,
                                const void *data, size_t len)
{
    char name[PATH_MAX];
    if (p->key == NULL || strcmp(p->key, key) != 0) {
        INGOT_CHECK(pack_new_sample(p, key));
    }
    size_t flen = strlen(field);
    int stored = strcmp(field, PACK_CLS_FIELD) == 0 ||
                 (flen > 4 && strcmp(field + flen - 4, PACK_ZST_SUFFIX) == 0);
    pack_member_t m = {.len = len, .compress = p->prm.zstd_level != 0 && !stored};
    int n = snprintf(name, sizeof(name), "%s.%s%s", key, field, m.compress ? PACK_ZST_SUFFIX : "");
    if (n < 0 || (size_t)n >= sizeof(name)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "member name too long: %s.%s", key, field);
    }
    INGOT_CHECK(ingot_shard_vec_push(&p->cur->blob, name, (size_t)n + 1, &m.name_off));
    INGOT_CHECK(ingot_shard_vec_push(&p->cur->blob, data, len, &m.data_off));
    p->bytes += len;
    p->members++;
    p->cur_bytes += len + TAR_BLOCK;
    return ingot_shard_vec_push(&p->cur->members, &m, 1, NULL);
}

/* Wait until every submitted shard is written, as long as shards keep finishing. */
static ingot_status_t pack_drain(ingot_packer_h p)
{
    while (p->pool != NULL) {
        unsigned before = atomic_load(&p->done);
        ingot_status_t st = ingot_pool_wait_idle(p->pool, ingot_deadline_after(p->wait_ns));
        if (st == INGOT_OK) {
            break;
        }
        if (st != INGOT_ERR_TIMED_OUT || atomic_load(&p->done) == before) {
            return ingot_fail(st, "%s: packing workers made no progress within the deadline",
                              p->prm.out_dir);
        }
    }
    return (ingot_status_t)atomic_load(&p->err);
}

static ingot_status_t pack_write_dict(const char *out_dir, const void *dict, size_t len, char *path,
                                      size_t pathlen)
{
    snprintf(path, pathlen, "%s/" INGOT_PACK_DICT_NAME, out_dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(dict, 1, len, f) != len || fclose(f) != 0) {
        return ingot_fail(INGOT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return INGOT_OK;
}

static ingot_status_t pack_manifest(ingot_packer_h p, const char *dict_path)
{
    char mpath[PATH_MAX], spath[PATH_MAX];
    ingot_manifest_builder_params_t bp = {0};
    if (dict_path != NULL) {
        bp.field_mask = INGOT_MANIFEST_BUILDER_PARAM_FIELD_DICT;
        bp.dict_path = dict_path;
    }
    snprintf(mpath, sizeof(mpath), "%s/" INGOT_PACK_MANIFEST_NAME, p->prm.out_dir);
    ingot_manifest_builder_h b;
    INGOT_CHECK(ingot_manifest_builder_create(mpath, &bp, &b));
    ingot_status_t st = INGOT_OK;
    for (unsigned i = 0; st == INGOT_OK && i < p->shards; i++) {
        snprintf(spath, sizeof(spath), PACK_SHARD_FMT, p->prm.out_dir, i);
        st = ingot_manifest_builder_add_shard(b, spath);
    }
    if (st == INGOT_OK) {
        st = ingot_manifest_builder_write(b);
    }
    ingot_manifest_builder_destroy(b);
    return st;
}

ingot_status_t ingot_packer_finish(ingot_packer_h p, uint64_t *samples_p, uint64_t *shards_p)
{
    char dpath[PATH_MAX];
    INGOT_CHECK(pack_submit(p));
    INGOT_CHECK(pack_drain(p));
    if (p->prm.progress) {
        pack_progress(p, 1);
    }
    if (p->dict != NULL) {
        INGOT_CHECK(pack_write_dict(p->prm.out_dir, p->dict, p->prm.dict_len, dpath,
                                    sizeof(dpath)));
    }
    INGOT_CHECK(pack_manifest(p, p->dict ? dpath : NULL));
    if (samples_p != NULL) {
        *samples_p = p->samples;
    }
    if (shards_p != NULL) {
        *shards_p = p->shards;
    }
    return INGOT_OK;
}

void ingot_packer_destroy(ingot_packer_h p)
{
    if (p == NULL) {
        return;
    }
    if (p->pool != NULL) {
        ingot_pool_destroy(p->pool, ingot_deadline_after(p->wait_ns));
    }
    pack_job_free(p->cur);
    ZSTD_freeCDict(p->cdict);
    free(p->dict);
    free(p->key);
    free(p);
}

ingot_status_t ingot_pack_dict_train(const void *buf, const size_t *sizes, unsigned n,
                                     void **dict_p, size_t *len_p)
{
    void *dict = malloc(PACK_DICT_SIZE);
    if (dict == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "dictionary: out of memory");
    }
    size_t r = ZDICT_trainFromBuffer(dict, PACK_DICT_SIZE, buf, sizes, n);
    if (ZDICT_isError(r)) {
        free(dict);
        return ingot_fail(INGOT_ERR_ZSTD, "dictionary training on %u samples failed: %s", n,
                          ZDICT_getErrorName(r));
    }
    *dict_p = dict;
    *len_p = r;
    return INGOT_OK;
}

ingot_status_t ingot_pack_member_cb(void *arg, const char *key, const char *field, const void *data,
                                    size_t len)
{
    return ingot_packer_add(arg, key, field, data, len);
}
