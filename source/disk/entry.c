/* One entry of the disk tier (see entry.h): names, the header, the atomic write, the checked
 * read. */
#include "source/disk/entry.h"
#include "base/fault.h"
#include "base/hash.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "entries are read in place: LE hosts");

static uint64_t entry_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char entry_magic[8] = {'I', 'N', 'G', 'O', 'T', 'D', 'C', '1'};

/* The header's fixed part; the block hashes follow at ENTRY_HASHES_OFF. */
typedef struct entry_head {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;
    uint64_t shard_hash;
    uint64_t piece;
    uint32_t piece_log2;
    uint32_t block_bytes;
    uint64_t length;
    uint64_t created_ns; /* CLOCK_REALTIME */
    uint32_t nblocks;
    uint32_t pad;
    uint64_t checksum; /* XXH3 of the header's fixed part (this field and hits zero) and hashes */
    uint64_t hits;     /* written in place; outside the checksum */
    uint64_t layout;   /* an assembled entry's layout (version 2), else 0 (entry.h) */
} entry_head_t;

#define ENTRY_HASHES_OFF 128

_Static_assert(sizeof(entry_head_t) <= ENTRY_HASHES_OFF, "the fixed part fits before the hashes");
_Static_assert(ENTRY_HASHES_OFF + 8 * INGOT_DISK_BLOCKS_MAX <= INGOT_DISK_HEADER_BYTES,
               "every block hash fits in the header");

uint32_t ingot_disk_block_bytes(uint32_t piece_log2)
{
    uint64_t piece = 1ull << piece_log2, block = piece / INGOT_DISK_BLOCKS_MAX;
    return (uint32_t)(block < INGOT_DISK_BLOCK_MIN ? INGOT_DISK_BLOCK_MIN : block);
}

void ingot_disk_entry_name(const ingot_disk_key_t *key, int fill, char *buf, size_t len)
{
    snprintf(buf, len, "%02x/%016" PRIx64 "-%u-%" PRIx64 "%s", (unsigned)(key->shard_hash >> 56),
             key->shard_hash, key->piece_log2, key->piece, fill ? INGOT_DISK_FILL_SUFFIX : "");
}

int ingot_disk_entry_parse(const char *dir, const char *name, ingot_disk_key_t *key_p)
{
    unsigned log2 = 0;
    int used = 0;
    char hex[17], written[INGOT_DISK_NAME_MAX], found[INGOT_DISK_NAME_MAX];
    if (strlen(name) < 20 ||
        sscanf(name, "%16[0-9a-f]-%u-%" SCNx64 "%n", hex, &log2, &key_p->piece, &used) != 3 ||
        strlen(hex) != 16 || log2 > INGOT_DISK_PIECE_LOG2_MAX) {
        return -1;
    }
    key_p->shard_hash = strtoull(hex, NULL, 16);
    key_p->piece_log2 = log2;
    int kind = name[used] == '\0' ? 0 : strcmp(name + used, INGOT_DISK_FILL_SUFFIX) == 0 ? 1 : -1;
    /* Only the name its key writes, in the folder it goes to: sscanf() also takes blanks, signs,
     * "0x", upper case and leading zeros, names no removal by key would ever find. */
    ingot_disk_entry_name(key_p, kind == 1, written, sizeof(written));
    if (kind < 0 || snprintf(found, sizeof(found), "%s/%s", dir, name) >= (int)sizeof(found) ||
        strcmp(written, found) != 0) {
        return -1;
    }
    return kind;
}

static uint32_t entry_blocks(uint64_t len, uint32_t block)
{
    return (uint32_t)((len + block - 1) / block);
}

static uint64_t entry_checksum(const uint8_t *hdr)
{
    uint8_t copy[ENTRY_HASHES_OFF + 8 * INGOT_DISK_BLOCKS_MAX];
    entry_head_t h;
    memcpy(&h, hdr, sizeof(h));
    size_t n = ENTRY_HASHES_OFF + 8 * (size_t)(h.nblocks <= INGOT_DISK_BLOCKS_MAX ? h.nblocks : 0);
    memcpy(copy, hdr, n);
    h.checksum = 0;
    h.hits = 0;
    memcpy(copy, &h, sizeof(h));
    return ingot_hash64(copy, n);
}

