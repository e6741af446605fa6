/*
 * ImageFolder importer (include/ingot/pack.h): torchvision's `root/<class>/<image>` layout to
 * samples of an image member and a `cls` member (the class index; the manifest builder makes it
 * the label). Classes are the root's subdirectories sorted bytewise; a class folder is walked
 * recursively by the directory importer's walk (sorted paths, links not followed). The whole
 * tree is checked first (non-images, empty classes, shared keys), names only, so a bad tree
 * fails before anything is packed; then each class is walked again and its images read.
 */
#include "shard/import.h"
#include "shard/replace.h"
#include "shard/tar.h"
#include "base/log.h"
#include "base/param.h"
#include "base/status.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/** Longest class index as decimal text, with its NUL. */
#define FOLDER_LABEL_MAX 12

typedef struct folder {
    const char *root;
    int skip_non_images, allow_empty;
    ingot_image_folder_info_t info;
} folder_t;

static int folder_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when @p path's file name ends in an image extension (any case). */
static int folder_is_image(const char *path)
{
    static const char *const ext[] = {"jpg", "jpeg", "png", "ppm", "pgm", "pnm"};
    const char *base = strrchr(path, '/'), *dot = strrchr(base ? base + 1 : path, '.');
    for (size_t i = 0; dot != NULL && i < sizeof(ext) / sizeof(ext[0]); i++) {
        if (strcasecmp(dot + 1, ext[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static ingot_status_t folder_add_class(folder_t *f, const char *name, uint32_t *cap)
{
    ingot_image_folder_info_t *in = &f->info;
    if (in->class_count == *cap) {
        uint32_t n = *cap ? *cap * 2 : 64;
        char **c = realloc(in->classes, n * sizeof(*c));
        if (c == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory listing classes", f->root);
        }
        in->classes = c;
        *cap = n;
    }
    if ((in->classes[in->class_count] = strdup(name)) == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory listing classes", f->root);
    }
    in->class_count++;
    return INGOT_OK;
}

/* The root's subdirectories, sorted; its files counted (ignored). */
static ingot_status_t folder_classes(folder_t *f)
{
    DIR *d = opendir(f->root);
    if (d == NULL) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: %s", f->root, strerror(errno));
    }
    ingot_status_t st = INGOT_OK;
    uint32_t cap = 0;
    struct dirent *e;
    char path[PATH_MAX];
    while (st == INGOT_OK && (e = readdir(d)) != NULL) {
        struct stat sb;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", f->root, e->d_name);
        if (lstat(path, &sb) != 0) {
            st = ingot_fail(ingot_status_from_errno(errno), "%s: %s", path, strerror(errno));
        } else if (S_ISDIR(sb.st_mode)) {
            st = folder_add_class(f, e->d_name, &cap);
        } else {
            f->info.outside++; /* in no class: ignored, as torchvision does */
        }
    }
    closedir(d);
    if (st == INGOT_OK && f->info.class_count == 0) {
        st = ingot_fail(INGOT_ERR_FORMAT,
                        "%s: no class folder: an ImageFolder is ROOT/<class>/<image> (classes are "
                        "the root's subdirectories)",
                        f->root);
    }
    if (st == INGOT_OK) {
        qsort(f->info.classes, f->info.class_count, sizeof(char *), folder_cmp);
    }
    return st;
}

/* Key of @p path (below the root): up to the first dot of its file name. */
static size_t folder_key_len(const char *rel)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    const char *dot = strchr(base, '.');
    return dot ? (size_t)(dot - rel) : strlen(rel);
}

/* Class @p c's files, names only: the rules of ingot_import_image_folder(). */
static ingot_status_t folder_check_class(folder_t *f, uint32_t c, char **paths, size_t n)
{
    size_t dl = strlen(f->root) + 1, images = 0;
    const char *last = NULL; /* the last image's path below the root */
    for (size_t i = 0; i < n; i++) {
        const char *rel = paths[i] + dl;
        if (!folder_is_image(rel)) {
            if (!f->skip_non_images) {
                return ingot_fail(INGOT_ERR_FORMAT,
                                  "%s: not an image (an image's name ends in .jpg, .jpeg, .png, "
                                  ".ppm, .pgm or .pnm, any case): move it out of the class "
                                  "folder, or pass --skip-non-images to leave such files out",
                                  paths[i]);
            }
            f->info.skipped++;
            continue;
        }
        size_t kl = folder_key_len(rel);
        if (last != NULL && folder_key_len(last) == kl && strncmp(last, rel, kl) == 0) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "%s/%s and %s: two images with one key '%.*s' (a sample's key is "
                              "its path up to the first dot of its name): rename one",
                              f->root, last, paths[i], (int)kl, rel);
        }
        last = rel;
        images++;
    }
    if (images == 0 && !f->allow_empty) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s/%s: class folder without images (class %u of %u): remove it, add "
                          "images, or pass --allow-empty-classes to keep its index",
                          f->root, f->info.classes[c], c, f->info.class_count);
    }
    f->info.empty += images == 0;
    f->info.images += images;
    return INGOT_OK;
}

