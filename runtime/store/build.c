/*
 * A manifest over the shards in a bucket (ingot_store_manifest_build): one LIST of the prefix
 * (the only LIST ingot makes), every shard fetched into an unlinked temporary file and indexed
 * by shard/'s builder under its name relative to the prefix, with its size and ETag; the
 * manifest written to a temporary folder, then PUT beside the shards.
 */
#include "runtime/store/store.h"
#include "shard/builder.h"
#include "shard/manifest.h"
#include "base/file.h"
#include "base/log.h"
#include "base/param.h"
#include "base/status.h"
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Objects a prefix may hold (a bound on the listing's memory). */
#define BUILD_LIST_MAX     (10u * 1000u * 1000u)
#define BUILD_DEFAULT_NAME "manifest.ingot"

typedef struct build {
    const ingot_store_build_params_t *p;
    const char *suffix;
    char *prefix;              /* s3://BUCKET/PREFIX/ ('/'-ended) */
    ingot_location_t where;    /* the prefix, resolved (its key: PREFIX/, what LIST lists) */
    ingot_location_t folder;   /* s3://BUCKET/PREFIX, where the names start */
    ingot_location_t manifest; /* its URL, resolved */
    char tmpdir[PATH_MAX], tmpfile[PATH_MAX];
    ingot_objstore_t *client;
    ingot_manifest_builder_h builder;
    ingot_store_build_report_t rep;
} build_t;

/* The prefix ('/'-ended) and the manifest's URL (directly under it), resolved. */
static ingot_status_t build_names(build_t *b)
{
    const ingot_store_build_params_t *p = b->p;
    size_t n = strlen(p->prefix);
    if (ingot_location_scheme(p->prefix) != INGOT_LOCATION_S3) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "manifest build: '%s' is not an s3:// prefix (a bucket is listed; an "
                          "http(s) server cannot be)",
                          p->prefix);
    }
    if (asprintf(&b->prefix, "%s%s", p->prefix, (n > 0 && p->prefix[n - 1] == '/') ? "" : "/") <
        0) {
        return INGOT_ERR_NO_MEMORY;
    }
    INGOT_CHECK(ingot_location_parse(b->prefix, 0, &b->where));
    INGOT_CHECK(ingot_location_dir(&b->where, &b->folder));
    const char *m = INGOT_PARAM_VALUE(p, manifest, INGOT_STORE_BUILD_PARAM_FIELD_MANIFEST, NULL);
    size_t pl = strlen(b->prefix);
    if (m != NULL &&
        (strncmp(m, b->prefix, pl) != 0 || strchr(m + pl, '/') != NULL || m[pl] == '\0')) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "manifest build: the manifest '%s' must lie directly under the prefix "
                          "'%s' (shard names are relative to it)",
                          m, b->prefix);
    }
    return ingot_location_join(&b->folder, m != NULL ? m + pl : BUILD_DEFAULT_NAME, &b->manifest);
}

/* The builder, writing into a temporary folder. */
static ingot_status_t build_builder(build_t *b)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(b->tmpdir, sizeof(b->tmpdir), "%s/ingot-manifest.XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(b->tmpdir) == NULL) {
        b->tmpdir[0] = '\0';
        return ingot_fail(INGOT_ERR_IO, "manifest build: cannot make a temporary folder in %s",
                          tmp && tmp[0] ? tmp : "/tmp");
    }
    snprintf(b->tmpfile, sizeof(b->tmpfile), "%s/%s", b->tmpdir, BUILD_DEFAULT_NAME);
    ingot_manifest_builder_params_t bp = {0};
    if (b->p->field_mask & INGOT_STORE_BUILD_PARAM_FIELD_SPECIAL) {
        bp.field_mask |= INGOT_MANIFEST_BUILDER_PARAM_FIELD_SPECIAL;
        bp.special = b->p->special;
    }
    if ((b->p->field_mask & INGOT_STORE_BUILD_PARAM_FIELD_LABELS) && b->p->label_path) {
        bp.field_mask |= INGOT_MANIFEST_BUILDER_PARAM_FIELD_LABELS;
        bp.label_path = b->p->label_path;
    }
    return ingot_manifest_builder_create(b->tmpfile, &bp, &b->builder);
}

