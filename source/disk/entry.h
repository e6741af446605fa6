/*
 * One entry of the node's disk tier: a piece of a shard in a file of its own, named by its
 * content (the manifest's whole-shard XXH3, the piece size and the piece index), carrying its own
 * header (format version, key, length, an XXH3 per check block, a checksum of the header), so a
 * torn, truncated, damaged, misplaced or older-format entry is caught by whoever reads it, with no
 * help from the manifest.
 *
 *   [0, 4096)          header: "INGOTDC1", version, key, length, block size, created, hits,
 *                      header checksum, layout, then one XXH3-64 per block
 *   [4096, 4096 + len) the piece's bytes, as stored in the shard
 *
 * An entry written whole (version 1, layout 0) holds every byte of its piece. One assembled from
 * the samples that misses read (version 2, assemble.c) holds the bytes of the samples its layout
 * names (the spans of the manifest's records within the piece, hashed: a nonzero layout) and zeros
 * between them (the shard's own headers and padding, which no sample read needs): a reader uses
 * it only when its own manifest lays the piece out the same (ingot_disk_layout()).
 *
 * Entries are immutable once visible: written under a temporary name ("<name>.fill", created
 * exclusively and flock'ed by its writer for its whole life), fdatasync'ed, then renamed without
 * replacing (renameat2 RENAME_NOREPLACE): a reader sees a whole entry or none. A temporary nobody
 * holds a lock on is an orphan of a dead writer. The hit counter is the one field written in
 * place (under flock, outside the checksum): a statistic, never trusted for data.
 */
#ifndef INGOT_SOURCE_DISK_ENTRY_H
#define INGOT_SOURCE_DISK_ENTRY_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define INGOT_DISK_ENTRY_VERSION   1    /* the format of a piece written whole */
#define INGOT_DISK_ENTRY_ASSEMBLED 2    /* and of one assembled from samples (layout below) */
#define INGOT_DISK_HEADER_BYTES    4096 /* the header, also the O_DIRECT alignment */
#define INGOT_DISK_BLOCKS_MAX      256  /* check blocks per piece at most */
#define INGOT_DISK_BLOCK_MIN       4096 /* and their smallest size */
#define INGOT_DISK_NAME_MAX        64   /* "ab/<16 hex>-<log2>-<index hex>.fill" and its NUL */
#define INGOT_DISK_FILL_SUFFIX     ".fill"

/* The modes of what the tier makes, set exactly (fchmod) whatever the umask: a user's own, or,
 * when the folder is shared (INGOT_DISK_CACHE_SHARED), its group's too; set-group-ID folders, so
 * that what is made in them takes the folder's group. */
#define INGOT_DISK_DIR_MODE(shared)  ((shared) ? 02770u : 0700u)
#define INGOT_DISK_FILE_MODE(shared) ((shared) ? 0660u : 0600u)

/* The largest piece an entry describes: its check blocks (piece / 256) are sized in 32 bits. */
#define INGOT_DISK_PIECE_LOG2_MAX 39

/** What an entry holds: piece @ref piece (of 1 << @ref piece_log2 bytes) of the shard whose
 *  whole-shard XXH3 is @ref shard_hash. */
typedef struct ingot_disk_key {
    uint64_t shard_hash;
    uint64_t piece;
    uint32_t piece_log2;
} ingot_disk_key_t;

/** Why an entry could not be used (ingot_disk_entry_read()). */
typedef struct ingot_disk_bad {
    char why[256]; /**< "block 3 fails its hash", "truncated: ...", "format version 0 ..." */
} ingot_disk_bad_t;

/** Check-block size of a piece of 1 << @p piece_log2 bytes: 4 KiB, or piece / 256 when larger. */
uint32_t ingot_disk_block_bytes(uint32_t piece_log2);

/** The entry's path relative to the folder ("ab/<hash>-<log2>-<index>"; @p fill: its temporary). */
void ingot_disk_entry_name(const ingot_disk_key_t *key, int fill, char *buf, size_t len);

/** Parse a file name found in fan-out folder @p dir ("ab"): 0 an entry, 1 a temporary,
 *  -1 neither. */
int ingot_disk_entry_parse(const char *dir, const char *name, ingot_disk_key_t *key_p);

