/* Importers: the public entry points, dispatching on the source kind (include/ingot/pack.h). */
#include "shard/import.h"
#include "base/log.h"
#include "base/status.h"
#include "shard/tar.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

ingot_status_t ingot_import_emit_named(const import_sink_t *sink, const char *src, const char *name,
                                       const void *data, size_t len)
{
    const char *key, *field;
    size_t klen;
    char k[PATH_MAX];
    INGOT_CHECK(ingot_tar_name_split(src, 0, name, &key, &klen, &field));
    if (klen >= sizeof(k)) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: member '%s': key longer than %d bytes", src, name,
                          PATH_MAX - 1);
    }
    memcpy(k, key, klen);
    k[klen] = '\0';
    return sink->cb(sink->arg, k, field, data, len);
}

/* AUTO: a directory tree when @p path is a directory, else a tar. */
static ingot_status_t import_resolve(const char *path, ingot_import_kind_t kind,
                                     ingot_import_kind_t *kind_p)
{
    struct stat st;
    if (path == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "import: NULL path");
    }
    if (kind != INGOT_IMPORT_AUTO) {
        *kind_p = kind;
        return INGOT_OK;
    }
    if (stat(path, &st) != 0) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: %s", path, strerror(errno));
    }
    *kind_p = S_ISDIR(st.st_mode) ? INGOT_IMPORT_DIR : INGOT_IMPORT_TAR;
    return INGOT_OK;
}

ingot_status_t ingot_import(const char *path, ingot_import_kind_t kind, ingot_import_member_cb_t cb,
                            void *arg)
{
    const import_sink_t sink = {.cb = cb, .arg = arg};
    ingot_status_t st;
    INGOT_CHECK(import_resolve(path, kind, &kind));
    switch (kind) {
    case INGOT_IMPORT_DIR: st = ingot_import_dir(path, &sink); break;
    case INGOT_IMPORT_TAR: st = ingot_import_tar(path, &sink); break;
    case INGOT_IMPORT_FASHION_MNIST: st = ingot_import_fmnist(path, &sink); break;
    default: return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: unknown import kind %d", path, kind);
    }
    return st == INGOT_END_OF_DATA ? INGOT_OK : st;
}

ingot_status_t ingot_import_count(const char *path, ingot_import_kind_t kind, uint64_t *count_p)
{
    INGOT_CHECK(import_resolve(path, kind, &kind));
    if (count_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_import_count: NULL count_p");
    }
    switch (kind) {
    case INGOT_IMPORT_DIR: return ingot_import_dir_count(path, count_p);
    case INGOT_IMPORT_FASHION_MNIST: return ingot_import_fmnist_count(path, count_p);
    case INGOT_IMPORT_TAR: return INGOT_ERR_UNSUPPORTED; /* would read the whole tar */
    default: return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: unknown import kind %d", path, kind);
    }
}
