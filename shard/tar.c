/*
 * POSIX tar reader: ustar headers, pax extended headers (path, size), GNU long names, with every
 * header checked before anything in it is used. See tar.h.
 */
#include "shard/tar.h"
#include "base/log.h"
#include "base/fault.h"
#include "base/io.h"
#include "base/mem.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* ustar header fields: offset and length. */
#define TAR_NAME_OFF     0
#define TAR_NAME_LEN     100
#define TAR_SIZE_OFF     124
#define TAR_SIZE_LEN     12
#define TAR_CHKSUM_OFF   148
#define TAR_CHKSUM_LEN   8
#define TAR_TYPE_OFF     156
#define TAR_MAGIC_OFF    257
#define TAR_MAGIC_LEN    6
#define TAR_PREFIX_OFF   345
#define TAR_PREFIX_LEN   155
#define TAR_BASE256_FLAG 0x80u
#define TAR_BASE256_NEG  0xffu
/** Largest size an 11-digit octal ustar field holds; beyond it pax alone carries the size. */
#define TAR_OCTAL_SIZE_MAX 077777777777ull
/** Bytes of a pax record length (decimal digits) we accept. */
#define TAR_PAX_LEN_DIGITS_MAX 19

static const char tar_posix_magic[TAR_MAGIC_LEN] = {'u', 's', 't', 'a', 'r', '\0'};


/* ---------------------------------------------------------------- fields */

static int tar_parse_base256(const uint8_t *field, size_t len, uint64_t *value_p)
{
    if (field[0] == TAR_BASE256_NEG) {
        return -1; /* negative */
    }
    uint64_t v = field[0] & ~TAR_BASE256_FLAG;
    for (size_t i = 1; i < len; i++) {
        if (v > (UINT64_MAX >> 8)) {
            return -1;
        }
        v = (v << 8) | field[i];
    }
    *value_p = v;
    return 0;
}

int ingot_tar_parse_number(const uint8_t *field, size_t len, uint64_t *value_p)
{
    if (field[0] & TAR_BASE256_FLAG) {
        return tar_parse_base256(field, len, value_p);
    }
    size_t i = 0;
    while (i < len && field[i] == ' ') {
        i++;
    }
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < len && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
        if (v > (UINT64_MAX >> 3)) {
            return -1;
        }
        v = (v << 3) | (uint64_t)(field[i] - '0');
    }
    for (; i < len; i++) {
        if (field[i] != ' ' && field[i] != '\0') {
            return -1; /* not octal */
        }
    }
    if (digits == 0) {
        return -1;
    }
    *value_p = v;
    return 0;
}

static int tar_checksum_ok(const uint8_t *h, uint64_t expected)
{
    uint64_t usum = 0;
    int64_t ssum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        int in_field = i >= TAR_CHKSUM_OFF && i < TAR_CHKSUM_OFF + TAR_CHKSUM_LEN;
        uint8_t c = in_field ? (uint8_t)' ' : h[i];
        usum += c;
        ssum += (int8_t)c;
    }
    return usum == expected || (uint64_t)ssum == expected; /* historic signed sums too */
}

static int tar_block_is_zero(const uint8_t *h)
{
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        if (h[i] != 0) {
            return 0;
        }
    }
    return 1;
}