/**
 * Write the header of an entry into @p buf[0, INGOT_DISK_HEADER_BYTES), for @p len payload bytes
 * already at buf + INGOT_DISK_HEADER_BYTES (the hashes of its blocks); @p layout: 0 for a piece
 * held whole, else the layout of an assembled one (its samples' bytes only, zeros between).
 */
void ingot_disk_entry_seal(void *buf, const ingot_disk_key_t *key, uint64_t len, uint64_t layout);

/**
 * A temporary of @p key ("<name>.fill") for reading and writing, created exclusively (an orphan
 * in the way removed) and locked for as long as the descriptor lives, as a fill's: a scan takes
 * it for a live writer's until it is closed, then for an orphan. The keeper's assembly file.
 * The descriptor, or -1 with errno (EEXIST: a live writer holds it).
 */
int ingot_disk_entry_temp(int dirfd, const ingot_disk_key_t *key, int shared);

/** An entry written and not yet published (ingot_disk_entry_fill()): its temporary, open and
 *  locked, and both its names (relative to the folder). */
typedef struct ingot_disk_fill {
    int fd;
    char fill[INGOT_DISK_NAME_MAX];
    char name[INGOT_DISK_NAME_MAX];
} ingot_disk_fill_t;

/**
 * Write a sealed entry (header and payload, @p len payload bytes) into a temporary of the folder
 * @p dirfd: created exclusively and locked, written, fdatasync'ed, its pages dropped from the page
 * cache; left open and locked in *@p fill_p for ingot_disk_entry_publish(). Its fan-out folder,
 * when missing, and the temporary are made with the modes of a user's own folder, or of a group's
 * when @p shared (INGOT_DISK_DIR_MODE, INGOT_DISK_FILE_MODE). Fault sites "disk_write" on each
 * write, "disk_publish" once it is written.
 * @return INGOT_OK; INGOT_ERR_EXISTS (the entry is there, or another live writer is filling it:
 *         nothing written); INGOT_ERR_NO_RESOURCE (ENOSPC or EDQUOT); INGOT_ERR_PERMISSION;
 *         INGOT_ERR_IO (no temporary left). Nothing is logged: @p why says what failed, naming
 *         the file.
 */
ingot_status_t ingot_disk_entry_fill(int dirfd, const ingot_disk_key_t *key, const void *buf,
                                     uint64_t len, int shared, ingot_disk_fill_t *fill_p, char *why,
                                     size_t whylen);

/**
 * Publish @p fill (from ingot_disk_entry_fill()): renamed to its entry's name without replacing
 * one there, then closed; its temporary removed when it is not renamed.
 * @return INGOT_OK; INGOT_ERR_EXISTS (another writer published the entry first); as
 *         ingot_disk_entry_fill() otherwise (@p why says what failed).
 */
ingot_status_t ingot_disk_entry_publish(int dirfd, ingot_disk_fill_t *fill, char *why,
                                        size_t whylen);

/** ingot_disk_entry_fill(), then ingot_disk_entry_publish(): an entry written and published. */
ingot_status_t ingot_disk_entry_write(int dirfd, const ingot_disk_key_t *key, const void *buf,
                                      uint64_t len, int shared, char *why, size_t whylen);

/**
 * Read payload bytes [@p off, @p off + @p len) of the entry of @p key, whose payload must be
 * @p expect_len bytes, into @p bounce (INGOT_DISK_HEADER_BYTES + piece bytes, aligned to
 * INGOT_DISK_HEADER_BYTES), checking the header (magic, version, key, length, checksum), the file's
 * size and the hash of every block the range touches; O_DIRECT for the blocks when @p direct
 * (the header is read through the page cache). *@p data_p points at the range's first byte in
 * @p bounce.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND (no such entry: a miss); INGOT_ERR_CORRUPT or
 *         INGOT_ERR_FORMAT (a bad entry, @p bad says why); INGOT_ERR_IO (@p bad says why).
 *         Nothing is logged.
 */
ingot_status_t ingot_disk_entry_read(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                     uint64_t off, uint64_t len, void *bounce, int direct,
                                     const uint8_t **data_p, ingot_disk_bad_t *bad);

