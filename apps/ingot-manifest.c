/*
 * ingot-manifest: pack files into tar shards, build a manifest over existing shards, and
 * inspect, verify or read from a manifest. See `ingot-manifest --help`.
 */
#include <ingot/config.h>
#include <ingot/pack.h>
#include <ingot/shard.h>
#include "manifest/image_folder.h"

#include <unistd.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_EXIT_FAIL  1
#define CLI_EXIT_USAGE 2

static const char usage[] =
    "usage: ingot-manifest COMMAND [ARGS]\n"
    "\n"
    "  pack SRC... -o DIR [--shard-size SIZE] [--zstd LEVEL] [--dict] [--jobs N]\n"
    "        Pack directories of files (<key>.<field>) or existing tars into tar shards of about\n"
    "        SIZE (default 256MiB) in DIR, zstd-compressing members at LEVEL (with a trained\n"
    "        dictionary when --dict), and write DIR/manifest.ingot. Shards are cut on\n"
    "        uncompressed bytes; N shards (default: online CPUs) are compressed and written\n"
    "        in parallel, each buffered in memory; the output does not depend on N.\n"
    "  pack ROOT -o DIR --labels-from-dirs [--skip-non-images] [--allow-empty-classes] ...\n"
    "        torchvision's ImageFolder (ROOT/<class>/<image>): each image a sample labelled\n"
    "        with its class index, classes sorted by folder name; the names are written to\n"
    "        DIR/" INGOT_PACK_CLASSES_NAME ". Images: .jpg .jpeg .png .ppm .pgm .pnm (any case),\n"
    "        also in nested folders (the top folder's class). Any other file in a class folder\n"
    "        fails the pack (--skip-non-images: left out), as does a class folder without\n"
    "        images (--allow-empty-classes: its index is kept); files in ROOT are ignored.\n"
    "  pack --fashion-mnist [IDX_DIR] -o DIR [--split train|test] [--shard-size SIZE]\n"
    "       [--zstd LEVEL]\n"
    "        Turn the Fashion-MNIST idx files (default " INGOT_IMPORT_FASHION_MNIST_DIR ",\n"
    "        Debian package dataset-fashion-mnist) into shards of <split>-<n>.pgm + .cls:\n"
    "        both splits (train then test), or only --split's, so that training and\n"
    "        evaluation read manifests that share no sample.\n"
    "  build SHARD... -o MANIFEST [--reject-special] [--dict FILE] [--labels FILE]\n"
    "        Index existing tar shards (e.g. made by GNU tar) without rewriting them.\n"
    "        --labels: 'KEY LABEL' lines for samples without a .cls member.\n"
    "  inspect MANIFEST\n"
    "        Summary, field names and codecs, histogram of sample sizes.\n"
    "  verify MANIFEST\n"
    "        Re-hash every shard and sample; print every corrupt sample (key, shard, offset);\n"
    "        exit 1 if any.\n"
    "  list MANIFEST\n"
    "        One line per member: shard path, member name (<key>.<field>[.zst]), stored bytes,\n"
    "        offset in the shard, label.\n"
    "  cat MANIFEST KEY [--field NAME] [--shard N]\n"
    "        Write one sample's field (decoded) to stdout.\n"
    "\n"
    "Sizes take the syntax of every INGOT_* size: 64KiB, 256MiB, 1.5GiB (K/KiB/M/MiB... = 1024^n),\n"
    "1GB (KB/MB/GB = 1000^n).\n"
    "Exit status: 0 success, 1 failure (bad input, corrupt data, an invalid INGOT_* variable),\n"
    "2 usage error.\n";

static int cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ingot-manifest: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see ingot-manifest --help)\n");
    return CLI_EXIT_USAGE;
}

/** Buckets of the sample-size histogram (powers of two). */
#define CLI_HIST_BUCKETS 48
#define CLI_HIST_BAR     40

/* Parsed command line: positional arguments and the options every command may take. */
typedef struct cli_args {
    const char **pos;
    int npos;
    const char *out, *dict_file, *field, *shard_size, *labels, *split;
    int reject_special, dict, fashion, zstd_level, jobs;
    int64_t shard;
    cli_folder_t folder; /* pack --labels-from-dirs and its options */
} cli_args_t;

