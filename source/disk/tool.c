/*
 * The public calls of include/ingot/disk_cache.h (ingot-cache): a folder listed per manifest, its
 * entries checked against a manifest (each alone, and each shard held whole against the
 * manifest's hash), evicted oldest first to a size, orphans cleaned. The same entry and folder
 * code the tier uses; changes under the ledger's lock only.
 */
#include <ingot/disk_cache.h>
#include <ingot/shard.h>
#include "source/disk/disk_impl.h"
#include "shard/manifest.h"
#include "base/base_config.h"
#include "base/hash.h"
#include "base/location.h"
#include "base/log.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry of a folder, as the tools sort them. */
typedef struct tool_entry {
    ingot_disk_key_t key;
    uint64_t bytes, mtime_ns;
} tool_entry_t;

typedef struct tool_list {
    tool_entry_t *e;
    uint64_t n, cap;
    const uint64_t *only; /* when set: keep the entries of these shard hashes (sorted) */
    uint64_t nonly;
    int failed;
} tool_list_t;

/* A manifest's shards: their hashes sorted (for lookups) and by row. */
typedef struct tool_manifest {
    ingot_manifest_h m;
    uint64_t *sorted, *hash, *size;
    uint32_t n;
    uint64_t bytes;
} tool_manifest_t;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void tool_found(void *arg, const ingot_disk_found_t *f)
{
    tool_list_t *l = arg;
    if (l->only != NULL && !bsearch(&f->key.shard_hash, l->only, l->nonly, 8, cmp_u64)) {
        return;
    }
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 1024;
        tool_entry_t *e = realloc(l->e, cap * sizeof(*e));
        if (e == NULL) {
            l->failed = 1;
            return;
        }
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = (tool_entry_t){f->key, f->bytes, f->mtime_ns};
}

/* Open @p dir as it is (nothing made), checked as the tier checks it, or fail naming it. */
static ingot_status_t tool_open(const char *dir, ingot_disk_folder_t *f)
{
    const ingot_base_config_t *cfg;
    const ingot_disk_config_t *disk;
    char why[PATH_MAX + 512];
    uint64_t timeout = ingot_base_config(&cfg) == INGOT_OK ? cfg->timeout_ns : 0;
    int shared = ingot_disk_config(&disk) == INGOT_OK && disk->shared;
    ingot_status_t st = ingot_disk_folder_open(dir, shared ? INGOT_DISK_FOLDER_SHARED : 0, timeout,
                                               f, why, sizeof(why));
    return st == INGOT_OK ? st : ingot_fail(st, "disk cache: %s", why);
}

/* Every entry of the folder (of the shards in l->only, when given); temporaries removed when
 * @p clean. */
static ingot_status_t tool_scan(ingot_disk_folder_t *f, int clean, tool_list_t *l,
                                ingot_disk_scan_t *scan)
{
    ingot_status_t st = ingot_disk_folder_scan(f, clean, tool_found, l, scan);
    if (st == INGOT_OK && l->failed) {
        st = ingot_fail(INGOT_ERR_NO_MEMORY, "disk cache: no memory to list %" PRIu64 " entries",
                        l->n);
    }
    return st;
}

static void tool_manifest_close(tool_manifest_t *t)
{
    ingot_manifest_close(t->m);
    free(t->sorted);
    free(t->hash);
    free(t->size);
    memset(t, 0, sizeof(*t));
}