int ingot_tar_path_is_safe(const char *path, size_t len)
{
    if (len == 0 || path[0] == '/') {
        return -1;
    }
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || path[i] == '/') {
            if (i - start == 2 && path[start] == '.' && path[start + 1] == '.') {
                return -1;
            }
            start = i + 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- reader */

ingot_status_t ingot_tar_reader_init(tar_reader_t *r, const ingot_file_t *src)
{
    r->src = src;
    r->off = 0;
    r->done = 0;
    r->special = ingot_malloc(TAR_SPECIAL_MAX + 1, "tar special header buffer");
    return r->special ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

void ingot_tar_reader_release(tar_reader_t *r)
{
    free(r->special);
    r->special = NULL;
}

/* State collected from special headers (pax, GNU long name) for the next member. */
typedef struct tar_pending {
    int have_path, have_size, have_pax, have_longname;
    uint64_t size;
    uint64_t first_off;
} tar_pending_t;

static ingot_status_t tar_bad(const tar_reader_t *r, uint64_t off, const char *what)
{
    return ingot_fail(INGOT_ERR_FORMAT, "%s: offset %" PRIu64 ": %s", r->src->name, off, what);
}

/* Parse a strict decimal u64 from [s, s+len). */
static int tar_parse_decimal(const char *s, size_t len, uint64_t *value_p)
{
    uint64_t v = 0;
    if (len == 0 || len > TAR_PAX_LEN_DIGITS_MAX + 1) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) {
            return -1;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *value_p = v;
    return 0;
}

/* Apply one pax record "key=value" (global headers are only checked). */
static ingot_status_t tar_pax_record(tar_reader_t *r, uint64_t off, const char *kv, size_t len,
                                     int global, tar_pending_t *p, tar_member_t *m)
{
    const char *eq = memchr(kv, '=', len);
    if (eq == NULL || eq == kv) {
        return tar_bad(r, off, "pax record without 'key='");
    }
    size_t klen = (size_t)(eq - kv), vlen = len - klen - 1;
    const char *val = eq + 1;
    if (global) {
        return INGOT_OK;
    }
    if (klen == 4 && memcmp(kv, "path", 4) == 0) {
        if (vlen == 0 || vlen > TAR_NAME_MAX || memchr(val, '\0', vlen) != NULL) {
            return tar_bad(r, off, "pax path is empty, too long or contains NUL");
        }
        memcpy(m->name, val, vlen);
        m->name[vlen] = '\0';
        p->have_path = 1;
    } else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
        if (tar_parse_decimal(val, vlen, &p->size) != 0) {
            return tar_bad(r, off, "pax size is not a decimal number");
        }
        p->have_size = 1;
    }
    return INGOT_OK;
}

/* Parse the records "LEN key=value\n" of a pax header's data. */
static ingot_status_t tar_pax_parse(tar_reader_t *r, uint64_t off, size_t size, int global,
                                    tar_pending_t *p, tar_member_t *m)
{
    const char *d = (const char *)r->special;
    size_t pos = 0;
    while (pos < size) {
        size_t sp = pos;
        while (sp < size && sp - pos <= TAR_PAX_LEN_DIGITS_MAX && d[sp] >= '0' && d[sp] <= '9') {
            sp++;
        }
        uint64_t rlen;
        if (sp >= size || d[sp] != ' ' || tar_parse_decimal(d + pos, sp - pos, &rlen) != 0 ||
            rlen <= sp - pos + 1 || rlen > size - pos || d[pos + rlen - 1] != '\n') {
            return tar_bad(r, off, "malformed pax record");
        }
        INGOT_CHECK(tar_pax_record(r, off, d + sp + 1, pos + rlen - 1 - (sp + 1), global, p, m));
        pos += rlen;
    }
    return INGOT_OK;
}

/* Read a special header's data (capped) into r->special. */
static ingot_status_t tar_special_read(tar_reader_t *r, uint64_t hoff, uint64_t size)
{
    if (size > TAR_SPECIAL_MAX) {
        char msg[128];
        snprintf(msg, sizeof(msg), "special header of %" PRIu64 " bytes exceeds the %u-byte cap",
                 size, TAR_SPECIAL_MAX);
        return tar_bad(r, hoff, msg);
    }
    INGOT_CHECK(ingot_file_read(r->src, hoff + TAR_BLOCK, r->special, (size_t)size));
    r->special[size] = '\0';
    return INGOT_OK;
}

/* Handle a special header (pax 'x'/'g', GNU 'L'/'K'); *handled_p = 1 when it was one. */
static ingot_status_t tar_special(tar_reader_t *r, uint64_t hoff, char type, uint64_t size,
                                  tar_pending_t *p, tar_member_t *m, int *handled_p)
{
    *handled_p = 1;
    switch (type) {
    case 'x':
        if (p->have_pax) {
            return tar_bad(r, hoff, "two pax headers for one member");
        }
        p->have_pax = 1;
        INGOT_CHECK(tar_special_read(r, hoff, size));
        return tar_pax_parse(r, hoff, (size_t)size, 0, p, m);
    case 'g':
        INGOT_CHECK(tar_special_read(r, hoff, size));
        return tar_pax_parse(r, hoff, (size_t)size, 1, p, m);
    case 'L':
        if (p->have_longname) {
            return tar_bad(r, hoff, "two GNU long-name headers for one member");
        }
        INGOT_CHECK(tar_special_read(r, hoff, size));
        size_t n = strnlen((const char *)r->special, (size_t)size);
        if (n == 0 || n > TAR_NAME_MAX) {
            return tar_bad(r, hoff, "GNU long name is empty or too long");
        }
        if (!p->have_path) { /* a pax path wins over a GNU long name */
            memcpy(m->name, r->special, n + 1);
        }
        p->have_longname = 1;
        return INGOT_OK;
    case 'K': return tar_special_read(r, hoff, size); /* long link name: checked, unused */
    default: *handled_p = 0; return INGOT_OK;
    }
}

static ingot_status_t tar_kind_of(tar_reader_t *r, uint64_t hoff, char type, tar_kind_t *kind_p)
{
    switch (type) {
    case '0':
    case '\0':
    case '7': *kind_p = TAR_KIND_FILE; return INGOT_OK;
    case '5': *kind_p = TAR_KIND_DIR; return INGOT_OK;
    case '1':
    case '2':
    case '3':
    case '4':
    case '6': *kind_p = TAR_KIND_SPECIAL; return INGOT_OK;
    default: {
        char msg[64];
        snprintf(msg, sizeof(msg), "unsupported tar member type '%c' (0x%02x)",
                 (type >= ' ' && type < 0x7f) ? type : '?', (unsigned char)type);
        return tar_bad(r, hoff, msg);
    }
    }
}

/* Name from the ustar name and prefix fields (unless a long name was given). */
static void tar_ustar_name(const uint8_t *h, tar_member_t *m)
{
    size_t nlen = strnlen((const char *)h + TAR_NAME_OFF, TAR_NAME_LEN);
    size_t plen = 0;
    if (memcmp(h + TAR_MAGIC_OFF, tar_posix_magic, TAR_MAGIC_LEN) == 0) {
        plen = strnlen((const char *)h + TAR_PREFIX_OFF, TAR_PREFIX_LEN);
    }
    size_t pos = 0;
    if (plen > 0) {
        memcpy(m->name, h + TAR_PREFIX_OFF, plen);
        m->name[plen] = '/';
        pos = plen + 1;
    }
    memcpy(m->name + pos, h + TAR_NAME_OFF, nlen);
    m->name[pos + nlen] = '\0';
}

/* Read and check the header at r->off; *size_p from the header's size field. */
static ingot_status_t tar_header_read(tar_reader_t *r, uint8_t *h, uint64_t *size_p, int *zero_p)
{
    if (r->off == r->src->size) {
        return tar_bad(r, r->off, "truncated: archive ends without an end-of-archive marker");
    }
    if (r->src->size - r->off < TAR_BLOCK) {
        return tar_bad(r, r->off, "truncated: partial header block at end of archive");
    }
    INGOT_CHECK(ingot_file_read(r->src, r->off, h, TAR_BLOCK));
    *zero_p = tar_block_is_zero(h);
    if (*zero_p) {
        return INGOT_OK;
    }
    uint64_t chk;
    if (ingot_tar_parse_number(h + TAR_CHKSUM_OFF, TAR_CHKSUM_LEN, &chk) != 0) {
        return tar_bad(r, r->off, "header checksum field is not octal");
    }
    if (!tar_checksum_ok(h, chk)) {
        return tar_bad(r, r->off, "bad header checksum");
    }
    if (ingot_tar_parse_number(h + TAR_SIZE_OFF, TAR_SIZE_LEN, size_p) != 0) {
        return tar_bad(r, r->off, "size field is not a valid octal or base-256 number");
    }
    return INGOT_OK;
}

/* Offset past a member's data (rounded to blocks), checking that the data lies in the file. */
static ingot_status_t tar_data_end(tar_reader_t *r, uint64_t hoff, uint64_t size, uint64_t *next_p)
{
    uint64_t data = hoff + TAR_BLOCK;
    if (size > r->src->size - data) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "truncated: member size %" PRIu64 " extends beyond the end "
                 "of the archive (%" PRIu64 " bytes)",
                 size, r->src->size);
        return tar_bad(r, hoff, msg);
    }
    uint64_t padded = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
    *next_p = data + (padded > r->src->size - data ? r->src->size - data : padded);
    return INGOT_OK;
}