/* Class @p c's images, read one at a time: the image member, then its label. */
static ingot_status_t folder_emit_class(folder_t *f, uint32_t c, char **paths, size_t n,
                                        ingot_import_member_cb_t cb, void *arg)
{
    size_t dl = strlen(f->root) + 1;
    char label[FOLDER_LABEL_MAX], key[PATH_MAX];
    int ll = snprintf(label, sizeof(label), "%u", c);
    ingot_status_t st = INGOT_OK;
    for (size_t i = 0; st == INGOT_OK && i < n; i++) {
        const char *rel = paths[i] + dl, *k, *field;
        size_t kl;
        uint8_t *data = NULL;
        size_t len = 0;
        if (!folder_is_image(rel)) {
            continue;
        }
        st = ingot_tar_name_split(f->root, 0, rel, &k, &kl, &field);
        if (st == INGOT_OK && kl >= sizeof(key)) {
            st = ingot_fail(INGOT_ERR_FORMAT, "%s: key longer than %d bytes", paths[i],
                            PATH_MAX - 1);
        }
        if (st == INGOT_OK) {
            memcpy(key, k, kl);
            key[kl] = '\0';
            st = ingot_file_read_whole(paths[i], &data, &len);
        }
        if (st == INGOT_OK) {
            st = cb(arg, key, field, data, len);
        }
        if (st == INGOT_OK) {
            st = cb(arg, key, "cls", label, (size_t)ll);
        }
        free(data);
    }
    return st;
}

/* One pass over every class: check (cb NULL) or emit. */
static ingot_status_t folder_pass(folder_t *f, ingot_import_member_cb_t cb, void *arg)
{
    ingot_status_t st = INGOT_OK;
    char dir[PATH_MAX];
    for (uint32_t c = 0; st == INGOT_OK && c < f->info.class_count; c++) {
        char **paths = NULL;
        size_t n = 0;
        snprintf(dir, sizeof(dir), "%s/%s", f->root, f->info.classes[c]);
        st = ingot_import_dir_paths(dir, &paths, &n);
        if (st == INGOT_OK) {
            st = cb ? folder_emit_class(f, c, paths, n, cb, arg)
                    : folder_check_class(f, c, paths, n);
        }
        ingot_import_dir_paths_free(paths, n);
    }
    return st;
}

ingot_status_t ingot_import_image_folder(const char *root,
                                         const ingot_image_folder_params_t *params,
                                         ingot_import_member_cb_t cb, void *arg,
                                         ingot_image_folder_info_t *info_p)
{
    if (root == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_import_image_folder: NULL root");
    }
    folder_t f = {.root = root};
    f.skip_non_images = INGOT_PARAM_VALUE(params, skip_non_images,
                                          INGOT_IMAGE_FOLDER_PARAM_FIELD_SKIP_NON_IMAGES, 0);
    f.allow_empty = INGOT_PARAM_VALUE(params, allow_empty,
                                      INGOT_IMAGE_FOLDER_PARAM_FIELD_ALLOW_EMPTY, 0);
    ingot_status_t st = folder_classes(&f);
    if (st == INGOT_OK) {
        st = folder_pass(&f, NULL, NULL);
    }
    if (st == INGOT_OK && cb != NULL) {
        st = folder_pass(&f, cb, arg);
        st = st == INGOT_END_OF_DATA ? INGOT_OK : st;
    }
    if (st == INGOT_OK && info_p != NULL) {
        *info_p = f.info;
    } else {
        ingot_image_folder_info_release(&f.info);
    }
    return st;
}

void ingot_image_folder_info_release(ingot_image_folder_info_t *info)
{
    if (info == NULL) {
        return;
    }
    for (uint32_t c = 0; info->classes != NULL && c < info->class_count; c++) {
        free(info->classes[c]);
    }
    free(info->classes);
    *info = (ingot_image_folder_info_t){0};
}

typedef struct classes_arg {
    char *const *names;
    uint32_t n;
} classes_arg_t;

static ingot_status_t classes_fill(int fd, const char *tmp, void *arg)
{
    const classes_arg_t *a = arg;
    for (uint32_t c = 0; c < a->n; c++) {
        INGOT_CHECK(ingot_shard_write_all(fd, tmp, a->names[c], strlen(a->names[c])));
        INGOT_CHECK(ingot_shard_write_all(fd, tmp, "\n", 1));
    }
    return INGOT_OK;
}

ingot_status_t ingot_pack_classes_write(const char *dir, char *const *classes, uint32_t count)
{
    char path[PATH_MAX];
    for (uint32_t c = 0; c < count; c++) {
        if (classes == NULL || classes[c] == NULL || strchr(classes[c], '\n') != NULL) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "%s: class %u: a name is missing or holds a newline", dir, c);
        }
    }
    snprintf(path, sizeof(path), "%s/%s", dir, INGOT_PACK_CLASSES_NAME);
    classes_arg_t a = {classes, count};
    return ingot_shard_replace_file(path, classes_fill, &a);
}
