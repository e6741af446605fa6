/* Tar importer: the regular members of an existing tar (ustar, pax, GNU), in archive order. */
#include "shard/import.h"
#include "base/mem.h"
#include "base/status.h"
#include "shard/tar.h"

#include <stdlib.h>

/* Read one member's data and hand it over. */
static ingot_status_t tar_emit(const ingot_file_t *src, const tar_member_t *m, const char *path,
                               const import_sink_t *sink)
{
    uint8_t *data = ingot_malloc(m->size ? (size_t)m->size : 1, path);
    if (data == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = ingot_file_read(src, m->data_off, data, (size_t)m->size);
    if (st == INGOT_OK) {
        st = ingot_import_emit_named(sink, path, m->name, data, (size_t)m->size);
    }
    free(data);
    return st;
}

ingot_status_t ingot_import_tar(const char *path, const import_sink_t *sink)
{
    ingot_file_t src;
    tar_reader_t r;
    tar_member_t *m = ingot_malloc(sizeof(*m), path); /* names up to TAR_NAME_MAX: not on stack */
    if (m == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = ingot_file_open(path, &src);
    if (st != INGOT_OK) {
        free(m);
        return st;
    }
    st = ingot_tar_reader_init(&r, &src);
    for (int end = 0; st == INGOT_OK;) {
        st = ingot_tar_reader_next(&r, m, &end);
        if (st != INGOT_OK || end) {
            break;
        }
        if (m->kind == TAR_KIND_FILE) {
            st = tar_emit(&src, m, path, sink);
        }
    }
    ingot_tar_reader_release(&r);
    ingot_file_close(&src);
    free(m);
    return st;
}
