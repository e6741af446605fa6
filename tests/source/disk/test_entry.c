/*
 * The disk tier's entries and folder, without MPI: names, the sealed header, writes (atomic,
 * exclusive, one writer per piece; a fill written, then published), reads checked block by block,
 * every kind of damage caught (truncated, extended, a flipped byte, a damaged header, an older
 * format, a renamed entry), temporaries of dead writers removed but never a live one's, the
 * ledger, the scan, an entry removed under its reader (emptied), an assembled entry (format 2, its
 * layout) and the keeper's assembly file, and the folder refused when
 * read-only (fault site) or on a filesystem shared between nodes (statfs), but not when full (its
 * filesystem measured); what it makes has its modes whatever the umask, and folders not to be
 * trusted (writable by a group or others, a symbolic link, a fan-out folder that is a file or a
 * link) are refused, saying why.
 */
#include "common/test.h"
#include "source/disk/folder.h"
#include "base/fault.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG2  16 /* 64 KiB pieces of 16 blocks of 4 KiB (the smallest block) */
#define PIECE (1u << LOG2)
#define BUF   (INGOT_DISK_HEADER_BYTES + PIECE + 8192)

static uint8_t *bounce, *entry;
static char why[1024];

static ingot_disk_key_t key_of(uint64_t piece)
{
    return (ingot_disk_key_t){0xab12cd34ef560789ull, piece, LOG2};
}

/* An entry of @p len bytes for @p piece in the folder. */
static void put(ingot_disk_folder_t *f, uint64_t piece, uint64_t len)
{
    ingot_disk_key_t k = key_of(piece);
    for (uint64_t i = 0; i < len; i++) {
        entry[INGOT_DISK_HEADER_BYTES + i] = (uint8_t)(i * 7 + piece);
    }
    ingot_disk_entry_seal(entry, &k, len, 0);
    CHECK_OK(ingot_disk_entry_write(f->fd, &k, entry, len, f->shared, why, sizeof(why)));
}

static ingot_status_t get(ingot_disk_folder_t *f, uint64_t piece, uint64_t len, uint64_t off,
                          uint64_t n, ingot_disk_bad_t *bad)
{
    ingot_disk_key_t k = key_of(piece);
    const uint8_t *data = NULL;
    ingot_status_t st = ingot_disk_entry_read(f->fd, &k, len, off, n, bounce, 0, &data, bad);
    for (uint64_t i = 0; st == INGOT_OK && i < n; i++) {
        CHECK(data[i] == (uint8_t)((off + i) * 7 + piece));
    }
    return st;
}

static void path_of(const ingot_disk_folder_t *f, uint64_t piece, int fill, char *buf, size_t n)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_key_t k = key_of(piece);
    ingot_disk_entry_name(&k, fill, name, sizeof(name));
    snprintf(buf, n, "%s/%s", f->path, name);
}

static void test_names(void)
{
    ingot_disk_key_t k = key_of(42), back;
    char name[INGOT_DISK_NAME_MAX], dir[3] = {0};
    ingot_disk_entry_name(&k, 0, name, sizeof(name));
    memcpy(dir, name, 2);
    CHECK(ingot_disk_entry_parse(dir, name + 3, &back) == 0);
    CHECK(back.shard_hash == k.shard_hash && back.piece == 42 && back.piece_log2 == LOG2);
    ingot_disk_entry_name(&k, 1, name, sizeof(name));
    CHECK(ingot_disk_entry_parse(dir, name + 3, &back) == 1);
    CHECK(ingot_disk_entry_parse("00", name + 3, &back) == -1); /* not where its name says */
    CHECK(ingot_disk_entry_parse(dir, "ledger", &back) == -1);
    CHECK(ingot_disk_block_bytes(20) == 4096 && ingot_disk_block_bytes(26) == (1u << 18));
}

/* Damage piece @p piece's file at byte @p at (flip) or cut it to @p size. */
static void flip(ingot_disk_folder_t *f, uint64_t piece, off_t at)
{
    char p[PATH_MAX + 64];
    path_of(f, piece, 0, p, sizeof(p));
    int fd = open(p, O_RDWR);
    uint8_t c;
    CHECK(fd >= 0 && pread(fd, &c, 1, at) == 1);
    c ^= 0x40;
    CHECK(pwrite(fd, &c, 1, at) == 1);
    close(fd);
}