void ingot_disk_entry_seal(void *buf, const ingot_disk_key_t *key, uint64_t len, uint64_t layout)
{
    uint8_t *hdr = buf;
    const uint8_t *data = hdr + INGOT_DISK_HEADER_BYTES;
    uint32_t block = ingot_disk_block_bytes(key->piece_log2);
    entry_head_t h = {.version = layout != 0 ? INGOT_DISK_ENTRY_ASSEMBLED
                                             : INGOT_DISK_ENTRY_VERSION,
                      .header_bytes = INGOT_DISK_HEADER_BYTES,
                      .shard_hash = key->shard_hash,
                      .piece = key->piece,
                      .piece_log2 = key->piece_log2,
                      .block_bytes = block,
                      .length = len,
                      .created_ns = entry_now_real(),
                      .nblocks = entry_blocks(len, block),
                      .layout = layout};
    memcpy(h.magic, entry_magic, sizeof(h.magic));
    memset(hdr, 0, INGOT_DISK_HEADER_BYTES);
    for (uint32_t b = 0; b < h.nblocks; b++) {
        uint64_t at = (uint64_t)b * block, n = len - at < block ? len - at : block;
        uint64_t hash = ingot_hash64(data + at, (size_t)n);
        memcpy(hdr + ENTRY_HASHES_OFF + 8 * b, &hash, 8);
    }
    memcpy(hdr, &h, sizeof(h));
    h.checksum = entry_checksum(hdr);
    memcpy(hdr, &h, sizeof(h));
}

/* write(2) all of it, with the "disk_write" fault site on every call. */
static int entry_write_all(int fd, const uint8_t *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        int fault = ingot_fault_check(INGOT_FAULT_DISK_WRITE);
        ssize_t r = fault ? (errno = fault, -1) : write(fd, p + done, n - done);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return errno;
        }
        done += (size_t)r;
    }
    return 0;
}

static ingot_status_t entry_errno(int err)
{
    if (err == ENOSPC || err == EDQUOT) {
        return INGOT_ERR_NO_RESOURCE;
    }
    return (err == EACCES || err == EPERM || err == EROFS) ? INGOT_ERR_PERMISSION : INGOT_ERR_IO;
}

/* Make fan-out folder @p fan with mode @p mode exactly (the umask would take the group's bits of
 * a shared one); 0, or -1 with errno (EEXIST: another writer made it). */
static int entry_make_fan(int dirfd, const char *fan, mode_t mode)
{
    if (mkdirat(dirfd, fan, mode) != 0) {
        return -1;
    }
    int fd = openat(dirfd, fan, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = fd < 0 || fchmod(fd, mode) != 0 ? errno : 0;
    if (fd >= 0) {
        close(fd);
    }
    errno = err;
    return err ? -1 : 0;
}

/* Create the temporary of @p name exclusively (INGOT_DISK_FILE_MODE exactly) and lock it (an
 * orphan found in the way is removed once); -1 with errno (EEXIST: a live writer holds it). */
static int entry_create_fill(int dirfd, const char *fill, int shared, int rdwr)
{
    char fan[3] = {fill[0], fill[1], '\0'};
    mode_t mode = INGOT_DISK_FILE_MODE(shared);
    for (int tries = 0; tries < 2; tries++) {
        int fd = openat(dirfd, fill,
                        (rdwr ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode);
        if (fd < 0 && errno == ENOENT) {
            if (entry_make_fan(dirfd, fan, INGOT_DISK_DIR_MODE(shared)) != 0 && errno != EEXIST) {
                return -1;
            }
            continue; /* the fan-out folder was just made */
        }
        if (fd < 0 && errno == EEXIST) {
            if (tries == 0 && ingot_disk_entry_clean_fill(dirfd, fill, 1) == 1) {
                continue; /* an orphan of a dead writer was in the way */
            }
            errno = EEXIST; /* a live writer fills it */
            return -1;
        }
        if (fd < 0) {
            return -1;
        }
        struct stat sb;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &sb) != 0 || sb.st_nlink == 0) {
            close(fd); /* a cleaner took it in the moment before the lock: someone else's now */
            errno = EEXIST;
            return -1;
        }
        if (fchmod(fd, mode) != 0) { /* the umask would take the group's bits of a shared one */
            int err = errno;
            unlinkat(dirfd, fill, 0);
            close(fd);
            errno = err;
            return -1;
        }
        return fd;
    }
    errno = EEXIST;
    return -1;
}