static ingot_status_t tool_manifest_open(const char *path, tool_manifest_t *t)
{
    ingot_manifest_info_t mi;
    memset(t, 0, sizeof(*t));
    if (ingot_location_is_url(path)) { /* opening a URL is the runtime's, above this layer */
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "disk cache: manifest '%s' is a URL: give a local copy of it (entries "
                          "are named by the shards' hashes, the same in any copy)",
                          path);
    }
    ingot_status_t st = ingot_manifest_open_file(path, INGOT_MANIFEST_OPEN_LAZY, &t->m);
    if (st != INGOT_OK || (st = ingot_manifest_query(t->m, &mi)) != INGOT_OK) {
        return st;
    }
    t->n = (uint32_t)mi.shard_count;
    size_t n = t->n ? t->n : 1;
    t->sorted = ingot_calloc(n, 8, "disk cache: shards");
    t->hash = ingot_calloc(n, 8, "disk cache: shards");
    t->size = ingot_calloc(n, 8, "disk cache: shards");
    if (!t->sorted || !t->hash || !t->size) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t s = 0; s < t->n && st == INGOT_OK; s++) {
        ingot_shard_info_t si;
        st = ingot_manifest_shard_get(t->m, s, &si);
        t->sorted[s] = t->hash[s] = si.hash;
        t->size[s] = si.size;
        t->bytes += si.size;
    }
    qsort(t->sorted, t->n, 8, cmp_u64);
    return st;
}

static int tool_holds(const tool_manifest_t *t, uint64_t shard_hash)
{
    return bsearch(&shard_hash, t->sorted, t->n, 8, cmp_u64) != NULL;
}

/* Count one entry into the usage of every manifest holding its shard (or the rest's). */
static void tool_count(const tool_entry_t *e, int dirfd, const tool_manifest_t *t, uint32_t n,
                       ingot_disk_cache_usage_t *usage)
{
    uint64_t hits, created;
    ingot_disk_entry_stamp(dirfd, &e->key, &hits, &created);
    int any = 0;
    for (uint32_t i = 0; i <= n; i++) {
        if ((i < n && !tool_holds(&t[i], e->key.shard_hash)) || (i == n && any)) {
            continue;
        }
        any = 1;
        usage[i].entries++;
        usage[i].bytes += e->bytes;
        usage[i].piece_bytes += e->bytes - INGOT_DISK_HEADER_BYTES;
        usage[i].hits += hits;
    }
}

ingot_status_t ingot_disk_cache_list(const char *dir, const char *const *manifests, uint32_t n,
                                     ingot_disk_cache_usage_t *usage,
                                     ingot_disk_cache_folder_t *folder_p)
{
    tool_manifest_t *t = ingot_calloc(n + 1, sizeof(*t), "disk cache: manifests");
    ingot_disk_folder_t f;
    ingot_status_t st = t ? tool_open(dir, &f) : INGOT_ERR_NO_MEMORY;
    if (st != INGOT_OK) {
        free(t);
        return st;
    }
    memset(usage, 0, (n + 1) * sizeof(*usage));
    for (uint32_t i = 0; i < n && st == INGOT_OK; i++) {
        st = tool_manifest_open(manifests[i], &t[i]);
        usage[i].shard_bytes = t[i].bytes;
    }
    tool_list_t l = {0};
    ingot_disk_scan_t scan;
    if (st == INGOT_OK) {
        st = tool_scan(&f, 0, &l, &scan);
    }
    for (uint64_t k = 0; st == INGOT_OK && k < l.n; k++) {
        tool_count(&l.e[k], f.fd, t, n, usage);
    }
    if (st == INGOT_OK) {
        uint64_t ledger = f.ledger_fd >= 0 ? ingot_disk_ledger_usage(&f) : 0;
        *folder_p = (ingot_disk_cache_folder_t){scan.entries, scan.bytes,      ledger,
                                                scan.orphans, scan.fills_live, scan.strangers};
    }
    for (uint32_t i = 0; i < n; i++) {
        tool_manifest_close(&t[i]);
    }
    free(t);
    free(l.e);
    ingot_disk_folder_close(&f);
    return st;
}

/* ---- verify */

typedef struct tool_verify {
    ingot_disk_folder_t *f;
    const tool_manifest_t *t;
    int remove;
    ingot_disk_cache_bad_cb_t cb;
    void *arg;
    uint8_t *bounce;
    XXH3_state_t *hash; /* the shard being followed piece by piece */
    uint64_t next;      /* the piece it expects next, UINT64_MAX: none followed */
    ingot_disk_cache_verify_t *out;
} tool_verify_t;

