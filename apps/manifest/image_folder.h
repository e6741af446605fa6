/*
 * ingot-manifest's ImageFolder support (issue 26): `pack ROOT --labels-from-dirs` imports
 * torchvision's ROOT/<class>/<image> layout with class indices as labels and writes the class
 * names beside the manifest; `inspect` shows them with their sample counts.
 */
#ifndef INGOT_APPS_MANIFEST_IMAGE_FOLDER_H
#define INGOT_APPS_MANIFEST_IMAGE_FOLDER_H

#include <ingot/pack.h>
#include <ingot/shard.h>

/** The ImageFolder options of `pack`. */
typedef struct cli_folder {
    int on;              /* --labels-from-dirs */
    int skip_non_images; /* --skip-non-images */
    int allow_empty;     /* --allow-empty-classes */
} cli_folder_t;

/** 1 when @p opt is one of the ImageFolder flags (then recorded in @p f), else 0. */
int cli_folder_option(const char *opt, cli_folder_t *f);

/** Hand every member of the ImageFolder at @p root to @p cb (ingot_import_image_folder). */
ingot_status_t cli_folder_import(const cli_folder_t *f, const char *root,
                                 ingot_import_member_cb_t cb, void *arg);

/** Members the import will hand over (two per image), or 0 when the tree is bad. */
uint64_t cli_folder_count(const cli_folder_t *f, const char *root);

/** After a successful pack into @p out: write the class names beside the manifest and print
 *  what was packed and left out. 0, or 1 on failure (logged). */
int cli_folder_finish(const cli_folder_t *f, const char *root, const char *out, uint64_t samples,
                      uint64_t shards);

/** `inspect`: the class names beside @p manifest_path, if any, with each class's samples. */
void cli_folder_inspect(const char *manifest_path, ingot_manifest_h m);

#endif
