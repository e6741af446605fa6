/*
 * Fuzz target: the disk tier's entries as a reader finds them (source/disk/entry.h): the file
 * names a scan parses and the headers and blocks a read checks. Input: a line "DIR/NAME" (a name
 * as found in a fan-out folder), a byte of flags, a byte to change (4 bytes: its offset in the
 * entry; 1: what it is XORed with), a range to read (4 bytes: offset, 4: length), then the
 * payload. Checked: a name parsed is the name the key writes (nothing else is taken for it); an
 * entry sealed for the key (the name's, or one the flags make) reads back whole, its length and
 * block size as sealed, any range's bytes its own; a changed byte either fails the check (the
 * header, or the block holding it) or changes nothing read; a header for another key or length
 * is refused; and any 4 KiB of input taken as a header is refused or holds together.
 */
#include "source/disk/entry.h"
#include "common/fuzz.h"
#include <stdio.h>

#define FUZZ_PAYLOAD_MAX (64u << 10)
#define FUZZ_ROOM        (64u << 10) /* the read's bounce buffer */

/* The name line: parsed, it must be the name its key writes. 1 with *key_p for a parsed one. */
static int check_name(const char *line, ingot_disk_key_t *key_p)
{
    char dir[8] = "", written[INGOT_DISK_NAME_MAX], found[INGOT_DISK_NAME_MAX + 8];
    const char *slash = strchr(line, '/'), *name = slash != NULL ? slash + 1 : line;
    if (slash != NULL && (size_t)(slash - line) < sizeof(dir)) {
        memcpy(dir, line, (size_t)(slash - line));
        dir[slash - line] = '\0';
    }
    int kind = ingot_disk_entry_parse(dir, name, key_p);
    if (kind < 0) return 0;
    ingot_disk_entry_name(key_p, kind, written, sizeof(written));
    snprintf(found, sizeof(found), "%s/%s", dir, name);
    if (strcmp(written, found) != 0) abort(); /* a name that is not its key's */
    return 1;
}

/* Read [off, off + len) of the entry (header @p hdr, file @p fd): the status, and the bytes
 * compared with @p want when it is INGOT_OK. */
static ingot_status_t read_range(int fd, const uint8_t *hdr, uint64_t length, uint32_t block,
                                 uint64_t off, uint64_t len, const uint8_t *want)
{
    static uint8_t bounce[FUZZ_ROOM];
    ingot_disk_open_t o = {.fd = fd, .direct = 0, .length = length, .block_bytes = block};
    ingot_disk_bad_t bad;
    size_t shift = 0;
    memcpy(o.hdr, hdr, sizeof(o.hdr));
    ingot_status_t st = ingot_disk_entry_blocks(&o, off, len, bounce, sizeof(bounce), &shift, &bad);
    if (st == INGOT_OK &&
        (shift + len > sizeof(bounce) || memcmp(bounce + shift, want, len) != 0)) {
        abort(); /* checked, and not the bytes written */
    }
    return st;
}

/* What a read of [off, off + n) should say when byte @p at of the entry was changed (@p x != 0):
 * the blocks it touches do not fit the bounce buffer, or one of them holds the change, or fine. */
static ingot_status_t read_verdict(uint64_t at, uint8_t x, uint64_t off, uint64_t n, uint32_t block)
{
    uint64_t b0 = off / block, b1 = (off + n + block - 1) / block;
    if ((b1 - b0) * block > FUZZ_ROOM) return INGOT_ERR_NO_RESOURCE;
    int hit = x != 0 && at >= INGOT_DISK_HEADER_BYTES + b0 * block &&
              at < INGOT_DISK_HEADER_BYTES + b1 * block;
    return hit ? INGOT_ERR_CORRUPT : INGOT_OK;
}

/* The sealed entry @p e (@p len payload bytes) with byte @p at XORed with @p x (0: unchanged),
 * its header checked and [off, off + n) read. */
