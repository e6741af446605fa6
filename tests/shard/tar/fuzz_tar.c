/*
 * libFuzzer target: the tar reader over arbitrary bytes (headers, pax records, GNU long names,
 * sizes), with WebDataset name splitting and member data reads. Must never crash, hang or read
 * out of bounds; errors are expected.
 */
#include "shard/tar.h"
#include "common/fuzz.h"

#include <stdint.h>
#include <stdlib.h>

/** Members visited per input at most (keeps each run short). */
#define FUZZ_TAR_MEMBERS_MAX 4096
#define FUZZ_TAR_PEEK        64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    ingot_file_t src = {.fd = -1, .mem = data, .size = size, .name = "fuzz.tar"};
    tar_reader_t r;
    tar_member_t *m = malloc(sizeof(*m));
    if (m == NULL || ingot_tar_reader_init(&r, &src) != INGOT_OK) {
        free(m);
        return 0;
    }
    for (int i = 0, end = 0; i < FUZZ_TAR_MEMBERS_MAX; i++) {
        if (ingot_tar_reader_next(&r, m, &end) != INGOT_OK || end) {
            break;
        }
        const char *key, *field;
        size_t klen;
        uint8_t peek[FUZZ_TAR_PEEK];
        (void)ingot_tar_name_split(src.name, m->header_off, m->name, &key, &klen, &field);
        size_t n = m->size < sizeof(peek) ? (size_t)m->size : sizeof(peek);
        if (ingot_file_read(&src, m->data_off, peek, n) != INGOT_OK) {
            abort(); /* the reader promised the data lies inside the archive */
        }
    }
    ingot_tar_reader_release(&r);
    free(m);
    return 0;
}