static int cmp_piece(const void *a, const void *b)
{
    const tool_entry_t *x = a, *y = b;
    if (x->key.shard_hash != y->key.shard_hash) {
        return x->key.shard_hash < y->key.shard_hash ? -1 : 1;
    }
    if (x->key.piece_log2 != y->key.piece_log2) {
        return x->key.piece_log2 < y->key.piece_log2 ? -1 : 1;
    }
    return (x->key.piece > y->key.piece) - (x->key.piece < y->key.piece);
}

/* The manifest's size of the shard of @p k, or UINT64_MAX. */
static uint64_t tool_shard_size(const tool_manifest_t *t, const ingot_disk_key_t *k)
{
    for (uint32_t s = 0; s < t->n; s++) {
        if (t->hash[s] == k->shard_hash) {
            return t->size[s];
        }
    }
    return UINT64_MAX;
}

static void tool_bad(tool_verify_t *v, const ingot_disk_key_t *k, const char *why)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_entry_name(k, 0, name, sizeof(name));
    v->out->bad++;
    if (v->cb != NULL) {
        v->cb(v->arg, name, why);
    }
    if (v->remove && ingot_disk_ledger_lock(v->f) == INGOT_OK) {
        ingot_disk_ledger_add(v->f, -(int64_t)ingot_disk_folder_remove(v->f, k));
        ingot_disk_ledger_unlock(v->f);
    }
}

/* Check one entry; follow its shard's pieces in order to hash the shard whole. */
static void tool_verify_one(tool_verify_t *v, const tool_entry_t *e, int last_of_shard)
{
    uint64_t size = tool_shard_size(v->t, &e->key), at = e->key.piece << e->key.piece_log2, len;
    uint64_t expect = at < size
                          ? (size - at < (1ull << e->key.piece_log2) ? size - at
                                                                     : 1ull << e->key.piece_log2)
                          : 0;
    ingot_disk_bad_t bad;
    v->out->checked++;
    if (expect == 0) {
        tool_bad(v, &e->key, "a piece past the end of its shard");
        v->next = UINT64_MAX;
        return;
    }
    ingot_status_t st = ingot_disk_entry_check(v->f->fd, &e->key, expect, v->bounce, &len, &bad);
    if (st != INGOT_OK) {
        tool_bad(v, &e->key, st == INGOT_ERR_IO ? "read failed" : bad.why);
        v->next = UINT64_MAX;
        return;
    }
    if (e->key.piece == 0) {
        XXH3_64bits_reset(v->hash);
        v->next = 0;
    }
    if (v->next != e->key.piece) {
        v->next = UINT64_MAX; /* a piece missing: the shard is not held whole */
        return;
    }
    ingot_hash64_update(v->hash, v->bounce + INGOT_DISK_HEADER_BYTES, (size_t)len);
    v->next++;
    if (last_of_shard && at + len == size) {
        v->out->shards_whole++;
        v->out->shards_match += XXH3_64bits_digest(v->hash) == e->key.shard_hash;
    }
}