/**
 * Check the header @p hdr (INGOT_DISK_HEADER_BYTES) of the entry of @p key as a read does:
 * magic, version, checksum, then what it holds (key, length @p expect_len unless UINT64_MAX,
 * block size and count); *@p length_p and *@p block_bytes_p: its payload's length and check-block
 * size. The check of ingot_disk_entry_open(), and the fuzz target's entry point.
 * @return INGOT_OK; INGOT_ERR_FORMAT or INGOT_ERR_CORRUPT (@p bad says why).
 */
ingot_status_t ingot_disk_entry_head_check(const uint8_t *hdr, const ingot_disk_key_t *key,
                                           uint64_t expect_len, uint64_t *length_p,
                                           uint32_t *block_bytes_p, ingot_disk_bad_t *bad);

/** An entry opened and its header checked: the descriptor, the header (block hashes). */
typedef struct ingot_disk_open {
    uint8_t hdr[INGOT_DISK_HEADER_BYTES];
    int fd;               /**< -1: closed */
    int direct;           /**< its blocks are read with O_DIRECT */
    uint64_t length;      /**< payload bytes */
    uint32_t block_bytes; /**< check-block size */
    uint64_t layout;      /**< 0: the piece whole; else its samples' layout (assembled) */
} ingot_disk_open_t;

/**
 * Open the entry of @p key and check its header (magic, version, key, checksum, length
 * @p expect_len unless UINT64_MAX) and its file's size; with @p direct, its blocks are then read
 * with O_DIRECT (where the filesystem allows). INGOT_OK; INGOT_ERR_NOT_FOUND; INGOT_ERR_CORRUPT
 * or INGOT_ERR_FORMAT (@p bad says why); INGOT_ERR_IO. Nothing logged.
 */
ingot_status_t ingot_disk_entry_open(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                     int direct, ingot_disk_open_t *o, ingot_disk_bad_t *bad);
void ingot_disk_entry_close(ingot_disk_open_t *o);
/**
 * Read the blocks that payload bytes [@p off, @p off + @p len) of open entry @p o touch into
 * @p blocks (@p room bytes; aligned to INGOT_DISK_HEADER_BYTES when o->direct), whole, and check
 * each against its hash; *@p shift_p says where @p off's byte landed. Thread-safe (preads).
 * INGOT_OK; INGOT_ERR_NO_RESOURCE (the blocks do not fit @p room: nothing read);
 * INGOT_ERR_CORRUPT (@p bad says which block, or a read past the end); INGOT_ERR_IO.
 */
ingot_status_t ingot_disk_entry_blocks(const ingot_disk_open_t *o, uint64_t off, uint64_t len,
                                       void *blocks, size_t room, size_t *shift_p,
                                       ingot_disk_bad_t *bad);
/** ingot_disk_entry_blocks(), the blocks' hashes checked only with @p check: a reader whose
 *  caller checks every sample it takes from them against the manifest leaves the check to it
 *  (the bytes are hashed once; a sample that fails names the entry, ingot_disk_damaged()). */
ingot_status_t ingot_disk_entry_blocks_read(const ingot_disk_open_t *o, uint64_t off, uint64_t len,
                                            void *blocks, size_t room, size_t *shift_p, int check,
                                            ingot_disk_bad_t *bad);

/**
 * Check a whole entry as found (the tool's verify): header, size and every block, reading it
 * into @p bounce (as ingot_disk_entry_read()). @p expect_len: the payload length it must have,
 * or UINT64_MAX when unknown (another manifest's piece). *@p len_p: the payload's length.
 */
ingot_status_t ingot_disk_entry_check(int dirfd, const ingot_disk_key_t *key, uint64_t expect_len,
                                      void *bounce, uint64_t *len_p, ingot_disk_bad_t *bad);

/** Add @p hits to the entry's hit counter (under its flock); an entry gone meanwhile is skipped. */
void ingot_disk_entry_add_hits(int dirfd, const ingot_disk_key_t *key, uint64_t hits);

/** The entry's hit counter and the time it was written (ns since the epoch); 0 and 0 when the
 *  header cannot be read. */
void ingot_disk_entry_stamp(int dirfd, const ingot_disk_key_t *key, uint64_t *hits_p,
                            uint64_t *created_p);

/**
 * A temporary found by a scan: an orphan when no live writer holds its lock, then removed when
 * @p remove. Returns 1 for an orphan (removed when asked), 0 when a writer is alive, -1 when it
 * could not be opened or removed.
 */
int ingot_disk_entry_clean_fill(int dirfd, const char *path, int remove);

#endif
