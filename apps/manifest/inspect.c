/*
 * ingot-manifest's reading commands: inspect (summary, fields, size histogram, classes), verify
 * (every shard and sample re-hashed, the corrupt ones named), list (one line per member), cat (a
 * sample's field, decoded).
 */
#include "manifest/cli.h"
#include "common/cli.h"
#include <ingot/shard.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Buckets of the sample-size histogram (powers of two). */
#define CLI_HIST_BUCKETS 48
#define CLI_HIST_BAR     40

static int cli_open(const char *cmd, cli_args_t *a, int npos, ingot_manifest_h *m_p)
{
    if (a->npos != npos) {
        free(a->pos);
        (void)cli_usage("wrong number of arguments for '%s'", cmd);
        return CLI_EXIT_USAGE;
    }
    if (ingot_manifest_open(a->pos[0], 0, m_p) != INGOT_OK) {
        free(a->pos);
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

int cli_verify(int argc, char **argv)
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

int cli_inspect(int argc, char **argv)
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

int cli_cat(int argc, char **argv)
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

int cli_list(int argc, char **argv)
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
