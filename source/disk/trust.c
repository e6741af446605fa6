/*
 * Whether the disk tier's folder is this user's to trust (folder.h): the folder and its fan-out
 * folders real folders, owned by the effective user and writable by no one else; a group's folder
 * when sharing is asked for (INGOT_DISK_CACHE_SHARED). When one is not: what is wrong, its owner
 * and its mode, for the one warning that turns the tier off.
 */
#include "source/disk/folder.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRUST_FANS   256  /* fan-out folders, "00" to "ff" */
#define TRUST_PW_BUF 4096 /* getpwuid_r's scratch */
#define TRUST_WRONG  3    /* what can be wrong with one folder at once */

/* Whether @p gid is this process's effective group or one of its supplementary groups. */
static int trust_member(gid_t gid)
{
    if (getegid() == gid) {
        return 1;
    }
    int n = getgroups(0, NULL), in = 0;
    gid_t *g = n > 0 ? calloc((size_t)n, sizeof(gid_t)) : NULL;
    n = g != NULL ? getgroups(n, g) : 0;
    for (int i = 0; i < n; i++) {
        in |= g[i] == gid;
    }
    free(g);
    return in;
}

/* Shared (INGOT_DISK_CACHE_SHARED): what is wrong with the folder @p sb, or with a fan-out folder
 * of the folder @p top, beyond being writable by others. */
static int trust_wrong_shared(const struct stat *sb, const struct stat *top, const char **wrong)
{
    int mine = sb->st_uid == geteuid(), gw = (sb->st_mode & S_IWGRP) != 0, n = 0;
    if (top != NULL) { /* the folder's group is trusted: a fan-out folder of its group */
        if ((!mine || gw) && sb->st_gid != top->st_gid) {
            wrong[n++] = "of another group than its folder's";
        }
        return n;
    }
    if (gw && !trust_member(sb->st_gid)) {
        wrong[n++] = "writable by a group this user is not in";
    } else if (!mine && !(gw && (sb->st_mode & S_ISGID))) {
        wrong[n++] = "owned by another user and not a set-group-ID folder its group writes";
    }
    return n;
}

/* What is wrong with folder @p sb (a fan-out folder of @p top when not NULL) into @p wrong; how
 * many things. */
static int trust_wrong(const struct stat *sb, int shared, const struct stat *top,
                       const char **wrong)
{
    int n = 0;
    if (S_ISLNK(sb->st_mode)) {
        wrong[n++] = "a symbolic link";
        return n;
    }
    if (!S_ISDIR(sb->st_mode)) {
        wrong[n++] = "not a folder";
        return n;
    }
    if (shared) {
        n = trust_wrong_shared(sb, top, wrong);
    } else {
        if (sb->st_uid != geteuid()) {
            wrong[n++] = "owned by another user";
        }
        if (sb->st_mode & S_IWGRP) {
            wrong[n++] = "writable by its group";
        }
    }
    if (sb->st_mode & S_IWOTH) {
        wrong[n++] = "writable by others";
    }
    return n;
}

/* "uid 65534 (nobody)", or "uid 1234" when the user has no name here. */
static void trust_owner(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char scratch[TRUST_PW_BUF];
    if (getpwuid_r(uid, &pw, scratch, sizeof(scratch), &found) == 0 && found != NULL) {
        snprintf(buf, len, "uid %u (%s)", (unsigned)uid, found->pw_name);
    } else {
        snprintf(buf, len, "uid %u", (unsigned)uid);
    }
}

/* The warning's text: folder @p path (its fan-out folder @p fan when not NULL) is @p what. */
static ingot_status_t trust_refuse(const char *path, const char *fan, const char *what,
                                   const struct stat *sb, char *why, size_t whylen)
{
    char owner[128];
    trust_owner(sb->st_uid, owner, sizeof(owner));
    snprintf(why, whylen,
             "folder '%s' is not this user's to trust: %s%s%s is %s (owner %s, mode %04o); the "
             "disk tier takes only a real folder of this user's that no one else can write "
             "(with INGOT_DISK_CACHE_SHARED=y, a set-group-ID folder a group of this user's "
             "writes)",
             path, fan ? "its fan-out folder '" : "it", fan ? fan : "", fan ? "'" : "", what, owner,
             (unsigned)(sb->st_mode & 07777));
    return INGOT_ERR_PERMISSION;
}

/* Check one folder's stat: INGOT_OK, or the refusal. */
static ingot_status_t trust_check(const char *path, const char *fan, const struct stat *sb,
                                  int shared, const struct stat *top, char *why, size_t whylen)
{
    const char *wrong[TRUST_WRONG];
    int n = trust_wrong(sb, shared, top, wrong);
    if (n == 0) {
        return INGOT_OK;
    }
    char what[256];
    size_t o = 0;
    for (int i = 0; i < n && o < sizeof(what); i++) {
        o += (size_t)snprintf(what + o, sizeof(what) - o, "%s%s", i ? ", " : "", wrong[i]);
    }
    return trust_refuse(path, fan, what, sb, why, whylen);
}

ingot_status_t ingot_disk_folder_trust(int fd, const char *path, int shared, char *why,
                                       size_t whylen)
{
    struct stat top, sb;
    if (fstat(fd, &top) != 0) {
        int err = errno;
        snprintf(why, whylen, "folder '%s' cannot be used: %s", path, strerror(err));
        return ingot_status_from_errno(err);
    }
    ingot_status_t st = trust_check(path, NULL, &top, shared, NULL, why, whylen);
    for (unsigned i = 0; st == INGOT_OK && i < TRUST_FANS; i++) {
        char fan[3];
        snprintf(fan, sizeof(fan), "%02x", i);
        if (fstatat(fd, fan, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
            st = trust_check(path, fan, &sb, shared, &top, why, whylen);
        }
    }
    return st;
}

int ingot_disk_folder_link(const char *path, char *why, size_t whylen)
{
    struct stat sb;
    char target[PATH_MAX] = "", what[PATH_MAX + 32];
    if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode)) {
        return 0;
    }
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    snprintf(what, sizeof(what), "a symbolic link to '%s'", target);
    trust_refuse(path, NULL, what, &sb, why, whylen);
    return 1;
}