int ingot_disk_entry_temp(int dirfd, const ingot_disk_key_t *key, int shared)
{
    char fill[INGOT_DISK_NAME_MAX];
    ingot_disk_entry_name(key, 1, fill, sizeof(fill));
    return entry_create_fill(dirfd, fill, shared, 1);
}

/* Rename the temporary to the entry unless the entry exists; EEXIST when it does. */
static int entry_publish(int dirfd, const char *fill, const char *name)
{
    if (renameat2(dirfd, fill, dirfd, name, RENAME_NOREPLACE) == 0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        return errno;
    }
    /* no RENAME_NOREPLACE on this filesystem: a hard link fails the same way when it exists */
    if (linkat(dirfd, fill, dirfd, name, 0) != 0) {
        return errno;
    }
    unlinkat(dirfd, fill, 0);
    return 0;
}

ingot_status_t ingot_disk_entry_fill(int dirfd, const ingot_disk_key_t *key, const void *buf,
                                     uint64_t len, int shared, ingot_disk_fill_t *fill_p, char *why,
                                     size_t whylen)
{
    ingot_disk_fill_t *f = fill_p;
    ingot_disk_entry_name(key, 0, f->name, sizeof(f->name));
    ingot_disk_entry_name(key, 1, f->fill, sizeof(f->fill));
    if (faccessat(dirfd, f->name, F_OK, 0) == 0) {
        return INGOT_ERR_EXISTS;
    }
    f->fd = entry_create_fill(dirfd, f->fill, shared, 0);
    if (f->fd < 0) {
        int err = errno;
        snprintf(why, whylen, "%s: create failed: %s", f->fill, strerror(err));
        return err == EEXIST ? INGOT_ERR_EXISTS : entry_errno(err);
    }
    int err = entry_write_all(f->fd, buf, INGOT_DISK_HEADER_BYTES + (size_t)len);
    const char *what = "write";
    if (err == 0 && fdatasync(f->fd) != 0) {
        err = errno;
        what = "fdatasync";
    }
    if (err != 0) {
        snprintf(why, whylen, "%s: %s failed: %s", f->fill, what, strerror(err));
        unlinkat(dirfd, f->fill, 0); /* still under our lock: no other writer has it */
        close(f->fd);
        return entry_errno(err);
    }
    /* clean now: the fill's pages leave the page cache rather than the loader's */
    (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
    if (ingot_fault_check(INGOT_FAULT_DISK_PUBLISH) != 0) { /* tests: a writer stopped */
        raise(SIGSTOP);
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_entry_publish(int dirfd, ingot_disk_fill_t *fill, char *why,
                                        size_t whylen)
{
    int err = entry_publish(dirfd, fill->fill, fill->name);
    if (err != 0) {
        snprintf(why, whylen, "%s: rename failed: %s", fill->fill, strerror(err));
        unlinkat(dirfd, fill->fill, 0); /* still under our lock: no other writer has it */
    }
    close(fill->fd);
    if (err == EEXIST) {
        return INGOT_ERR_EXISTS;
    }
    return err == 0 ? INGOT_OK : entry_errno(err);
}

ingot_status_t ingot_disk_entry_write(int dirfd, const ingot_disk_key_t *key, const void *buf,
                                      uint64_t len, int shared, char *why, size_t whylen)
{
    ingot_disk_fill_t fill;
    ingot_status_t st = ingot_disk_entry_fill(dirfd, key, buf, len, shared, &fill, why, whylen);
    return st == INGOT_OK ? ingot_disk_entry_publish(dirfd, &fill, why, whylen) : st;
}

/* Check the header in @p hdr against @p key and @p expect_len (UINT64_MAX: any). */
static ingot_status_t entry_head_check(const uint8_t *hdr, const ingot_disk_key_t *key,
                                       uint64_t expect_len, entry_head_t *h, ingot_disk_bad_t *bad)
{
    memcpy(h, hdr, sizeof(*h));
    if (memcmp(h->magic, entry_magic, sizeof(entry_magic)) != 0) {
        snprintf(bad->why, sizeof(bad->why), "not an entry (magic)");
        return INGOT_ERR_FORMAT;
    }
    if (h->version != INGOT_DISK_ENTRY_VERSION && h->version != INGOT_DISK_ENTRY_ASSEMBLED) {
        snprintf(bad->why, sizeof(bad->why),
                 "format version %u (this build reads versions %u and %u)", h->version,
                 INGOT_DISK_ENTRY_VERSION, INGOT_DISK_ENTRY_ASSEMBLED);
        return INGOT_ERR_FORMAT;
    }
    if (h->nblocks > INGOT_DISK_BLOCKS_MAX || entry_checksum(hdr) != h->checksum ||
        (h->layout != 0) != (h->version == INGOT_DISK_ENTRY_ASSEMBLED)) {
        snprintf(bad->why, sizeof(bad->why), "header fails its checksum");
        return INGOT_ERR_CORRUPT;
    }
    if (h->shard_hash != key->shard_hash || h->piece != key->piece ||
        h->piece_log2 != key->piece_log2 || h->length > (1ull << key->piece_log2) ||
        h->block_bytes != ingot_disk_block_bytes(key->piece_log2) ||
        h->nblocks != entry_blocks(h->length, h->block_bytes) ||
        (expect_len != UINT64_MAX && h->length != expect_len)) {
        snprintf(bad->why, sizeof(bad->why),
                 "holds piece %" PRIu64 " (%" PRIu64 " bytes) of shard %016" PRIx64
                 ", not what its name says",
                 h->piece, h->length, h->shard_hash);
        return INGOT_ERR_CORRUPT;
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_entry_head_check(const uint8_t *hdr, const ingot_disk_key_t *key,
                                           uint64_t expect_len, uint64_t *length_p,
                                           uint32_t *block_bytes_p, ingot_disk_bad_t *bad)
{
    entry_head_t h;
    ingot_status_t st = entry_head_check(hdr, key, expect_len, &h, bad);
    if (st == INGOT_OK) {
        *length_p = h.length;
        *block_bytes_p = h.block_bytes;
    }
    return st;
}

/* Read exactly @p n bytes at @p at; the errno, or EOVERFLOW for an end of file before them. */
static int entry_pread(int fd, uint8_t *p, size_t n, uint64_t at, size_t need)
{
    size_t got = 0;
    while (got < need) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return r < 0 ? errno : EOVERFLOW;
        }
        got += (size_t)r;
    }
    return 0;
}

/* Open the entry, read and check its header and its size; the descriptor or -1 (status set). */
static int entry_open(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len, uint8_t *hdr,
                      entry_head_t *h, ingot_status_t *st_p, ingot_disk_bad_t *bad)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_entry_name(key, 0, name, sizeof(name));
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
        *st_p = errno == ENOENT ? INGOT_ERR_NOT_FOUND : INGOT_ERR_IO;
        snprintf(bad->why, sizeof(bad->why), "open failed: %s", strerror(errno));
        return -1;
    }
    int err = fstat(fd, &sb) != 0 ? errno : 0;
    if (err == 0 && (uint64_t)sb.st_size < INGOT_DISK_HEADER_BYTES) {
        err = EOVERFLOW;
    }
    if (err == 0) {
        err = entry_pread(fd, hdr, INGOT_DISK_HEADER_BYTES, 0, INGOT_DISK_HEADER_BYTES);
    }
    *st_p = err == EOVERFLOW ? INGOT_ERR_CORRUPT : err ? INGOT_ERR_IO : INGOT_OK;
    if (err != 0) {
        snprintf(bad->why, sizeof(bad->why), "%s",
                 err == EOVERFLOW ? "truncated inside its header" : strerror(err));
    } else {
        *st_p = entry_head_check(hdr, key, expect_len, h, bad);
    }
    if (*st_p == INGOT_OK && (uint64_t)sb.st_size != INGOT_DISK_HEADER_BYTES + h->length) {
        snprintf(bad->why, sizeof(bad->why),
                 "truncated or extended: %" PRIu64 " bytes, its header says %" PRIu64,
                 (uint64_t)sb.st_size, INGOT_DISK_HEADER_BYTES + h->length);
        *st_p = INGOT_ERR_CORRUPT;
    }
    if (*st_p != INGOT_OK) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read blocks [b0, b1) into @p blocks (where block b0 lands) and, with @p check, check their
 * hashes. */
static ingot_status_t entry_blocks_check(const ingot_disk_open_t *o, uint32_t b0, uint32_t b1,
                                         uint8_t *blocks, int check, ingot_disk_bad_t *bad)
{
    uint64_t bb = o->block_bytes, at = (uint64_t)b0 * bb;
    uint64_t end = (uint64_t)b1 * bb < o->length ? (uint64_t)b1 * bb : o->length;
    /* O_DIRECT: whole aligned blocks (the last one may run past the end of the file) */
    size_t want = o->direct ? (size_t)(b1 - b0) * bb : (size_t)(end - at);
    int err = entry_pread(o->fd, blocks, want, INGOT_DISK_HEADER_BYTES + at, (size_t)(end - at));
    if (err != 0) {
        snprintf(bad->why, sizeof(bad->why), "read at offset %" PRIu64 " failed: %s",
                 INGOT_DISK_HEADER_BYTES + at, err == EOVERFLOW ? "end of file" : strerror(err));
        return err == EOVERFLOW ? INGOT_ERR_CORRUPT : INGOT_ERR_IO;
    }
    for (uint32_t b = b0; check && b < b1; b++) {
        uint64_t off = (uint64_t)b * bb;
        uint64_t n = o->length - off < bb ? o->length - off : bb;
        uint64_t want_hash;
        memcpy(&want_hash, o->hdr + ENTRY_HASHES_OFF + 8 * b, 8);
        if (ingot_hash64(blocks + (off - at), (size_t)n) != want_hash) {
            snprintf(bad->why, sizeof(bad->why),
                     "block %u (bytes %" PRIu64 "-%" PRIu64 ") fails its hash", b, off, off + n);
            return INGOT_ERR_CORRUPT;
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_entry_open(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                     int direct, ingot_disk_open_t *o, ingot_disk_bad_t *bad)
{
    entry_head_t h = {0};
    ingot_status_t st;
    o->fd = entry_open(dirfd, key, expect_len, o->hdr, &h, &st, bad);
    o->length = h.length;
    o->block_bytes = h.block_bytes;
    o->layout = h.layout;
    /* the header went through the page cache (read again and again); the blocks go around it */
    o->direct = o->fd >= 0 && direct && fcntl(o->fd, F_SETFL, O_DIRECT) == 0;
    return st;
}

void ingot_disk_entry_close(ingot_disk_open_t *o)
{
    if (o->fd >= 0) {
        close(o->fd);
    }
    o->fd = -1;
}

ingot_status_t ingot_disk_entry_blocks(const ingot_disk_open_t *o, uint64_t off, uint64_t len,
                                       void *blocks, size_t room, size_t *shift_p,
                                       ingot_disk_bad_t *bad)
{
    return ingot_disk_entry_blocks_read(o, off, len, blocks, room, shift_p, 1, bad);
}

ingot_status_t ingot_disk_entry_blocks_read(const ingot_disk_open_t *o, uint64_t off, uint64_t len,
                                            void *blocks, size_t room, size_t *shift_p, int check,
                                            ingot_disk_bad_t *bad)
{
    uint64_t bb = o->block_bytes;
    if (len == 0 || off > o->length || len > o->length - off) {
        snprintf(bad->why, sizeof(bad->why),
                 "range %" PRIu64 "+%" PRIu64 " outside its %" PRIu64 " bytes", off, len,
                 o->length);
        return INGOT_ERR_CORRUPT;
    }
    uint32_t b0 = (uint32_t)(off / bb), b1 = (uint32_t)((off + len + bb - 1) / bb);
    if ((uint64_t)(b1 - b0) * bb > room) {
        return INGOT_ERR_NO_RESOURCE; /* nothing read */
    }
    *shift_p = (size_t)(off - b0 * bb);
    return entry_blocks_check(o, b0, b1, blocks, check, bad);
}

ingot_status_t ingot_disk_entry_read(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                     uint64_t off, uint64_t len, void *bounce, int direct,
                                     const uint8_t **data_p, ingot_disk_bad_t *bad)
{
    static _Thread_local ingot_disk_open_t o;
    uint8_t *data = (uint8_t *)bounce + INGOT_DISK_HEADER_BYTES;
    size_t shift = 0;
    ingot_status_t st = ingot_disk_entry_open(dirfd, key, expect_len, direct, &o, bad);
    if (st == INGOT_OK) {
        st = ingot_disk_entry_blocks(&o, off, len, data, (size_t)1 << key->piece_log2, &shift, bad);
    }
    ingot_disk_entry_close(&o);
    *data_p = data + shift;
    return st;
}

ingot_status_t ingot_disk_entry_check(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                      void *bounce, uint64_t *len_p, ingot_disk_bad_t *bad)
{
    static _Thread_local ingot_disk_open_t o;
    size_t shift;
    ingot_status_t st = ingot_disk_entry_open(dirfd, key, expect_len, 0, &o, bad);
    if (st == INGOT_OK) {
        *len_p = o.length;
        st = o.length ? ingot_disk_entry_blocks(&o, 0, o.length,
                                                (uint8_t *)bounce + INGOT_DISK_HEADER_BYTES,
                                                (size_t)1 << key->piece_log2, &shift, bad)
                      : INGOT_OK;
    }
    ingot_disk_entry_close(&o);
    return st;
}

void ingot_disk_entry_add_hits(int dirfd, const ingot_disk_key_t *key, uint64_t hits)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_entry_name(key, 0, name, sizeof(name));
    int fd = openat(dirfd, name, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return; /* evicted meanwhile */
    }
    uint64_t old = 0;
    const off_t at = offsetof(entry_head_t, hits);
    if (flock(fd, LOCK_EX) == 0 && pread(fd, &old, sizeof(old), at) == (ssize_t)sizeof(old)) {
        old += hits;
        (void)!pwrite(fd, &old, sizeof(old), at);
    }
    close(fd);
}

void ingot_disk_entry_stamp(int dirfd, const ingot_disk_key_t *key, uint64_t *hits_p,
                            uint64_t *created_p)
{
    char name[INGOT_DISK_NAME_MAX];
    entry_head_t h = {0};
    ingot_disk_entry_name(key, 0, name, sizeof(name));
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
        memcmp(h.magic, entry_magic, sizeof(entry_magic)) != 0) {
        memset(&h, 0, sizeof(h));
    }
    if (fd >= 0) {
        close(fd);
    }
    *hits_p = h.hits;
    *created_p = h.created_ns;
}

int ingot_disk_entry_clean_fill(int dirfd, const char *path, int remove)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? 1 : -1; /* gone already: its writer published or removed it */
    }
    int orphan = 0;
    struct stat held, named;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        /* The file locked must still be the one the name gives: another cleaner may have removed
         * it since this open, and a new writer made a live temporary under the same name. */
        if (fstat(fd, &held) != 0 || held.st_nlink == 0 ||
            fstatat(dirfd, path, &named, AT_SYMLINK_NOFOLLOW) != 0 || named.st_ino != held.st_ino ||
            named.st_dev != held.st_dev) {
            orphan = 1; /* this orphan is gone; what the name holds now is not ours to judge */
        } else {
            orphan = !remove || unlinkat(dirfd, path, 0) == 0 || errno == ENOENT ? 1 : -1;
        }
    }
    close(fd);
    return orphan;
}
