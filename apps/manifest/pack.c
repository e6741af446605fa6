/*
 * ingot-manifest's writing commands: pack (directories, tars, Fashion-MNIST or an ImageFolder into
 * tar shards, optionally zstd with a trained dictionary) and build (a manifest over existing
 * shards, rewriting nothing).
 */
#include "manifest/cli.h"
#include "common/cli.h"
#include <ingot/config.h>
#include <ingot/pack.h>
#include <ingot/shard.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Bytes of member data the dictionary is trained on (zstd recommends ~100x the dict size). */
#define CLI_DICT_TRAIN_BYTES (8u << 20)
#define CLI_DICT_TRAIN_MAX   100000u

int cli_build(int argc, char **argv)
{
    cli_args_t a;
    if (cli_parse(argc, argv, 1, &a) != 0) {
        return CLI_EXIT_USAGE;
    }
    if (a.npos > 0 && strncmp(a.pos[0], "s3://", 5) == 0) {
        int rc = cli_build_bucket(&a);
        free(a.pos);
        return rc;
    }
    if (a.npos == 0 || a.out == NULL) {
        free(a.pos);
        return cli_usage("%s", "build needs SHARD... -o MANIFEST");
    }
    ingot_manifest_builder_params_t p = {0};
    p.field_mask = INGOT_MANIFEST_BUILDER_PARAM_FIELD_SPECIAL;
    p.special = a.reject_special ? INGOT_TAR_SPECIAL_REJECT : INGOT_TAR_SPECIAL_SKIP;
    if (a.dict_file != NULL) {
        p.field_mask |= INGOT_MANIFEST_BUILDER_PARAM_FIELD_DICT;
        p.dict_path = a.dict_file;
    }
    if (a.labels != NULL) {
        p.field_mask |= INGOT_MANIFEST_BUILDER_PARAM_FIELD_LABELS;
        p.label_path = a.labels;
    }
    ingot_manifest_builder_h b = NULL;
    ingot_status_t st = ingot_manifest_builder_create(a.out, &p, &b);
    for (int i = 0; st == INGOT_OK && i < a.npos; i++) {
        st = ingot_manifest_builder_add_shard(b, a.pos[i]);
    }
    if (st == INGOT_OK) {
        st = ingot_manifest_builder_write(b);
    }
    ingot_manifest_builder_destroy(b);
    free(a.pos);
    if (st != INGOT_OK) {
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* The first members of the sources, concatenated, for ingot_pack_dict_train(). */
typedef struct cli_trainer {
    uint8_t *buf;
    size_t len;
    size_t sizes[CLI_DICT_TRAIN_MAX];
    unsigned n;
} cli_trainer_t;

static ingot_status_t cli_train_cb(void *arg, const char *key, const char *field, const void *data,
                                   size_t len)
{
    cli_trainer_t *t = arg;
    (void)key;
    (void)field;
    if (t->len + len > CLI_DICT_TRAIN_BYTES || t->n == CLI_DICT_TRAIN_MAX) {
        return INGOT_END_OF_DATA; /* enough to train on */
    }
    memcpy(t->buf + t->len, data, len);
    t->len += len;
    t->sizes[t->n++] = len;
    return INGOT_OK;
}

/* Only the members of one split (keys "<split>-NNNNN") go on to the next callback. */
typedef struct cli_split_filter {
    const char *prefix; /* "train-" or "test-" */
    ingot_import_member_cb_t cb;
    void *arg;
} cli_split_filter_t;

static ingot_status_t cli_split_cb(void *arg, const char *key, const char *field, const void *data,
                                   size_t len)
{
    const cli_split_filter_t *f = arg;
    if (strncmp(key, f->prefix, strlen(f->prefix)) != 0) {
        return INGOT_OK;
    }
    return f->cb(f->arg, key, field, data, len);
}

/* Every source in order (directories and tars, or the Fashion-MNIST idx directory, all of it or
 * one split). */
static ingot_status_t cli_sources(const cli_args_t *a, ingot_import_member_cb_t cb, void *arg)
{
    if (a->fashion) {
        const char *dir = a->npos ? a->pos[0] : INGOT_IMPORT_FASHION_MNIST_DIR;
        if (a->split == NULL) {
            return ingot_import(dir, INGOT_IMPORT_FASHION_MNIST, cb, arg);
        }
        char prefix[16];
        snprintf(prefix, sizeof(prefix), "%s-", a->split);
        cli_split_filter_t f = {prefix, cb, arg};
        return ingot_import(dir, INGOT_IMPORT_FASHION_MNIST, cli_split_cb, &f);
    }
    if (a->folder.on) {
        return cli_folder_import(&a->folder, a->pos[0], cb, arg);
    }
    ingot_status_t st = INGOT_OK;
    for (int i = 0; st == INGOT_OK && i < a->npos; i++) {
        st = ingot_import(a->pos[i], INGOT_IMPORT_AUTO, cb, arg);
    }
    return st;
}

/* Train a dictionary on the first CLI_DICT_TRAIN_BYTES of members. */
static int cli_pack_dict(const cli_args_t *a, ingot_packer_params_t *pp)
{
    cli_trainer_t *t = calloc(1, sizeof(*t));
    void *dict = NULL;
    int rc = t && (t->buf = malloc(CLI_DICT_TRAIN_BYTES)) ? 0 : -1;
    if (rc == 0 &&
        (cli_sources(a, cli_train_cb, t) != INGOT_OK ||
         ingot_pack_dict_train(t->buf, t->sizes, t->n, &dict, &pp->dict_len) != INGOT_OK)) {
        rc = -1;
    }
    pp->dict = dict;
    pp->field_mask |= INGOT_PACKER_PARAM_FIELD_DICT;
    if (t) free(t->buf);
    free(t);
    return rc;
}

/* Members the sources hold, for the progress bar (0, a counter line, when one is a tar). */
static uint64_t cli_count_members(const cli_args_t *a)
{
    uint64_t total = 0, n = 0;
    if (a->fashion && a->split != NULL) {
        return 0; /* one split of the files: a counter line */
    }
    if (a->fashion) {
        const char *dir = a->npos ? a->pos[0] : INGOT_IMPORT_FASHION_MNIST_DIR;
        return ingot_import_count(dir, INGOT_IMPORT_FASHION_MNIST, &n) == INGOT_OK ? n : 0;
    }
    if (a->folder.on) {
        return cli_folder_count(&a->folder, a->pos[0]);
    }
    for (int i = 0; i < a->npos; i++) {
        if (ingot_import_count(a->pos[i], INGOT_IMPORT_AUTO, &n) != INGOT_OK) {
            return 0;
        }
        total += n;
    }
    return total;
}

/* Packer parameters from the command line; 0, or the usage error's exit code. */
static int cli_pack_params(const cli_args_t *a, ingot_packer_params_t *pp)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    *pp = (ingot_packer_params_t){
        .field_mask = INGOT_PACKER_PARAM_FIELD_OUT_DIR | INGOT_PACKER_PARAM_FIELD_SHARD_SIZE |
                      INGOT_PACKER_PARAM_FIELD_ZSTD_LEVEL | INGOT_PACKER_PARAM_FIELD_PROGRESS |
                      INGOT_PACKER_PARAM_FIELD_JOBS | INGOT_PACKER_PARAM_FIELD_TOTAL_MEMBERS,
        .out_dir = a->out,
        .zstd_level = a->zstd_level,
        .progress = isatty(2),
        .jobs = a->jobs ? (unsigned)a->jobs : (unsigned)(ncpu > 0 ? ncpu : 1),
        .shard_size = INGOT_PACK_DEFAULT_SHARD_SIZE};
    if (a->shard_size != NULL &&
        (ingot_config_parse_size(a->shard_size, &pp->shard_size) != INGOT_OK ||
         pp->shard_size == 0)) {
        return cli_usage("--shard-size '%s': expected a size such as 256MiB or 1GB "
                         "(K/KiB = 1024, KB = 1000)",
                         a->shard_size);
    }
    if (a->split != NULL &&
        (!a->fashion || (strcmp(a->split, "train") != 0 && strcmp(a->split, "test") != 0))) {
        return cli_usage(a->fashion ? "--split '%s': the Fashion-MNIST splits are train "
                                      "and test"
                                    : "--split '%s': only --fashion-mnist has splits",
                         a->split);
    }
    if ((a->folder.skip_non_images || a->folder.allow_empty) && !a->folder.on) {
        return cli_usage("%s", "--skip-non-images and --allow-empty-classes go with "
                               "--labels-from-dirs");
    }
    if (a->folder.on && (a->npos != 1 || a->fashion)) {
        return cli_usage("%s", "--labels-from-dirs takes one ROOT (ROOT/<class>/<image>), "
                               "not --fashion-mnist");
    }
    if (a->out == NULL || (a->npos == 0 && !a->fashion) || (a->dict && a->zstd_level == 0)) {
        return cli_usage("%s", "pack needs SRC... (or --fashion-mnist) -o DIR; --dict "
                               "needs --zstd LEVEL");
    }
    if (pp->progress) {
        pp->total_members = cli_count_members(a);
    }
    return 0;
}

int cli_pack(int argc, char **argv)
{
    cli_args_t a;
    ingot_packer_params_t pp;
    if (cli_parse(argc, argv, 0, &a) != 0) {
        return CLI_EXIT_USAGE;
    }
    int rc = cli_pack_params(&a, &pp);
    if (rc != 0) {
        free(a.pos);
        return rc;
    }
    ingot_packer_h p = NULL;
    uint64_t samples = 0, shards = 0;
    rc = a.dict ? cli_pack_dict(&a, &pp) : 0;
    if (rc == 0 && ingot_packer_create(&pp, &p) == INGOT_OK &&
        cli_sources(&a, ingot_pack_member_cb, p) == INGOT_OK &&
        ingot_packer_finish(p, &samples, &shards) == INGOT_OK) {
        if (a.folder.on) {
            rc = cli_folder_finish(&a.folder, a.pos[0], a.out, samples, shards);
        } else {
            printf("packed %" PRIu64 " samples into %" PRIu64 " shards; manifest %s/%s\n", samples,
                   shards, a.out, INGOT_PACK_MANIFEST_NAME);
        }
    } else {
        rc = CLI_EXIT_FAIL;
    }
    ingot_packer_destroy(p);
    free((void *)pp.dict);
    free(a.pos);
    return rc ? CLI_EXIT_FAIL : 0;
}
