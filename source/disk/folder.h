/*
 * The disk tier's folder (INGOT_DISK_CACHE_DIR): opening it (made when missing, checked writable
 * and node-local), the scan that rebuilds the state of a start from the files themselves
 * (immutable, content-named entries need no journal), orphans of dead writers removed, and the
 * ledger: one small file holding the folder's usage, changed only under its flock, so that jobs
 * sharing the folder (any size, any manifest) count the same bytes against their budgets.
 *
 *   DIR/ledger                    "INGOTDL1", usage bytes, checksum (24 bytes)
 *   DIR/ab/<hash>-<log2>-<index>  entries (entry.h), fanned out by the shard hash's top byte
 *   DIR/ab/...fill                temporaries, each flock'ed by its live writer
 *
 * Every process that opens a folder may read entries and remove bad ones; eviction and admission
 * change the ledger under its lock. The ledger drifts only when a process dies between a rename
 * and the ledger's update: every scan under the lock (each job's start) writes it anew.
 */
#ifndef INGOT_SOURCE_DISK_FOLDER_H
#define INGOT_SOURCE_DISK_FOLDER_H

#include "source/disk/entry.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>

typedef struct ingot_disk_folder {
    int fd;                /**< the folder, or -1 */
    int ledger_fd;         /**< its ledger (read-only: its lock and reads), or -1 */
    int locked;            /**< this process holds the ledger's lock */
    int ready;             /**< mutex initialised (close undoes it once) */
    int shared;            /**< a group's folder (INGOT_DISK_FOLDER_SHARED): its modes */
    pthread_mutex_t mutex; /**< the ledger's lock between this process's threads (flock is per
                                open file, so it excludes other processes only) */
    uint64_t lock_timeout_ns;
    char path[PATH_MAX];
} ingot_disk_folder_t;

/** How a folder is opened (ingot_disk_folder_open()'s @p flags). */
enum {
    INGOT_DISK_FOLDER_CREATE = 1, /**< the tier's: made when missing, checked to take entries */
    INGOT_DISK_FOLDER_SHARED = 2  /**< INGOT_DISK_CACHE_SHARED: a group's folder is trusted */
};

/**
 * Open the folder at @p path (its last component never followed when a symbolic link) and check
 * that it is this user's to trust (ingot_disk_folder_trust(): also a group's when @p flags has
 * INGOT_DISK_FOLDER_SHARED). With INGOT_DISK_FOLDER_CREATE (the tier): made when missing
 * (INGOT_DISK_DIR_MODE exactly; missing parents 0700, or 0711 when shared: a group passes
 * through them), checked to hold entries: writable (a probe file is written and removed; fault
 * site "disk_folder"; a full one, ENOSPC or EDQUOT, is writable: its budget in effect says what
 * it takes), on a filesystem of this node (statfs: NFS, SMB, Lustre, GPFS, BeeGFS, CephFS, AFS,
 * PanFS are shared between nodes; fault site "disk_statfs"); its ledger opened (made with
 * INGOT_DISK_FILE_MODE). Without it (the tools): opened as it is, its ledger if there (ledger_fd
 * -1 otherwise).
 * @return INGOT_OK; INGOT_ERR_PERMISSION (not this user's to trust, read-only, or not writable by
 *         this user); INGOT_ERR_NOT_FOUND (missing and not made); INGOT_ERR_UNSUPPORTED (a
 *         filesystem shared between nodes); INGOT_ERR_IO. Nothing logged: @p why says what,
 *         naming the folder.
 */
ingot_status_t ingot_disk_folder_open(const char *path, int flags, uint64_t lock_timeout_ns,
                                      ingot_disk_folder_t *f, char *why, size_t whylen);

/**
 * Whether the folder open as @p fd (at @p path) is this user's to trust: a real folder, writable
 * by no one but its owner, who is this process's effective user; and so is each of its fan-out
 * folders there (a folder one of them would let another user write into is refused whole: its
 * user is to see to it). When @p shared, also a folder of another user's that is set-group-ID,
 * writable by its group and that group one of this user's, never writable by others; its fan-out
 * folders then of its group. ACLs that grant writing show in the group's bits (their mask).
 * @return INGOT_OK, or INGOT_ERR_PERMISSION with @p why naming the folder (or fan-out folder),
 *         what is wrong, its owner (uid, and name when known) and its mode in octal.
 */