/** Bounds of the integer options. */
#define CLI_JOBS_MAX       4096
#define CLI_ZSTD_LEVEL_MAX 22

/* A decimal integer in [lo, hi] into @p v_p, or a usage error naming the option and the value. */
static int cli_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *v_p)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr,
                "ingot-manifest: %s '%s': expected an integer in %" PRId64 "..%" PRId64
                "\n(see ingot-manifest --help)\n",
                opt, s, lo, hi);
        return CLI_EXIT_USAGE;
    }
    *v_p = v;
    return 0;
}

/* The integer options; 1 when @p o is none of them. */
static int cli_parse_int(const char *o, const char *arg, cli_args_t *a, int *rc_p)
{
    int64_t v = 0;
    if (strcmp(o, "--jobs") == 0) {
        *rc_p = cli_int(o, arg, 1, CLI_JOBS_MAX, &v);
        a->jobs = (int)v;
    } else if (strcmp(o, "--zstd") == 0) {
        *rc_p = cli_int(o, arg, 0, CLI_ZSTD_LEVEL_MAX, &v);
        a->zstd_level = (int)v;
    } else if (strcmp(o, "--shard") == 0) {
        *rc_p = cli_int(o, arg, 0, INT64_MAX, &a->shard);
    } else {
        return 1;
    }
    return 0;
}

