/*
 * Directory importer: every regular file below a directory (symbolic links not followed),
 * sorted by the whole path so that the members of a key are adjacent, each read whole and
 * handed over as member `<relative path>`. The walk's state lives in one struct on the caller's
 * stack (fts(3)), so concurrent imports do not share anything.
 */
#include "shard/import.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include "shard/tar.h"

#include <errno.h>
#include <fts.h>
#include <stdlib.h>
#include <string.h>

/** Paths collected before sorting: the first allocation, doubled as needed. */
#define IMPORT_DIR_PATHS_MIN 1024

/* One walk: the root and the regular files found below it. */
typedef struct import_walk {
    const char *root;
    char **paths; /* NULL when only counting */
    size_t n, cap;
    int collect; /* keep the paths (else count them) */
} import_walk_t;

static ingot_status_t walk_keep(import_walk_t *w, const char *path)
{
    if (!w->collect) {
        w->n++;
        return INGOT_OK;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : IMPORT_DIR_PATHS_MIN;
        char **paths = realloc(w->paths, cap * sizeof(*paths));
        if (paths == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory listing files", w->root);
        }
        w->paths = paths;
        w->cap = cap;
    }
    if ((w->paths[w->n] = strdup(path)) == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory listing files", w->root);
    }
    w->n++;
    return INGOT_OK;
}

/* An entry fts could not read is an error naming it: nothing below the root is skipped. */
static ingot_status_t walk_entry(import_walk_t *w, const FTSENT *e)
{
    switch (e->fts_info) {
    case FTS_F: return walk_keep(w, e->fts_path);
    case FTS_DNR:
    case FTS_ERR:
    case FTS_NS:
        return ingot_fail(ingot_status_from_errno(e->fts_errno), "%s: cannot walk: %s", e->fts_path,
                          strerror(e->fts_errno));
    default: return INGOT_OK; /* directories, links, devices, FIFOs: not members */
    }
}

static ingot_status_t walk_run(import_walk_t *w)
{
    char *root = strdup(w->root);
    char *argv[] = {root, NULL};
    FTS *fts = root ? fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, NULL) : NULL;
    if (fts == NULL) {
        int e = root ? errno : ENOMEM;
        free(root);
        return ingot_fail(ingot_status_from_errno(e), "%s: cannot walk: %s", w->root, strerror(e));
    }
    ingot_status_t st = INGOT_OK;
    FTSENT *e;
    errno = 0;
    while (st == INGOT_OK && (e = fts_read(fts)) != NULL) {
        st = walk_entry(w, e);
    }
    if (st == INGOT_OK && errno != 0) {
        st = ingot_fail(ingot_status_from_errno(errno), "%s: cannot walk: %s", w->root,
                        strerror(errno));
    }
    fts_close(fts);
    free(root);
    return st;
}

static int walk_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read each collected file and hand it over as its path relative to the root. */
static ingot_status_t walk_emit(const import_walk_t *w, const import_sink_t *sink)
{
    size_t dl = strlen(w->root);
    ingot_status_t st = INGOT_OK;
    for (size_t i = 0; st == INGOT_OK && i < w->n; i++) {
        uint8_t *data = NULL;
        size_t len = 0;
        const char *rel = w->paths[i] + dl + (w->paths[i][dl] == '/');
        st = ingot_file_read_whole(w->paths[i], &data, &len);
        if (st == INGOT_OK) {
            st = ingot_import_emit_named(sink, w->root, rel, data, len);
        }
        free(data);
    }
    return st;
}

static void walk_release(import_walk_t *w)
{
    for (size_t i = 0; w->paths != NULL && i < w->n; i++) {
        free(w->paths[i]);
    }
    free(w->paths);
}

ingot_status_t ingot_import_dir(const char *dir, const import_sink_t *sink)
{
    import_walk_t w = {.root = dir, .collect = 1};
    ingot_status_t st = walk_run(&w);
    if (st == INGOT_OK && w.n > 0) {
        qsort(w.paths, w.n, sizeof(*w.paths), walk_cmp);
        st = walk_emit(&w, sink);
    }
    walk_release(&w);
    return st;
}

ingot_status_t ingot_import_dir_paths(const char *dir, char ***paths_p, size_t *n_p)
{
    import_walk_t w = {.root = dir, .collect = 1};
    ingot_status_t st = walk_run(&w);
    if (st != INGOT_OK) {
        walk_release(&w);
        return st;
    }
    if (w.n > 0) {
        qsort(w.paths, w.n, sizeof(*w.paths), walk_cmp);
    }
    *paths_p = w.paths;
    *n_p = w.n;
    return INGOT_OK;
}

void ingot_import_dir_paths_free(char **paths, size_t n)
{
    import_walk_t w = {.paths = paths, .n = n};
    walk_release(&w);
}

ingot_status_t ingot_import_dir_count(const char *dir, uint64_t *count_p)
{
    import_walk_t w = {.root = dir, .collect = 0};
    INGOT_CHECK(walk_run(&w));
    *count_p = w.n;
    return INGOT_OK;
}