static void check_changed(uint8_t *e, uint64_t len, const ingot_disk_key_t *key, uint64_t at,
                          uint8_t x, uint64_t off, uint64_t n)
{
    uint8_t *orig = fuzz_copy(e + INGOT_DISK_HEADER_BYTES, (size_t)len);
    uint64_t length = 0;
    uint32_t block = 0;
    ingot_disk_bad_t bad;
    if (orig == NULL) return;
    e[at] ^= x;
    int fd = fuzz_file(e, INGOT_DISK_HEADER_BYTES + (size_t)len);
    ingot_status_t st = ingot_disk_entry_head_check(e, key, len, &length, &block, &bad);
    if (st != INGOT_OK && (x == 0 || at >= INGOT_DISK_HEADER_BYTES)) {
        abort(); /* a header refused that is whole */
    }
    if (st == INGOT_OK && (length != len || block != ingot_disk_block_bytes(key->piece_log2))) {
        abort(); /* a header taken that says otherwise */
    }
    if (st == INGOT_OK && n > 0 && off < len) {
        n = n > len - off ? len - off : n;
        if (read_range(fd, e, length, block, off, n, orig + off) !=
            read_verdict(at, x, off, n, block)) {
            abort();
        }
    }
    e[at] ^= x;
    free(orig);
}

/* Another key, or another length, than the entry's: refused. */
static void check_other(const uint8_t *e, uint64_t len, const ingot_disk_key_t *key)
{
    ingot_disk_key_t other = *key;
    uint64_t length;
    uint32_t block;
    ingot_disk_bad_t bad;
    other.piece++;
    if (ingot_disk_entry_head_check(e, &other, len, &length, &block, &bad) == INGOT_OK ||
        ingot_disk_entry_head_check(e, key, len + 1, &length, &block, &bad) == INGOT_OK) {
        abort();
    }
}

/* 4 KiB of input as a header: refused, or one that holds together. */
static void check_raw(const uint8_t *p, size_t n, const ingot_disk_key_t *key)
{
    uint8_t *hdr = calloc(1, INGOT_DISK_HEADER_BYTES);
    uint64_t length;
    uint32_t block;
    ingot_disk_bad_t bad;
    if (hdr == NULL) return;
    memcpy(hdr, p, n < INGOT_DISK_HEADER_BYTES ? n : INGOT_DISK_HEADER_BYTES);
    if (ingot_disk_entry_head_check(hdr, key, UINT64_MAX, &length, &block, &bad) == INGOT_OK &&
        (length > (1ull << key->piece_log2) || block != ingot_disk_block_bytes(key->piece_log2))) {
        abort();
    }
    free(hdr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    size_t linelen = 0;
    const uint8_t *line = fuzz_line(&in, &linelen);
    if (line == NULL || in.left > FUZZ_PAYLOAD_MAX + 16) return 0;
    char *text = fuzz_cstr(line, linelen - (line[linelen - 1] == '\n'));
    ingot_disk_key_t key;
    int named = text != NULL && check_name(text, &key);
    free(text);
    unsigned flags = (unsigned)fuzz_take(&in, 1);
    uint64_t at = fuzz_take(&in, 4), off = fuzz_take(&in, 4), n = fuzz_take(&in, 4);
    uint8_t x = (uint8_t)fuzz_take(&in, 1);
    if (!named) { /* a key of the pieces a tier writes: 4 KiB to 64 MiB */
        key = (ingot_disk_key_t){0x9e3779b97f4a7c15ull * (flags | 1), flags >> 4, 12 + flags % 15};
    }
    check_raw(in.p, in.left, &key);
    uint64_t len = in.left < (1ull << key.piece_log2) ? in.left : 1ull << key.piece_log2;
    uint8_t *e = malloc(INGOT_DISK_HEADER_BYTES + (size_t)len);
    if (e == NULL) return 0;
    if (len > 0) memcpy(e + INGOT_DISK_HEADER_BYTES, in.p, (size_t)len);
    ingot_disk_entry_seal(e, &key, len, len % 3 == 0 ? 0 : len | 1); /* whole or assembled */
    check_other(e, len, &key);
    check_changed(e, len, &key, 0, 0, off, n); /* as sealed */
    check_changed(e, len, &key, at % (INGOT_DISK_HEADER_BYTES + len), x, off, n);
    free(e);
    return 0;
}