/* @p dict_file: "--dict" takes a file argument (build) instead of being a flag (pack). */
static int cli_parse(int argc, char **argv, int dict_file, cli_args_t *a)
{
    *a = (cli_args_t){.shard = -1};
    a->pos = calloc((size_t)argc + 1, sizeof(*a->pos));
    if (a->pos == NULL) {
        fprintf(stderr, "ingot-manifest: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc, rc = 0;
        if (strcmp(o, "-o") == 0 && more) {
            a->out = argv[++i];
        } else if (strcmp(o, "--dict") == 0 && dict_file && more) {
            a->dict_file = argv[++i];
        } else if (strcmp(o, "--dict") == 0 && !dict_file) {
            a->dict = 1;
        } else if (more && cli_parse_int(o, argv[i + 1], a, &rc) == 0) {
            i++;
            if (rc != 0) {
                free(a->pos);
                return rc;
            }
        } else if (strcmp(o, "--labels") == 0 && more) {
            a->labels = argv[++i];
        } else if (strcmp(o, "--field") == 0 && more) {
            a->field = argv[++i];
        } else if (strcmp(o, "--shard-size") == 0 && more) {
            a->shard_size = argv[++i];
        } else if (strcmp(o, "--reject-special") == 0) {
            a->reject_special = 1;
        } else if (strcmp(o, "--fashion-mnist") == 0) {
            a->fashion = 1;
        } else if (strcmp(o, "--split") == 0 && more) {
            a->split = argv[++i];
        } else if (cli_folder_option(o, &a->folder)) {
            continue;
        } else if (o[0] == '-' && o[1] != '\0') {
            free(a->pos); /* the callers return at once: nothing else frees it */
            return cli_usage_error("unknown or incomplete option '%s'", o);
        } else {
            a->pos[a->npos++] = o;
        }
    }
    return 0;
}

static int cli_build(int argc, char **argv)
{
    cli_args_t a;
    if (cli_parse(argc, argv, 1, &a) != 0) {
        return CLI_EXIT_USAGE;
    }
    if (a.npos == 0 || a.out == NULL) {
        free(a.pos);
        return cli_usage_error("%s", "build needs SHARD... -o MANIFEST");
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

static void cli_verify_cb(const ingot_verify_fault_t *f, void *arg)
{
    (void)arg;
    if (f->key == NULL) {
        printf("BAD shard %s: %s\n", f->shard_path, ingot_status_string(f->status));
    } else {
        printf("BAD sample %" PRIu64 " key '%s' shard %s field %s offset %" PRIu64 ": %s\n",
               f->index, f->key, f->shard_path, f->field ? f->field : "-", f->offset,
               ingot_status_string(f->status));
    }
}

static int cli_open(const char *cmd, cli_args_t *a, int npos, ingot_manifest_h *m_p)
{
    if (a->npos != npos) {
        free(a->pos);
        return cli_usage_error("wrong number of arguments for '%s'", cmd);
    }
    if (ingot_manifest_open(a->pos[0], 0, m_p) != INGOT_OK) {
        free(a->pos);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

static int cli_verify(int argc, char **argv)
{
    cli_args_t a;
    ingot_manifest_h m;
    int rc = cli_parse(argc, argv, 0, &a);
    if (rc != 0 || (rc = cli_open("verify", &a, 1, &m)) != 0) {
        return rc;
    }
    ingot_verify_report_t rep = {0};
    ingot_status_t st = ingot_manifest_verify(m, cli_verify_cb, NULL, &rep);
    printf("verified %" PRIu64 " samples, %" PRIu64 " bytes: %" PRIu64 " bad samples, %" PRIu64
           " bad shards\n",
           rep.samples_checked, rep.bytes_hashed, rep.samples_bad, rep.shards_bad);
    ingot_manifest_close(m);
    free(a.pos);
    return st == INGOT_OK ? 0 : CLI_EXIT_FAIL;
}

static unsigned cli_log2(uint64_t v)
{
    unsigned b = 0;
    while (v > 1 && b < CLI_HIST_BUCKETS - 1) {
        v >>= 1;
        b++;
    }
    return b;
}

/* Per field name: count, stored and raw bytes, codecs seen. */
static int cli_inspect_fields(ingot_manifest_h m, const ingot_manifest_info_t *info, uint64_t *hist,
                              uint64_t *bytes_p)
{
    typedef struct {
        const char *name;
        uint64_t n, stored, raw, zstd;
    } agg_t;
    agg_t *agg = calloc(info->name_count ? info->name_count : 1, sizeof(*agg));
    uint32_t nagg = 0;
    for (uint64_t i = 0; agg && i < info->sample_count; i++) {
        ingot_sample_info_t s;
        if (ingot_manifest_sample_get(m, i, &s) != INGOT_OK) {
            free(agg);
            return CLI_EXIT_FAIL;
        }
        hist[cli_log2(s.length)]++;
        *bytes_p += s.length;
        for (uint32_t f = 0; f < s.field_count; f++) {
            ingot_field_info_t fi;
            ingot_manifest_field_get(m, &s, f, &fi);
            uint32_t k = 0;
            while (k < nagg && strcmp(agg[k].name, fi.name) != 0) {
                k++;
            }
            if (k == nagg && nagg < info->name_count) {
                agg[nagg++].name = fi.name;
            }
            agg[k].n++;
            agg[k].stored += fi.stored_len;
            agg[k].raw += fi.raw_len;
            agg[k].zstd += fi.codec == INGOT_CODEC_ZSTD;
        }
    }
    printf("\n%-16s %12s %12s %14s %14s\n", "field", "count", "zstd", "stored bytes", "raw bytes");
    for (uint32_t k = 0; k < nagg; k++) {
        printf("%-16s %12" PRIu64 " %12" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", agg[k].name,
               agg[k].n, agg[k].zstd, agg[k].stored, agg[k].raw);
    }
    free(agg);
    return 0;
}

static void cli_inspect_hist(const uint64_t *hist, uint64_t total)
{
    uint64_t max = 1;
    for (unsigned b = 0; b < CLI_HIST_BUCKETS; b++) {
        max = hist[b] > max ? hist[b] : max;
    }
    printf("\nsample size histogram (bytes)\n");
    for (unsigned b = 0; b < CLI_HIST_BUCKETS; b++) {
        if (hist[b] == 0) {
            continue;
        }
        int bar = (int)(hist[b] * CLI_HIST_BAR / max);
        printf("  [%12llu, %12llu) %10" PRIu64 " %5.1f%% %.*s\n", b ? 1ull << b : 0ull, 2ull << b,
               hist[b], 100.0 * (double)hist[b] / (double)total, bar ? bar : 1,
               "########################################");
    }
}

static int cli_inspect(int argc, char **argv)
{
    cli_args_t a;
    ingot_manifest_h m;
    ingot_manifest_info_t info;
    int rc = cli_parse(argc, argv, 0, &a);
    if (rc != 0 || (rc = cli_open("inspect", &a, 1, &m)) != 0) {
        return rc;
    }
    ingot_manifest_query(m, &info);
    printf("manifest      %s\nversion       %u\ndigest        %016" PRIx64
           "\nbytes         %" PRIu64 " (%.1f per sample)\nshards        %" PRIu64
           "\nsamples       %" PRIu64 "\nfields        %" PRIu64 "\ndictionary    %s\n",
           a.pos[0], info.version, info.digest, info.file_size,
           info.sample_count ? (double)info.file_size / (double)info.sample_count : 0.0,
           info.shard_count, info.sample_count, info.field_count,
           info.dict_path ? info.dict_path : "none");
    cli_folder_inspect(a.pos[0], m);
    uint64_t hist[CLI_HIST_BUCKETS] = {0}, bytes = 0;
    rc = cli_inspect_fields(m, &info, hist, &bytes);
    if (rc == 0) {
        printf("\nsample bytes  %" PRIu64 " (mean %.1f)\n", bytes,
               info.sample_count ? (double)bytes / (double)info.sample_count : 0.0);
        cli_inspect_hist(hist, info.sample_count ? info.sample_count : 1);
    }
    ingot_manifest_close(m);
    free(a.pos);
    return rc;
}

/* Read sample @p index and write field @p name (NULL: the first) decoded to stdout. */
static int cli_cat_field(ingot_manifest_h m, uint64_t index, const char *name)
{
    ingot_shard_reader_h r = NULL;
    ingot_sample_info_t s;
    ingot_field_info_t f;
    uint8_t *buf = NULL, *out = NULL;
    size_t len = 0;
    uint32_t i = 0;
    ingot_status_t st = ingot_manifest_sample_get(m, index, &s);
    for (; st == INGOT_OK && i < s.field_count; i++) {
        st = ingot_manifest_field_get(m, &s, i, &f);
        if (st != INGOT_OK || name == NULL || strcmp(f.name, name) == 0) {
            break;
        }
    }
    if (st == INGOT_OK && i == s.field_count) {
        fprintf(stderr, "ingot-manifest cat: key '%s' has no field '%s'\n", s.key, name);
        return CLI_EXIT_FAIL;
    }
    if (st == INGOT_OK) {
        st = ingot_shard_reader_create(m, &r);
    }
    if (st == INGOT_OK &&
        ((buf = malloc(s.length + 1)) == NULL || (out = malloc((size_t)f.raw_len + 1)) == NULL)) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if (st == INGOT_OK && (st = ingot_shard_reader_read(r, index, buf, s.length)) == INGOT_OK) {
        st = ingot_shard_reader_decode(r, index, buf, i, out, f.raw_len, &len);
    }
    if (st == INGOT_OK && fwrite(out, 1, len, stdout) != len) {
        st = INGOT_ERR_IO;
    }
    ingot_shard_reader_destroy(r);
    free(buf);
    free(out);
    return st == INGOT_OK ? 0 : CLI_EXIT_FAIL;
}

static int cli_cat(int argc, char **argv)
{
    cli_args_t a;
    ingot_manifest_h m;
    uint64_t index;
    int rc = cli_parse(argc, argv, 0, &a);
    if (rc != 0 || (rc = cli_open("cat", &a, 2, &m)) != 0) {
        return rc;
    }
    if (ingot_manifest_find(m, a.pos[1], a.shard, &index) != INGOT_OK) {
        fprintf(stderr, "ingot-manifest cat: %s: no sample with key '%s'%s\n", a.pos[0], a.pos[1],
                a.shard >= 0 ? " in that shard" : "");
        rc = CLI_EXIT_FAIL;
    } else {
        rc = cli_cat_field(m, index, a.field);
    }
    ingot_manifest_close(m);
    free(a.pos);
    return rc;
}

static int cli_list(int argc, char **argv)
{
    cli_args_t a;
    ingot_manifest_h m;
    int rc = cli_parse(argc, argv, 0, &a);
    if (rc != 0 || (rc = cli_open("list", &a, 1, &m)) != 0) {
        return rc;
    }
    ingot_manifest_info_t info;
    ingot_manifest_query(m, &info);
    for (uint64_t i = 0; rc == 0 && i < info.sample_count; i++) {
        ingot_sample_info_t s;
        ingot_shard_info_t sh;
        if (ingot_manifest_sample_get(m, i, &s) != INGOT_OK ||
            ingot_manifest_shard_get(m, s.shard, &sh) != INGOT_OK) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        for (uint32_t f = 0; f < s.field_count; f++) {
            ingot_field_info_t fi;
            ingot_manifest_field_get(m, &s, f, &fi);
            printf("%s %s.%s%s %u %" PRIu64 " %d\n", sh.path, s.key, fi.name,
                   fi.codec == INGOT_CODEC_ZSTD ? ".zst" : "", fi.stored_len, s.offset + fi.offset,
                   s.label);
        }
    }
    ingot_manifest_close(m);
    free(a.pos);
    return rc;
}

/* ---------------------------------------------------------------- pack */

/** Bytes of member data the dictionary is trained on (zstd recommends ~100x the dict size). */
#define CLI_DICT_TRAIN_BYTES (8u << 20)
#define CLI_DICT_TRAIN_MAX   100000u

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
        return cli_usage_error("--shard-size '%s': expected a size such as 256MiB or 1GB "
                               "(K/KiB = 1024, KB = 1000)",
                               a->shard_size);
    }
    if (a->split != NULL &&
        (!a->fashion || (strcmp(a->split, "train") != 0 && strcmp(a->split, "test") != 0))) {
        return cli_usage_error(a->fashion ? "--split '%s': the Fashion-MNIST splits are train "
                                            "and test"
                                          : "--split '%s': only --fashion-mnist has splits",
                               a->split);
    }
    if ((a->folder.skip_non_images || a->folder.allow_empty) && !a->folder.on) {
        return cli_usage_error("%s", "--skip-non-images and --allow-empty-classes go with "
                                     "--labels-from-dirs");
    }
    if (a->folder.on && (a->npos != 1 || a->fashion)) {
        return cli_usage_error("%s", "--labels-from-dirs takes one ROOT (ROOT/<class>/<image>), "
                                     "not --fashion-mnist");
    }
    if (a->out == NULL || (a->npos == 0 && !a->fashion) || (a->dict && a->zstd_level == 0)) {
        return cli_usage_error("%s", "pack needs SRC... (or --fashion-mnist) -o DIR; --dict "
                                     "needs --zstd LEVEL");
    }
    if (pp->progress) {
        pp->total_members = cli_count_members(a);
    }
    return 0;
}

static int cli_pack(int argc, char **argv)
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

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    /* INGOT_LOG_LEVEL, INGOT_LOG_FILE, INGOT_FAULT, INGOT_TIMEOUT */
    if (ingot_config_check() != INGOT_OK) {
        return CLI_EXIT_FAIL; /* the bad variable was logged */
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "build") == 0) {
        return cli_build(argc - 2, argv + 2);
    } else if (strcmp(cmd, "verify") == 0) {
        return cli_verify(argc - 2, argv + 2);
    } else if (strcmp(cmd, "inspect") == 0) {
        return cli_inspect(argc - 2, argv + 2);
    } else if (strcmp(cmd, "cat") == 0) {
        return cli_cat(argc - 2, argv + 2);
    } else if (strcmp(cmd, "list") == 0) {
        return cli_list(argc - 2, argv + 2);
    } else if (strcmp(cmd, "pack") == 0) {
        return cli_pack(argc - 2, argv + 2);
    }
    return cli_usage_error("unknown command '%s'", cmd);
}