/* Final checks of a member once its name and size are known. */
static ingot_status_t tar_member_finish(tar_reader_t *r, const tar_pending_t *p, uint64_t hoff,
                                        uint64_t ustar_size, tar_member_t *m)
{
    if (p->have_size && p->size != ustar_size &&
        !(p->size > TAR_OCTAL_SIZE_MAX && (ustar_size == 0 || ustar_size == TAR_OCTAL_SIZE_MAX))) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "member '%.80s': pax size %" PRIu64 " disagrees with ustar "
                 "size %" PRIu64,
                 m->name, p->size, ustar_size);
        return tar_bad(r, hoff, msg);
    }
    if (ingot_tar_path_is_safe(m->name, strlen(m->name)) != 0) {
        char msg[TAR_NAME_MAX + 96];
        snprintf(msg, sizeof(msg), "member '%s': absolute path or '..' component (path traversal)",
                 m->name);
        return tar_bad(r, hoff, msg);
    }
    m->header_off = p->first_off;
    m->data_off = hoff + TAR_BLOCK;
    m->size = p->have_size ? p->size : ustar_size;
    return tar_data_end(r, hoff, m->size, &r->off);
}

ingot_status_t ingot_tar_reader_next(tar_reader_t *r, tar_member_t *m, int *end_p)
{
    uint8_t h[TAR_BLOCK];
    tar_pending_t p = {0};
    p.first_off = r->off;
    *end_p = 0;
    if (r->done) {
        *end_p = 1;
        return INGOT_OK;
    }
    for (;;) {
        uint64_t size, hoff = r->off;
        int zero = 0, handled = 0;
        INGOT_CHECK(tar_header_read(r, h, &size, &zero));
        if (zero) {
            if (p.have_pax || p.have_longname) {
                return tar_bad(r, hoff, "end-of-archive marker right after a special header");
            }
            r->done = 1;
            *end_p = 1;
            return INGOT_OK;
        }
        /* h is filled: a failed pread returns its errno status, never INGOT_OK (errno != 0 then).
         * NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign) */
        char type = (char)h[TAR_TYPE_OFF];
        INGOT_CHECK(tar_special(r, hoff, type, size, &p, m, &handled));
        if (handled) {
            INGOT_CHECK(tar_data_end(r, hoff, size, &r->off));
            continue;
        }
        INGOT_CHECK(tar_kind_of(r, hoff, type, &m->kind));
        m->typeflag = type;
        if (!p.have_path && !p.have_longname) {
            tar_ustar_name(h, m);
        }
        return tar_member_finish(r, &p, hoff, size, m);
    }
}

ingot_status_t ingot_tar_name_split(const char *archive, uint64_t off, const char *name,
                                    const char **key_p, size_t *key_len_p, const char **field_p)
{
    while (name[0] == '.' && name[1] == '/') {
        name += 2;
    }
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *dot = strchr(base, '.');
    if (dot == NULL || dot == base || dot[1] == '\0') {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: offset %" PRIu64 ": member '%s' is not named "
                          "<key>.<field>",
                          archive, off, name);
    }
    *key_p = name;
    *key_len_p = (size_t)(dot - name);
    *field_p = dot + 1;
    return INGOT_OK;
}