ingot_status_t ingot_disk_folder_trust(int fd, const char *path, int shared, char *why,
                                       size_t whylen);

/** When @p path is a symbolic link (its open refused: ELOOP, ENOTDIR), say so in @p why as
 *  ingot_disk_folder_trust() would, naming its target and owner: 1; 0 when it is not one. */
int ingot_disk_folder_link(const char *path, char *why, size_t whylen);
/** The folder's filesystem as statfs sees it now. */
typedef struct ingot_disk_fs {
    uint64_t size;  /**< f_blocks x f_bsize */
    uint64_t avail; /**< f_bavail x f_bsize: what this user may still write */
} ingot_disk_fs_t;

/** Measure the filesystem of an open folder: INGOT_OK, or the errno's status (nothing logged). */
ingot_status_t ingot_disk_folder_fs(const ingot_disk_folder_t *f, ingot_disk_fs_t *fs_p);

/** Close (the ledger's lock let go). Accepts a folder that failed to open. */
void ingot_disk_folder_close(ingot_disk_folder_t *f);

/** Take the ledger's lock, retrying until the lock timeout (another job may hold it a moment):
 *  INGOT_OK, or INGOT_ERR_TIMED_OUT (logged once per process, naming the folder). */
ingot_status_t ingot_disk_ledger_lock(ingot_disk_folder_t *f);
/** The same, retrying until @p deadline (a monotonic time in ns) rather than the lock timeout. */
ingot_status_t ingot_disk_ledger_lock_until(ingot_disk_folder_t *f, uint64_t deadline);
void ingot_disk_ledger_unlock(ingot_disk_folder_t *f);
/** The folder's usage as the ledger says (lock held); 0 for a missing or damaged ledger. */
uint64_t ingot_disk_ledger_usage(ingot_disk_folder_t *f);
/** Add @p delta bytes to the usage (lock held; saturates at 0 and at UINT64_MAX). */
void ingot_disk_ledger_add(ingot_disk_folder_t *f, int64_t delta);
/** Write the usage found by a scan (lock held). */
void ingot_disk_ledger_set(ingot_disk_folder_t *f, uint64_t usage);

/** One entry found by a scan. */
typedef struct ingot_disk_found {
    ingot_disk_key_t key;
    uint64_t bytes;    /**< the file's size (header included) */
    uint64_t mtime_ns; /**< when it was written */
} ingot_disk_found_t;

/** What a scan found. */
typedef struct ingot_disk_scan {
    uint64_t entries, bytes; /**< entries and their bytes */
    uint64_t orphans;        /**< temporaries of dead writers (removed when cleaning) */
    uint64_t fills_live;     /**< temporaries a live writer holds */
    uint64_t strangers;      /**< files in the fan-out folders that are neither */
} ingot_disk_scan_t;

typedef void (*ingot_disk_found_fn_t)(void *arg, const ingot_disk_found_t *e);

/**
 * List every entry of the folder (@p fn for each; may be NULL) and every temporary, each told an
 * orphan or a live writer's by a lock test: an orphan is removed when @p clean. Writes nothing
 * else. INGOT_OK, or INGOT_ERR_IO naming the folder.
 */
ingot_status_t ingot_disk_folder_scan(ingot_disk_folder_t *f, int clean, ingot_disk_found_fn_t fn,
                                      void *arg, ingot_disk_scan_t *scan_p);

/** Remove the entry of @p key: unlinked, then emptied (its blocks freed at once, though a reader
 *  may hold it open: that reader's next read of it falls short, and its piece is a miss). Its
 *  bytes when this call removed it, 0 when it was not there. The caller subtracts them from the
 *  ledger (under its lock). */
uint64_t ingot_disk_folder_remove(ingot_disk_folder_t *f, const ingot_disk_key_t *key);


#endif