static void test_damage(ingot_disk_folder_t *f)
{
    ingot_disk_bad_t bad;
    char p[PATH_MAX + 64];
    put(f, 1, PIECE);
    CHECK_OK(get(f, 1, PIECE, 0, PIECE, &bad));
    CHECK_OK(get(f, 1, PIECE, 5000, 100, &bad)); /* one block read and checked */
    CHECK_STATUS(get(f, 1, PIECE - 1, 0, 10, &bad), INGOT_ERR_CORRUPT); /* not the length asked */
    flip(f, 1, INGOT_DISK_HEADER_BYTES + 9000);                         /* block 2 */
    CHECK_OK(get(f, 1, PIECE, 0, 4096, &bad)); /* blocks not touched are not read */
    CHECK_STATUS(get(f, 1, PIECE, 8192, 10, &bad), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(bad.why, "block 2");
    put(f, 2, 10000);
    path_of(f, 2, 0, p, sizeof(p));
    CHECK(truncate(p, INGOT_DISK_HEADER_BYTES + 5000) == 0);
    CHECK_STATUS(get(f, 2, 10000, 0, 10, &bad), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(bad.why, "truncated");
    put(f, 3, 10000);
    flip(f, 3, 40); /* the header's length */
    CHECK_STATUS(get(f, 3, 10000, 0, 10, &bad), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(bad.why, "checksum");
    put(f, 4, 10000);
    flip(f, 4, 8); /* the version: an older (or newer) format is refused, never misread */
    CHECK_STATUS(get(f, 4, 10000, 0, 10, &bad), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(bad.why, "format version");
    char q[PATH_MAX + 64]; /* an entry under another piece's name */
    put(f, 5, 10000);
    path_of(f, 5, 0, p, sizeof(p));
    path_of(f, 6, 0, q, sizeof(q));
    CHECK(rename(p, q) == 0);
    CHECK_STATUS(get(f, 6, 10000, 0, 10, &bad), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(bad.why, "not what its name says");
    CHECK_STATUS(get(f, 7, 10000, 0, 10, &bad), INGOT_ERR_NOT_FOUND);
    uint64_t len;
    CHECK_STATUS(ingot_disk_entry_check(f->fd, &(ingot_disk_key_t){key_of(1).shard_hash, 1, LOG2},
                                        PIECE, bounce, &len, &bad),
                 INGOT_ERR_CORRUPT);
}

/* A writer that holds piece @p piece's temporary (child process), then is killed or not. */
static pid_t hold_fill(ingot_disk_folder_t *f, uint64_t piece)
{
    char p[PATH_MAX + 64];
    path_of(f, piece, 1, p, sizeof(p));
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(ready[1], "x", 1) != 1) {
            _exit(1);
        }
        pause();
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    close(ready[1]);
    return pid;
}

static void test_writers(ingot_disk_folder_t *f)
{
    ingot_disk_key_t k = key_of(20);
    char p[PATH_MAX + 64];
    ingot_disk_entry_seal(entry, &k, 100, 0);
    pid_t live = hold_fill(f, 20); /* another job fills piece 20 right now */
    CHECK_STATUS(ingot_disk_entry_write(f->fd, &k, entry, 100, 0, why, sizeof(why)),
                 INGOT_ERR_EXISTS);
    pid_t dead = hold_fill(f, 21);
    kill(dead, SIGKILL); /* kill -9 during a fill: its temporary is an orphan */
    waitpid(dead, NULL, 0);
    ingot_disk_scan_t scan;
    CHECK_OK(ingot_disk_folder_scan(f, 1, NULL, NULL, &scan));
    CHECK(scan.orphans == 1 && scan.fills_live == 1);
    path_of(f, 21, 1, p, sizeof(p));
    CHECK(access(p, F_OK) != 0);
    path_of(f, 20, 1, p, sizeof(p));
    CHECK(access(p, F_OK) == 0); /* a live writer's is never removed */
    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
    put(f, 20, PIECE); /* its orphan in the way is removed by the next writer */
    CHECK(access(p, F_OK) != 0);
    CHECK_STATUS(ingot_disk_entry_write(f->fd, &k, entry, 100, 0, why, sizeof(why)),
                 INGOT_ERR_EXISTS);
}

/* An assembled entry (INGOT_DISK_CACHE_FILL=parts): format version 2 carrying its layout, read
 * and checked like any other; a header claiming version 2 without a layout, or a layout under
 * version 1, fails its check. The keeper's assembly file, a temporary held open and locked, is a
 * live writer's to a scan until its holder is gone, then an orphan. */
static void test_assembled(ingot_disk_folder_t *f)
{
    ingot_disk_key_t k = key_of(30);
    ingot_disk_bad_t bad;
    ingot_disk_open_t o;
    for (uint64_t i = 0; i < PIECE; i++) {
        entry[INGOT_DISK_HEADER_BYTES + i] = (uint8_t)(i * 7 + 30);
    }
    ingot_disk_entry_seal(entry, &k, PIECE, 0x5eed);
    uint32_t version;
    memcpy(&version, entry + 8, sizeof(version));
    CHECK(version == INGOT_DISK_ENTRY_ASSEMBLED);
    CHECK_OK(ingot_disk_entry_write(f->fd, &k, entry, PIECE, 0, why, sizeof(why)));
    CHECK_OK(get(f, 30, PIECE, 100, 5000, &bad));
    CHECK_OK(ingot_disk_entry_open(f->fd, &k, PIECE, 0, &o, &bad));
    CHECK(o.layout == 0x5eed);
    ingot_disk_entry_close(&o);
    CHECK(ingot_disk_folder_remove(f, &k) == INGOT_DISK_HEADER_BYTES + PIECE);
    put(f, 31, 100); /* written whole: version 1, no layout */
    CHECK_OK(ingot_disk_entry_open(f->fd, &(ingot_disk_key_t){key_of(31).shard_hash, 31, LOG2}, 100,
                                   0, &o, &bad));
    CHECK(o.layout == 0);
    ingot_disk_entry_close(&o);
    uint64_t len;
    uint32_t block;
    ingot_disk_entry_seal(entry, &k, 100, 0x5eed);
    version = INGOT_DISK_ENTRY_VERSION; /* the layout of an assembled entry under version 1 */
    memcpy(entry + 8, &version, sizeof(version));
    CHECK_STATUS(ingot_disk_entry_head_check(entry, &k, 100, &len, &block, &bad),
                 INGOT_ERR_CORRUPT);
    ingot_disk_entry_seal(entry, &k, 100, 0);
    version = INGOT_DISK_ENTRY_ASSEMBLED; /* version 2 without a layout */
    memcpy(entry + 8, &version, sizeof(version));
    CHECK_STATUS(ingot_disk_entry_head_check(entry, &k, 100, &len, &block, &bad),
                 INGOT_ERR_CORRUPT);
    /* the assembly file */
    ingot_disk_key_t a = key_of(32);
    int fd = ingot_disk_entry_temp(f->fd, &a, 0);
    CHECK(fd >= 0);
    CHECK(pwrite(fd, "part", 4, 3 * PIECE + 10) == 4); /* a slot's part, past what went before */
    ingot_disk_scan_t scan;
    CHECK_OK(ingot_disk_folder_scan(f, 1, NULL, NULL, &scan));
    CHECK(scan.fills_live == 1 && scan.orphans == 0);
    CHECK(ingot_disk_entry_temp(f->fd, &a, 0) < 0 && errno == EEXIST); /* one holder */
    close(fd);
    CHECK_OK(ingot_disk_folder_scan(f, 1, NULL, NULL, &scan));
    CHECK(scan.fills_live == 0 && scan.orphans == 1);
}

/* A fill written and not yet published is a live writer's temporary to a scan, no entry and no
 * orphan (the keeper publishes it, and counts it, under the ledger's lock); published, an entry. */
static void test_fill_publish(ingot_disk_folder_t *f)
{
    ingot_disk_key_t k = key_of(22);
    ingot_disk_fill_t fill;
    ingot_disk_scan_t before, scan;
    CHECK_OK(ingot_disk_folder_scan(f, 0, NULL, NULL, &before));
    ingot_disk_entry_seal(entry, &k, 100, 0);
    CHECK_OK(ingot_disk_entry_fill(f->fd, &k, entry, 100, 0, &fill, why, sizeof(why)));
    CHECK_OK(ingot_disk_folder_scan(f, 1, NULL, NULL, &scan));
    CHECK(scan.entries == before.entries && scan.fills_live == before.fills_live + 1 &&
          scan.orphans == 0);
    CHECK_OK(ingot_disk_entry_publish(f->fd, &fill, why, sizeof(why)));
    CHECK_OK(ingot_disk_folder_scan(f, 1, NULL, NULL, &scan));
    CHECK(scan.entries == before.entries + 1 && scan.fills_live == before.fills_live &&
          scan.bytes == before.bytes + INGOT_DISK_HEADER_BYTES + 100);
    CHECK(ingot_disk_folder_remove(f, &k) == INGOT_DISK_HEADER_BYTES + 100);
}

static void test_ledger(ingot_disk_folder_t *f)
{
    ingot_disk_scan_t scan;
    CHECK_OK(ingot_disk_ledger_lock(f));
    CHECK(ingot_disk_ledger_usage(f) == 0);
    CHECK_OK(ingot_disk_folder_scan(f, 0, NULL, NULL, &scan));
    ingot_disk_ledger_set(f, scan.bytes);
    ingot_disk_ledger_add(f, -1000);
    CHECK(ingot_disk_ledger_usage(f) == scan.bytes - 1000);
    ingot_disk_key_t k = key_of(20);
    CHECK(ingot_disk_folder_remove(f, &k) == INGOT_DISK_HEADER_BYTES + PIECE);
    CHECK(ingot_disk_folder_remove(f, &k) == 0);
    ingot_disk_ledger_unlock(f);
}

/* An entry removed while a reader holds it open: emptied, so its blocks are free at once (not when
 * the reader lets go), and the reader's next read of it falls short, its name gone. */
static void test_remove_open(ingot_disk_folder_t *f)
{
    ingot_disk_key_t k = key_of(21);
    ingot_disk_open_t o;
    ingot_disk_bad_t bad;
    struct stat sb;
    size_t shift;
    put(f, 21, PIECE);
    CHECK_OK(ingot_disk_entry_open(f->fd, &k, PIECE, 0, &o, &bad));
    CHECK(ingot_disk_folder_remove(f, &k) == INGOT_DISK_HEADER_BYTES + PIECE);
    CHECK(fstat(o.fd, &sb) == 0 && sb.st_nlink == 0 && sb.st_size == 0 && sb.st_blocks == 0);
    CHECK_STATUS(ingot_disk_entry_blocks(&o, 0, 100, bounce, PIECE, &shift, &bad),
                 INGOT_ERR_CORRUPT);
    ingot_disk_entry_close(&o);
}

static void test_folders(const char *root)
{
    char path[1024];
    ingot_disk_folder_t f;
    snprintf(path, sizeof(path), "%s/a/b/c", root);
    CHECK_OK(ingot_disk_folder_open(path, 1, 1000000000ull, &f, why, sizeof(why)));
    ingot_disk_folder_close(&f);
    snprintf(path, sizeof(path), "%s/missing", root);
    CHECK_STATUS(ingot_disk_folder_open(path, 0, 0, &f, why, sizeof(why)), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(why, "missing");
    if (!INGOT_FAULT_ENABLED) {
        return;
    }
    char err[256];
    snprintf(path, sizeof(path), "%s/a", root);
    CHECK_OK(ingot_fault_arm("disk_folder:1:EROFS", err, sizeof(err)));
    CHECK_STATUS(ingot_disk_folder_open(path, 1, 0, &f, why, sizeof(why)), INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "Read-only file system");
    /* a full folder is usable: it serves what it holds, its room says what it takes */
    CHECK_OK(ingot_fault_arm("disk_folder:1:ENOSPC", err, sizeof(err)));
    CHECK_OK(ingot_disk_folder_open(path, 1, 0, &f, why, sizeof(why)));
    ingot_disk_fs_t fs;
    CHECK_OK(ingot_disk_folder_fs(&f, &fs));
    CHECK(fs.size > 0 && fs.avail <= fs.size);
    ingot_disk_folder_close(&f);
    CHECK_OK(ingot_fault_arm("disk_statfs:1:fail", err, sizeof(err)));
    CHECK_STATUS(ingot_disk_folder_open(path, 1, 0, &f, why, sizeof(why)), INGOT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(why, "NFS");
    CHECK_OK(ingot_fault_arm("disk_write:1:ENOSPC", err, sizeof(err)));
    CHECK_OK(ingot_disk_folder_open(path, 1, 0, &f, why, sizeof(why)));
    ingot_disk_key_t k = key_of(30);
    ingot_disk_entry_seal(entry, &k, 100, 0);
    CHECK_STATUS(ingot_disk_entry_write(f.fd, &k, entry, 100, 0, why, sizeof(why)),
                 INGOT_ERR_NO_RESOURCE);
    ingot_disk_scan_t scan; /* nothing left behind */
    CHECK_OK(ingot_disk_folder_scan(&f, 0, NULL, NULL, &scan));
    CHECK(scan.entries == 0 && scan.fills_live == 0);
    ingot_disk_folder_close(&f);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
}

/* @p path's mode bits (07777). */
static unsigned mode_of(const char *path)
{
    struct stat sb;
    CHECK(lstat(path, &sb) == 0);
    return (unsigned)(sb.st_mode & 07777);
}

/* What the tier makes, whatever the umask (0 adds nothing, 022 takes no bit a shared folder
 * needs): a user's own 0700 and 0600, a group's 2770 and 0660. */
static void test_modes(const char *root, int shared)
{
    char path[1024], file[1100];
    ingot_disk_folder_t f;
    mode_t old = umask(shared ? 022 : 0);
    snprintf(path, sizeof(path), "%s/modes%d/cache", root, shared);
    int flags = INGOT_DISK_FOLDER_CREATE | (shared ? INGOT_DISK_FOLDER_SHARED : 0);
    CHECK_OK(ingot_disk_folder_open(path, flags, 1000000000ull, &f, why, sizeof(why)));
    put(&f, 40, 100);
    CHECK(mode_of(path) == INGOT_DISK_DIR_MODE(shared));
    snprintf(file, sizeof(file), "%s/ledger", path);
    CHECK(mode_of(file) == INGOT_DISK_FILE_MODE(shared));
    path_of(&f, 40, 0, file, sizeof(file));
    CHECK(mode_of(file) == INGOT_DISK_FILE_MODE(shared));
    *strrchr(file, '/') = '\0';
    CHECK(mode_of(file) == INGOT_DISK_DIR_MODE(shared));
    *strrchr(path, '/') = '\0'; /* the missing parent made */
    CHECK(mode_of(path) == (shared ? 0711u : 0700u));
    ingot_disk_folder_close(&f);
    umask(old);
}

/* Folders not to be trusted: refused, saying what is wrong, the owner and the mode. */
static void test_trust(const char *root)
{
    char path[1024], fan[1100];
    ingot_disk_folder_t f;
    snprintf(path, sizeof(path), "%s/trust", root);
    CHECK_OK(ingot_disk_folder_open(path, INGOT_DISK_FOLDER_CREATE, 0, &f, why, sizeof(why)));
    ingot_disk_folder_close(&f);
    CHECK(chmod(path, 0770) == 0);
    CHECK_STATUS(ingot_disk_folder_open(path, 0, 0, &f, why, sizeof(why)), INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "it is writable by its group (owner uid");
    CHECK_CONTAINS(why, "mode 0770)");
    /* shared: a folder of this user's that a group of its own writes */
    CHECK_OK(ingot_disk_folder_open(path, INGOT_DISK_FOLDER_SHARED, 0, &f, why, sizeof(why)));
    ingot_disk_folder_close(&f);
    CHECK(chmod(path, 0757) == 0); /* but never writable by others */
    CHECK_STATUS(ingot_disk_folder_open(path, INGOT_DISK_FOLDER_SHARED, 0, &f, why, sizeof(why)),
                 INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "it is writable by others");
    CHECK(chmod(path, 0700) == 0);
    snprintf(fan, sizeof(fan), "%s/7f", path); /* a fan-out folder's name, a file's */
    close(open(fan, O_WRONLY | O_CREAT, 0600));
    CHECK_STATUS(ingot_disk_folder_open(path, 0, 0, &f, why, sizeof(why)), INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "its fan-out folder '7f' is not a folder");
    CHECK(unlink(fan) == 0 && symlink(path, fan) == 0);
    CHECK_STATUS(ingot_disk_folder_open(path, 0, 0, &f, why, sizeof(why)), INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "its fan-out folder '7f' is a symbolic link");
    CHECK(unlink(fan) == 0);
    snprintf(fan, sizeof(fan), "%s/link", root); /* a link to it, never followed */
    CHECK(symlink(path, fan) == 0);
    CHECK_STATUS(ingot_disk_folder_open(fan, INGOT_DISK_FOLDER_CREATE, 0, &f, why, sizeof(why)),
                 INGOT_ERR_PERMISSION);
    CHECK_CONTAINS(why, "it is a symbolic link to '");
}

int main(void)
{
    const char *root = test_tmpdir();
    char path[1024];
    bounce = aligned_alloc(4096, BUF);
    entry = aligned_alloc(4096, BUF);
    CHECK(bounce != NULL && entry != NULL);
    test_names();
    ingot_disk_folder_t f;
    snprintf(path, sizeof(path), "%s/cache", root);
    CHECK_OK(ingot_disk_folder_open(path, 1, 1000000000ull, &f, why, sizeof(why)));
    test_damage(&f);
    test_writers(&f);
    test_fill_publish(&f);
    test_assembled(&f);
    test_ledger(&f);
    test_remove_open(&f);
    ingot_disk_folder_close(&f);
    test_folders(root);
    test_modes(root, 0);
    test_modes(root, 1);
    test_trust(root);
    free(bounce);
    free(entry);
    printf("disk entries: ok\n");
    return 0;
}