ingot_status_t ingot_disk_cache_verify(const char *dir, const char *manifest, int remove,
                                       ingot_disk_cache_bad_cb_t cb, void *arg,
                                       ingot_disk_cache_verify_t *verify_p)
{
    ingot_disk_folder_t f;
    tool_manifest_t t;
    tool_list_t l = {0};
    ingot_disk_scan_t scan;
    ingot_disk_cache_verify_t out = {0};
    tool_verify_t v = {&f, &t, remove, cb, arg, NULL, XXH3_createState(), UINT64_MAX, &out};
    ingot_status_t st = v.hash ? tool_open(dir, &f) : INGOT_ERR_NO_MEMORY;
    if (st != INGOT_OK) {
        XXH3_freeState(v.hash);
        return st;
    }
    if ((st = tool_manifest_open(manifest, &t)) == INGOT_OK) {
        l.only = t.sorted;
        l.nonly = t.n;
        st = tool_scan(&f, 0, &l, &scan);
    }
    if (l.n > 0) {
        qsort(l.e, l.n, sizeof(*l.e), cmp_piece);
    }
    uint32_t log2_max = 12;
    for (uint64_t k = 0; k < l.n; k++) {
        log2_max = l.e[k].key.piece_log2 > log2_max ? l.e[k].key.piece_log2 : log2_max;
    }
    v.bounce = st == INGOT_OK ? aligned_alloc(INGOT_DISK_HEADER_BYTES,
                                              INGOT_DISK_HEADER_BYTES + (1ull << log2_max))
                              : NULL;
    st = st != INGOT_OK || v.bounce ? st : INGOT_ERR_NO_MEMORY;
    for (uint64_t k = 0; st == INGOT_OK && k < l.n; k++) {
        int last = k + 1 == l.n || l.e[k + 1].key.shard_hash != l.e[k].key.shard_hash ||
                   l.e[k + 1].key.piece_log2 != l.e[k].key.piece_log2;
        tool_verify_one(&v, &l.e[k], last);
    }
    if (st == INGOT_OK) {
        *verify_p = out;
    }
    free(v.bounce);
    free(l.e);
    XXH3_freeState(v.hash);
    tool_manifest_close(&t);
    ingot_disk_folder_close(&f);
    return st;
}

/* ---- evict, clean, dir */

static int cmp_age(const void *a, const void *b)
{
    const tool_entry_t *x = a, *y = b;
    return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

ingot_status_t ingot_disk_cache_evict(const char *dir, uint64_t target, uint64_t evicted_p[2])
{
    ingot_disk_folder_t f;
    ingot_status_t st = tool_open(dir, &f);
    if (st != INGOT_OK || (st = ingot_disk_ledger_lock(&f)) != INGOT_OK) {
        ingot_disk_folder_close(&f);
        return st;
    }
    tool_list_t l = {0};
    ingot_disk_scan_t scan;
    uint64_t usage = 0, removed[2] = {0, 0};
    if ((st = tool_scan(&f, 0, &l, &scan)) == INGOT_OK) { /* under the lock: no fill meanwhile */
        usage = scan.bytes;
        qsort(l.e, l.n, sizeof(*l.e), cmp_age);
    }
    for (uint64_t k = 0; st == INGOT_OK && k < l.n && usage > target; k++) {
        uint64_t gone = ingot_disk_folder_remove(&f, &l.e[k].key);
        usage -= gone < usage ? gone : usage;
        removed[0] += gone != 0;
        removed[1] += gone;
    }
    if (st == INGOT_OK) {
        ingot_disk_ledger_set(&f, usage);
        evicted_p[0] = removed[0];
        evicted_p[1] = removed[1];
    }
    ingot_disk_ledger_unlock(&f);
    ingot_disk_folder_close(&f);
    free(l.e);
    return st;
}

ingot_status_t ingot_disk_cache_clean(const char *dir, uint64_t *removed_p, uint64_t *live_p)
{
    ingot_disk_folder_t f;
    ingot_disk_scan_t scan;
    ingot_status_t st = tool_open(dir, &f);
    if (st == INGOT_OK && (st = ingot_disk_folder_scan(&f, 1, NULL, NULL, &scan)) == INGOT_OK) {
        *removed_p = scan.orphans;
        *live_p = scan.fills_live;
    }
    ingot_disk_folder_close(&f);
    return st;
}

ingot_status_t ingot_disk_cache_dir(char *buf, size_t len)
{
    const ingot_disk_config_t *cfg;
    ingot_status_t st = ingot_disk_config(&cfg);
    if (st == INGOT_OK) {
        ingot_log_expand_path(cfg->dir, buf, len);
    }
    return st;
}
