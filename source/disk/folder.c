/* The disk tier's folder (see folder.h): open and checks, the ledger, the scan, removal. */
#include "source/disk/folder.h"
#include "base/fault.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define LEDGER_NAME "ledger"
/* Missing parents of the folder made here: a user's own, or passed through by a group sharing
 * the folder (listed by no one else). */
#define FOLDER_PARENT_MODE(shared) ((shared) ? 0711u : 0700u)
#define LOCK_POLL_NS               (2 * INGOT_NSEC_PER_MSEC)

static const char ledger_magic[8] = {'I', 'N', 'G', 'O', 'T', 'D', 'L', '1'};

typedef struct ledger {
    char magic[8];
    uint64_t usage;
    uint64_t checksum; /* XXH3 of magic and usage */
} ledger_t;

/* Filesystems one node cannot call its own: their contents are shared between nodes. */
static const struct {
    unsigned long magic;
    const char *name;
} shared_fs[] = {
    {0x6969, "NFS"},        {0x517B, "SMB"},       {0xFF534D42, "CIFS"},   {0xFE534D42, "SMB2"},
    {0x0BD00BD0, "Lustre"}, {0x47504653, "GPFS"},  {0x19830326, "BeeGFS"}, {0x00C36400, "CephFS"},
    {0x5346414F, "AFS"},    {0xAAD7AAEA, "PanFS"},
};

/* The name of a shared filesystem @p f lies on, or NULL (a node-local one). */
static const char *folder_shared_fs(int fd)
{
    struct statfs sf;
    if (ingot_fault_check(INGOT_FAULT_DISK_STATFS) != 0) {
        return "NFS"; /* tests: as a folder on NFS would say */
    }
    if (fstatfs(fd, &sf) != 0) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(shared_fs) / sizeof(shared_fs[0]); i++) {
        if ((unsigned long)sf.f_type == shared_fs[i].magic) {
            return shared_fs[i].name;
        }
    }
    return NULL;
}

/* mkdir -p of @p path: its missing parents FOLDER_PARENT_MODE, the folder INGOT_DISK_DIR_MODE (the
 * umask applies: the caller sets the folder's mode when *made_p); 0 or the errno. */
static int folder_mkdirs(const char *path, int shared, int *made_p)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    *made_p = 0;
    for (char *s = p + 1; *s != '\0'; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, FOLDER_PARENT_MODE(shared)) != 0 && errno != EEXIST) {
                return errno;
            }
            *s = '/';
        }
    }
    if (mkdir(p, INGOT_DISK_DIR_MODE(shared)) == 0) {
        *made_p = 1;
        return 0;
    }
    return errno == EEXIST ? 0 : errno;
}

/* Open the folder at f->path, never through a symbolic link, made when @p flags say so, and check
 * that it is to be trusted: INGOT_OK, or the status with @p why written. */
