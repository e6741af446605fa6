/* ingot-manifest's ImageFolder support: see image_folder.h. */
#include "manifest/image_folder.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Classes `inspect` lists one a line before summing up the rest. */
#define CLI_CLASSES_SHOWN 20
/** Longest class name `inspect` reads. */
#define CLI_CLASS_NAME_MAX 1024

int cli_folder_option(const char *opt, cli_folder_t *f)
{
    if (strcmp(opt, "--labels-from-dirs") == 0) {
        f->on = 1;
    } else if (strcmp(opt, "--skip-non-images") == 0) {
        f->skip_non_images = 1;
    } else if (strcmp(opt, "--allow-empty-classes") == 0) {
        f->allow_empty = 1;
    } else {
        return 0;
    }
    return 1;
}

static ingot_image_folder_params_t cli_folder_params(const cli_folder_t *f)
{
    return (ingot_image_folder_params_t){
        .field_mask = INGOT_IMAGE_FOLDER_PARAM_FIELD_SKIP_NON_IMAGES |
                      INGOT_IMAGE_FOLDER_PARAM_FIELD_ALLOW_EMPTY,
        .skip_non_images = f->skip_non_images,
        .allow_empty = f->allow_empty};
}

ingot_status_t cli_folder_import(const cli_folder_t *f, const char *root,
                                 ingot_import_member_cb_t cb, void *arg)
{
    ingot_image_folder_params_t p = cli_folder_params(f);
    return ingot_import_image_folder(root, &p, cb, arg, NULL);
}

uint64_t cli_folder_count(const cli_folder_t *f, const char *root)
{
    ingot_image_folder_params_t p = cli_folder_params(f);
    ingot_image_folder_info_t info;
    if (ingot_import_image_folder(root, &p, NULL, NULL, &info) != INGOT_OK) {
        return 0;
    }
    uint64_t n = 2 * info.images;
    ingot_image_folder_info_release(&info);
    return n;
}

int cli_folder_finish(const cli_folder_t *f, const char *root, const char *out, uint64_t samples,
                      uint64_t shards)
{
    ingot_image_folder_params_t p = cli_folder_params(f);
    ingot_image_folder_info_t info;
    if (ingot_import_image_folder(root, &p, NULL, NULL, &info) != INGOT_OK ||
        ingot_pack_classes_write(out, info.classes, info.class_count) != INGOT_OK) {
        fprintf(stderr, "ingot-manifest pack: %s\n", ingot_last_error());
        return 1;
    }
    printf("packed %" PRIu64 " samples of %u classes into %" PRIu64 " shards; manifest %s/%s, "
           "class names %s/%s\n",
           samples, info.class_count, shards, out, INGOT_PACK_MANIFEST_NAME, out,
           INGOT_PACK_CLASSES_NAME);
    if (info.skipped > 0) {
        printf("left out %" PRIu64 " files that are not images (--skip-non-images)\n",
               info.skipped);
    }
    if (info.empty > 0) {
        printf("%u classes have no image (--allow-empty-classes): their indices are kept\n",
               info.empty);
    }
    if (info.outside > 0) {
        printf("ignored %" PRIu64 " files directly in %s: they are in no class folder\n",
               info.outside, root);
    }
    ingot_image_folder_info_release(&info);
    return 0;
}

/* Samples per label, for the labels 0 .. n - 1 (calloc'd), or NULL. */
static uint64_t *cli_label_counts(ingot_manifest_h m, uint32_t n)
{
    ingot_manifest_info_t info;
    uint64_t *count = calloc(n ? n : 1, sizeof(*count));
    if (count == NULL || ingot_manifest_query(m, &info) != INGOT_OK) {
        free(count);
        return NULL;
    }
    for (uint64_t i = 0; i < info.sample_count; i++) {
        ingot_sample_info_t s;
        if (ingot_manifest_sample_get(m, i, &s) == INGOT_OK && s.label >= 0 &&
            (uint32_t)s.label < n) {
            count[s.label]++;
        }
    }
    return count;
}

/* The class file's lines (malloc'd names), or 0 lines when there is none. */
static uint32_t cli_read_classes(const char *path, char ***names_p)
{
    FILE *fp = fopen(path, "r");
    char line[CLI_CLASS_NAME_MAX];
    uint32_t n = 0, cap = 0;
    char **names = NULL;
    while (fp != NULL && fgets(line, sizeof(line), fp) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof(*names));
            if (grown == NULL) {
                break;
            }
            names = grown;
        }
        if ((names[n] = strdup(line)) == NULL) {
            break;
        }
        n++;
    }
    if (fp != NULL) {
        fclose(fp);
    }
    *names_p = names;
    return n;
}

void cli_folder_inspect(const char *manifest_path, ingot_manifest_h m)
{
    char path[PATH_MAX], **names = NULL;
    const char *slash = strrchr(manifest_path, '/');
    int dl = slash ? (int)(slash - manifest_path) : 1;
    snprintf(path, sizeof(path), "%.*s/%s", dl, slash ? manifest_path : ".",
             INGOT_PACK_CLASSES_NAME);
    uint32_t n = cli_read_classes(path, &names);
    uint64_t *count = n ? cli_label_counts(m, n) : NULL;
    if (n > 0) {
        printf("classes       %u (%s)\n", n, path);
    }
    for (uint32_t c = 0; count != NULL && c < n; c++) {
        if (c < CLI_CLASSES_SHOWN || c + 1 == n) {
            printf("  %5u %-32s %10" PRIu64 " samples\n", c, names[c], count[c]);
        } else if (c == CLI_CLASSES_SHOWN) {
            printf("  ... (%u more)\n", n - CLI_CLASSES_SHOWN - 1);
        }
    }
    for (uint32_t c = 0; c < n; c++) {
        free(names[c]);
    }
    free(names);
    free(count);
}
