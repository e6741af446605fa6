/*
 * Importers (include/ingot/pack.h): a dataset on disk -> members handed to a callback, in a
 * deterministic order. One file per source kind; this header joins them to the dispatcher.
 */
#ifndef INGOT_SHARD_IMPORT_H
#define INGOT_SHARD_IMPORT_H

#include <ingot/pack.h>

/** Call @p cb once per member: the callback's status, with INGOT_END_OF_DATA kept (a stop). */
typedef struct import_sink {
    ingot_import_member_cb_t cb;
    void *arg;
} import_sink_t;

/** Split the member name @p name of source @p src into key and field and hand it to @p sink. */
ingot_status_t ingot_import_emit_named(const import_sink_t *sink, const char *src, const char *name,
                                       const void *data, size_t len);

/** The regular files below @p dir, sorted by path (import_dir.c). */
ingot_status_t ingot_import_dir(const char *dir, const import_sink_t *sink);
/** The paths of the regular files below @p dir (each starting with @p dir), sorted, in a
 *  malloc'd array (NULL when none); free them with ingot_import_dir_paths_free(). */
ingot_status_t ingot_import_dir_paths(const char *dir, char ***paths_p, size_t *n_p);
void ingot_import_dir_paths_free(char **paths, size_t n);
/** Regular files below @p dir, names only. */
ingot_status_t ingot_import_dir_count(const char *dir, uint64_t *count_p);

/** The regular members of the tar @p path, in order (import_tar.c). */
ingot_status_t ingot_import_tar(const char *path, const import_sink_t *sink);

/** Both splits of the Fashion-MNIST idx files in @p dir (import_fmnist.c). */
ingot_status_t ingot_import_fmnist(const char *dir, const import_sink_t *sink);
/** Members the Fashion-MNIST idx files in @p dir hold (two per image), from the label headers. */
ingot_status_t ingot_import_fmnist_count(const char *dir, uint64_t *count_p);

#endif