static ingot_status_t folder_open_dir(ingot_disk_folder_t *f, int flags, char *why, size_t whylen)
{
    int made = 0, shared = (flags & INGOT_DISK_FOLDER_SHARED) != 0;
    int err = flags & INGOT_DISK_FOLDER_CREATE ? folder_mkdirs(f->path, shared, &made) : 0;
    f->fd = err ? -1 : open(f->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    err = f->fd >= 0 ? 0 : err ? err : errno;
    if ((err == ELOOP || err == ENOTDIR) && ingot_disk_folder_link(f->path, why, whylen)) {
        return INGOT_ERR_PERMISSION;
    }
    if (err == 0 && made && fchmod(f->fd, INGOT_DISK_DIR_MODE(shared)) != 0) {
        err = errno; /* the umask took bits of the mode asked for */
    }
    if (err != 0) {
        snprintf(why, whylen, "folder '%s' cannot be used: %s", f->path, strerror(err));
        return err == ENOENT ? INGOT_ERR_NOT_FOUND : ingot_status_from_errno(err);
    }
    return ingot_disk_folder_trust(f->fd, f->path, shared, why, whylen);
}

/* The folder's ledger (INGOT_DISK_FILE_MODE exactly when made here), read-only; -1 with errno. */
static int folder_ledger(const ingot_disk_folder_t *f)
{
    mode_t mode = INGOT_DISK_FILE_MODE(f->shared);
    int fd = openat(f->fd, LEDGER_NAME, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 && fchmod(fd, mode) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd >= 0 || errno != EEXIST
               ? fd
               : openat(f->fd, LEDGER_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* Whether the folder takes a file: a probe written and removed; 0 or the errno. */
static int folder_probe(int fd)
{
    char name[64];
    int err = ingot_fault_check(INGOT_FAULT_DISK_FOLDER);
    if (err != 0) {
        return err;
    }
    snprintf(name, sizeof(name), ".probe.%ld", (long)getpid());
    int p = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (p < 0) {
        return errno;
    }
    err = write(p, "x", 1) == 1 ? 0 : errno;
    close(p);
    unlinkat(fd, name, 0);
    return err;
}

static ingot_status_t folder_fail(ingot_disk_folder_t *f, ingot_status_t st, char *why,
                                  size_t whylen, const char *fmt, const char *what)
{
    snprintf(why, whylen, fmt, f->path, what);
    ingot_disk_folder_close(f);
    return st;
}

ingot_status_t ingot_disk_folder_open(const char *path, int flags, uint64_t lock_timeout_ns,
                                      ingot_disk_folder_t *f, char *why, size_t whylen)
{
    *f = (ingot_disk_folder_t){.fd = -1,
                               .ledger_fd = -1,
                               .lock_timeout_ns = lock_timeout_ns,
                               .shared = (flags & INGOT_DISK_FOLDER_SHARED) != 0};
    pthread_mutex_init(&f->mutex, NULL);
    f->ready = 1;
    snprintf(f->path, sizeof(f->path), "%s", path);
    ingot_status_t st = folder_open_dir(f, flags, why, whylen);
    if (st != INGOT_OK) {
        ingot_disk_folder_close(f);
        return st;
    }
    if (!(flags & INGOT_DISK_FOLDER_CREATE)) { /* a tool's look at a folder as it is */
        f->ledger_fd = openat(f->fd, LEDGER_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        return INGOT_OK;
    }
    const char *fs = folder_shared_fs(f->fd);
    if (fs != NULL) {
        return folder_fail(f, INGOT_ERR_UNSUPPORTED, why, whylen,
                           "folder '%s' is on %s, a filesystem shared between nodes: the disk "
                           "tier needs a node-local one",
                           fs);
    }
    /* a full folder still serves what it holds: its room decides what it takes (room.c) */
    int err = folder_probe(f->fd);
    if (err != 0 && err != ENOSPC && err != EDQUOT) {
        return folder_fail(f, INGOT_ERR_PERMISSION, why, whylen, "folder '%s' takes no file: %s",
                           strerror(err));
    }
    /* read-only: held for its lock and reads; written through a descriptor of its own */
    f->ledger_fd = folder_ledger(f);
    if (f->ledger_fd < 0) {
        return folder_fail(f, ingot_status_from_errno(errno), why, whylen,
                           "folder '%s': its ledger cannot be opened: %s", strerror(errno));
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_folder_fs(const ingot_disk_folder_t *f, ingot_disk_fs_t *fs_p)
{
    struct statfs sf;
    if (fstatfs(f->fd, &sf) != 0) {
        return ingot_status_from_errno(errno);
    }
    *fs_p = (ingot_disk_fs_t){.size = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize,
                              .avail = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize};
    return INGOT_OK;
}

void ingot_disk_folder_close(ingot_disk_folder_t *f)
{
    if (f->ledger_fd >= 0) {
        close(f->ledger_fd);
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    f->fd = f->ledger_fd = -1;
    f->locked = 0;
    if (f->ready) {
        f->ready = 0;
        pthread_mutex_destroy(&f->mutex);
    }
}

ingot_status_t ingot_disk_ledger_lock(ingot_disk_folder_t *f)
{
    return ingot_disk_ledger_lock_until(f, ingot_deadline_after(f->lock_timeout_ns));
}

ingot_status_t ingot_disk_ledger_lock_until(ingot_disk_folder_t *f, uint64_t deadline)
{
    static _Atomic int said;
    if (f->ledger_fd < 0) {
        return ingot_fail(INGOT_ERR_PERMISSION, "disk tier: the ledger of '%s' cannot be opened",
                          f->path);
    }
    pthread_mutex_lock(&f->mutex);
    while (flock(f->ledger_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            pthread_mutex_unlock(&f->mutex);
            return ingot_fail(INGOT_ERR_IO, "disk tier: locking the ledger of '%s' failed: %s",
                              f->path, strerror(errno));
        }
        if (ingot_time_ns() >= deadline) {
            pthread_mutex_unlock(&f->mutex);
            if (atomic_exchange(&said, 1) == 0) {
                ingot_warn("disk tier: the ledger of '%s' stayed locked by another process for "
                           "INGOT_TIMEOUT; this fill is dropped (said once)",
                           f->path);
            }
            return INGOT_ERR_TIMED_OUT;
        }
        struct timespec ts = {0, (long)LOCK_POLL_NS};
        nanosleep(&ts, NULL);
    }
    f->locked = 1;
    return INGOT_OK;
}

void ingot_disk_ledger_unlock(ingot_disk_folder_t *f)
{
    if (f->locked) {
        f->locked = 0;
        flock(f->ledger_fd, LOCK_UN);
        pthread_mutex_unlock(&f->mutex);
    }
}

uint64_t ingot_disk_ledger_usage(ingot_disk_folder_t *f)
{
    ledger_t l;
    if (pread(f->ledger_fd, &l, sizeof(l), 0) != (ssize_t)sizeof(l) ||
        memcmp(l.magic, ledger_magic, sizeof(l.magic)) != 0 ||
        ingot_hash64(&l, offsetof(ledger_t, checksum)) != l.checksum) {
        return 0; /* new or damaged: the next scan writes it anew */
    }
    return l.usage;
}

void ingot_disk_ledger_set(ingot_disk_folder_t *f, uint64_t usage)
{
    ledger_t l = {.usage = usage};
    memcpy(l.magic, ledger_magic, sizeof(l.magic));
    l.checksum = ingot_hash64(&l, offsetof(ledger_t, checksum));
    /* Opened for this write alone: between fills no file of the folder is open for writing, so
     * its filesystem can be remounted read-only while a job runs (the kernel refuses that as
     * busy while a file on it is open for writing); the job then sees EROFS (room.c). */
    int fd = openat(f->fd, LEDGER_NAME, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || pwrite(fd, &l, sizeof(l), 0) != (ssize_t)sizeof(l)) {
        ingot_debug("disk tier: the ledger of '%s' was not written: %s", f->path, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
}

void ingot_disk_ledger_add(ingot_disk_folder_t *f, int64_t delta)
{
    uint64_t u = ingot_disk_ledger_usage(f);
    uint64_t d = delta < 0 ? 0 - (uint64_t)delta : (uint64_t)delta; /* -INT64_MIN is no int64 */
    if (delta < 0) {
        u = d > u ? 0 : u - d;
    } else {
        u = d > UINT64_MAX - u ? UINT64_MAX : u + d;
    }
    ingot_disk_ledger_set(f, u);
}

/* One file of fan-out folder @p dirname (open as @p dfd). */
static void scan_file(ingot_disk_folder_t *f, int dfd, const char *dirname, const char *name,
                      int clean, ingot_disk_found_fn_t fn, void *arg, ingot_disk_scan_t *s)
{
    ingot_disk_found_t e;
    int kind = ingot_disk_entry_parse(dirname, name, &e.key);
    struct stat sb;
    if (kind < 0) {
        s->strangers++;
    } else if (kind == 1) {
        char path[300];
        snprintf(path, sizeof(path), "%s/%s", dirname, name);
        int orphan = ingot_disk_entry_clean_fill(f->fd, path, clean);
        s->orphans += (orphan == 1);
        s->fills_live += (orphan != 1);
    } else if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode)) {
        e.bytes = (uint64_t)sb.st_size;
        e.mtime_ns = (uint64_t)sb.st_mtim.tv_sec * INGOT_NSEC_PER_SEC +
                     (uint64_t)sb.st_mtim.tv_nsec;
        s->entries++;
        s->bytes += e.bytes;
        if (fn != NULL) {
            fn(arg, &e);
        }
    }
}

/* Every file of fan-out folder @p name. */
static ingot_status_t scan_dir(ingot_disk_folder_t *f, const char *name, int clean,
                               ingot_disk_found_fn_t fn, void *arg, ingot_disk_scan_t *s)
{
    int dfd = openat(f->fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (d == NULL) {
        if (dfd >= 0) {
            close(dfd);
        }
        return errno == ENOENT ? INGOT_OK
                               : ingot_fail(INGOT_ERR_IO,
                                            "disk tier: folder '%s/%s' "
                                            "cannot be listed: %s",
                                            f->path, name, strerror(errno));
    }
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] != '.') {
            scan_file(f, dfd, name, de->d_name, clean, fn, arg, s);
        }
    }
    closedir(d);
    return INGOT_OK;
}

static int is_fan_out(const char *n)
{
    const char *hex = "0123456789abcdef";
    return strlen(n) == 2 && strchr(hex, n[0]) != NULL && strchr(hex, n[1]) != NULL;
}

ingot_status_t ingot_disk_folder_scan(ingot_disk_folder_t *f, int clean, ingot_disk_found_fn_t fn,
                                      void *arg, ingot_disk_scan_t *scan_p)
{
    memset(scan_p, 0, sizeof(*scan_p));
    int top = dup(f->fd);
    DIR *d = top >= 0 ? fdopendir(top) : NULL;
    if (d == NULL) {
        if (top >= 0) {
            close(top);
        }
        return ingot_fail(INGOT_ERR_IO, "disk tier: folder '%s' cannot be listed: %s", f->path,
                          strerror(errno));
    }
    rewinddir(d);
    ingot_status_t st = INGOT_OK;
    for (struct dirent *de; st == INGOT_OK && (de = readdir(d)) != NULL;) {
        if (is_fan_out(de->d_name)) {
            st = scan_dir(f, de->d_name, clean, fn, arg, scan_p);
        }
    }
    closedir(d);
    return st;
}

uint64_t ingot_disk_folder_remove(ingot_disk_folder_t *f, const ingot_disk_key_t *key)
{
    char name[INGOT_DISK_NAME_MAX];
    struct stat sb;
    ingot_disk_entry_name(key, 0, name, sizeof(name));
    int fd = openat(f->fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    uint64_t gone = 0;
    if (fd >= 0 && fstat(fd, &sb) == 0 && unlinkat(f->fd, name, 0) == 0) {
        /* Emptied once unlinked: other processes keep entries open (fdcache.c) and would hold
         * its blocks until they let go; the disk is full sooner than the ledger says. */
        gone = (uint64_t)sb.st_size;
        (void)!ftruncate(fd, 0);
    }
    if (fd >= 0) {
        close(fd);
    }
    return gone;
}