static int build_takes(const build_t *b, const char *rel)
{
    size_t n = strlen(rel), s = strlen(b->suffix);
    return n > s && strcmp(rel + n - s, b->suffix) == 0 &&
           strcmp(rel, b->manifest.text + strlen(b->prefix)) != 0;
}

/* One listed object: fetched into a temporary file and indexed under its name. */
static ingot_status_t build_shard(build_t *b, const ingot_objstore_entry_t *e)
{
    const char *rel = e->key + strlen(b->where.key);
    if (!build_takes(b, rel)) {
        b->rep.skipped++;
        return INGOT_OK;
    }
    ingot_location_t shard;
    INGOT_CHECK(ingot_location_join(&b->folder, rel, &shard));
    int fd = -1;
    ingot_status_t st = ingot_store_local_copy(&shard, e->etag, e->size, &fd);
    if (st == INGOT_OK) {
        ingot_file_t f = {.fd = fd, .size = e->size, .name = shard.text};
        st = ingot_manifest_builder_add_source(b->builder, &f, rel, e->etag);
        close(fd);
    }
    ingot_location_release(&shard);
    b->rep.shards += st == INGOT_OK;
    b->rep.bytes += st == INGOT_OK ? e->size : 0;
    return st;
}

/* LIST once, then every shard in key order. */
static ingot_status_t build_shards(build_t *b)
{
    ingot_objstore_listing_t listing = {0};
    ingot_objstore_stats_t before, after;
    ingot_objstore_stats(b->client, &before);
    INGOT_CHECK(ingot_objstore_list(b->client, b->prefix, 0, BUILD_LIST_MAX, ingot_store_deadline(),
                                    &listing));
    b->rep.list_requests = listing.pages;
    ingot_status_t st = INGOT_OK;
    for (size_t i = 0; i < listing.count && st == INGOT_OK; i++) {
        st = build_shard(b, &listing.entries[i]);
    }
    ingot_objstore_listing_free(&listing);
    ingot_objstore_stats(b->client, &after);
    b->rep.get_requests = after.requests - before.requests - b->rep.list_requests;
    if (st == INGOT_OK && b->rep.shards == 0) {
        st = ingot_fail(INGOT_ERR_NOT_FOUND, "manifest build: no object ending in '%s' under %s",
                        b->suffix, b->prefix);
    }
    return st;
}

/* The manifest written locally, then PUT at its URL. */
static ingot_status_t build_write(build_t *b)
{
    INGOT_CHECK(ingot_manifest_builder_write(b->builder));
    uint8_t *data;
    size_t len;
    INGOT_CHECK(ingot_file_read_whole(b->tmpfile, &data, &len));
    ingot_manifest_h m;
    ingot_status_t st = ingot_manifest_open_file(b->tmpfile, 0, &m); /* what is put: checked */
    if (st == INGOT_OK) {
        ingot_manifest_info_t mi;
        ingot_manifest_query(m, &mi);
        b->rep.samples = mi.sample_count;
        ingot_manifest_close(m);
        st = ingot_store_put(&b->manifest, data, len);
    }
    b->rep.manifest_bytes = len;
    free(data);
    return st;
}

static void build_free(build_t *b)
{
    ingot_manifest_builder_destroy(b->builder);
    if (b->tmpdir[0] != '\0') {
        unlink(b->tmpfile);
        rmdir(b->tmpdir);
    }
    free(b->prefix);
    ingot_location_release(&b->where);
    ingot_location_release(&b->folder);
    ingot_location_release(&b->manifest);
}

ingot_status_t ingot_store_manifest_build(const ingot_store_build_params_t *params,
                                          ingot_store_build_report_t *report_p)
{
    if (params == NULL || !(params->field_mask & INGOT_STORE_BUILD_PARAM_FIELD_PREFIX) ||
        params->prefix == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_store_manifest_build: no prefix");
    }
    build_t b = {.p = params};
    b.suffix = INGOT_PARAM_VALUE(params, suffix, INGOT_STORE_BUILD_PARAM_FIELD_SUFFIX, ".tar");
    ingot_status_t st = build_names(&b);
    if (st == INGOT_OK && (st = ingot_objstore_shared(&b.where, &b.client)) == INGOT_OK &&
        (st = build_builder(&b)) == INGOT_OK && (st = build_shards(&b)) == INGOT_OK) {
        st = build_write(&b);
    }
    if (report_p != NULL) {
        *report_p = b.rep;
    }
    build_free(&b);
    return st;
}
