/**
 * @file pack.h
 * @brief Packing samples into tar shards with a manifest, and importing datasets to pack.
 *
 * A packer writes the members `<key>.<field>` it is given into tar shards of a target size in an
 * output directory (`shard-NNNNNN.tar`), optionally zstd-compressing members (with a trained
 * dictionary), then builds `manifest.ingot` over them (see shard.h). Shard boundaries are decided
 * on the caller's thread in sample order, so the output does not depend on the number of jobs:
 * the same members in the same order give byte-identical shards and manifest.
 *
 * Importers turn a dataset on disk into members, in a deterministic order, and hand each to a
 * callback (ingot_packer_add() through ingot_pack_member_cb(), or the caller's own): a directory
 * tree, an existing tar, or the Fashion-MNIST idx files. No importer starts a process or uses a
 * shell: paths are only ever passed to open(2).
 *
 * Errors: every fallible call returns an ingot_status_t and logs what was wrong once (file,
 * member, offset), also kept in ingot_last_error(); outputs are written only on success.
 */
#ifndef INGOT_PACK_H
#define INGOT_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Name of the manifest a packer writes in its output directory. */
#define INGOT_PACK_MANIFEST_NAME "manifest.ingot"
/** Name of the dictionary a packer writes beside the shards when it was given one. */
#define INGOT_PACK_DICT_NAME "dict.zdict"
/** Default target shard size (256 MiB of uncompressed members). */
#define INGOT_PACK_DEFAULT_SHARD_SIZE (256ull << 20)

/** Opaque handle to a packer. */
typedef struct ingot_packer *ingot_packer_h;

/** Fields of ingot_packer_params_t. */
enum ingot_packer_params_field {
    INGOT_PACKER_PARAM_FIELD_OUT_DIR       = INGOT_BIT(0), /**< out_dir is set (required). */
    INGOT_PACKER_PARAM_FIELD_SHARD_SIZE    = INGOT_BIT(1), /**< shard_size is set. */
    INGOT_PACKER_PARAM_FIELD_ZSTD_LEVEL    = INGOT_BIT(2), /**< zstd_level is set. */
    INGOT_PACKER_PARAM_FIELD_DICT          = INGOT_BIT(3), /**< dict and dict_len are set. */
    INGOT_PACKER_PARAM_FIELD_PROGRESS      = INGOT_BIT(4), /**< progress is set. */
    INGOT_PACKER_PARAM_FIELD_TOTAL_MEMBERS = INGOT_BIT(5), /**< total_members is set. */
    INGOT_PACKER_PARAM_FIELD_JOBS          = INGOT_BIT(6)  /**< jobs is set. */
};

/** Parameters of ingot_packer_create(). Unset fields take their defaults. */
typedef struct ingot_packer_params {
    uint64_t    field_mask; /**< Bits of ingot_packer_params_field saying which fields are set. */
    const char *out_dir;    /**< Output directory, created (with its parents) if missing. */
    uint64_t    shard_size; /**< A shard is closed at the first sample boundary past this many
                                    bytes of uncompressed members, headers included (default
                                    INGOT_PACK_DEFAULT_SHARD_SIZE; 0 is invalid). */
    int         zstd_level; /**< zstd level of members (default 0: stored as given). */
    const void *dict;       /**< zstd dictionary (copied at create), e.g. from
                                    ingot_pack_dict_train(); used only with a zstd level. */
    size_t      dict_len;   /**< Bytes of dict. */
    int         progress;   /**< Non-zero: draw a progress bar (or line) on stderr (default 0). */
    uint64_t    total_members; /**< Members the caller will add, for the bar (default 0: unknown,
                                    a counter line instead). */
    unsigned    jobs;          /**< Shards compressed and written in parallel on a thread pool
                                    (default 1: on the caller's thread). Memory: about 2 x jobs
                                    shards. */
} ingot_packer_params_t;

/**
 * @brief Create a packer writing into params->out_dir.
 * @param params    out_dir is required; other fields default as documented.
 * @param packer_p  out: the packer, written only on success; destroy it with
 *                  ingot_packer_destroy().
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (NULL, no out_dir, shard_size 0); INGOT_ERR_IO (the
 *         directory cannot be created); INGOT_ERR_ZSTD (bad dictionary); INGOT_ERR_NO_MEMORY.
 * Thread-safe (independent packers); the parameters are copied.
 */
INGOT_API ingot_status_t ingot_packer_create(const ingot_packer_params_t *params,
                                             ingot_packer_h              *packer_p);

/**
 * @brief Add one member `<key>.<field>` of data @p data (@p len bytes, copied).
 *
 * The members of a sample must be added one after the other: a key different from the previous
 * one starts a new sample. A field named "cls" (the label) or ending in ".zst" is stored as
 * given; other fields are compressed when the packer has a zstd level.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (member name longer than PATH_MAX);
 *         INGOT_ERR_NO_MEMORY; or the error of a shard written by a pool thread (INGOT_ERR_IO,
 *         INGOT_ERR_ZSTD), reported by the next call after it happened.
 * Not thread-safe: one thread adds to a packer.
 */
INGOT_API ingot_status_t ingot_packer_add(ingot_packer_h packer, const char *key, const char *field,
                                          const void *data, size_t len);

/**
 * @brief Write the last shard, wait for all of them, write the dictionary (if one was given)
 *        beside them, then the manifest `out_dir/manifest.ingot`.
 * @param samples_p  out: samples packed (may be NULL).
 * @param shards_p   out: shards written (may be NULL).
 * @return INGOT_OK; INGOT_ERR_IO, INGOT_ERR_ZSTD, INGOT_ERR_TIMED_OUT (no worker progressed
 *         within INGOT_TIMEOUT), or a manifest builder error. Call it once, then destroy.
 * Not thread-safe: the thread that adds calls it.
 */
INGOT_API ingot_status_t ingot_packer_finish(ingot_packer_h packer, uint64_t *samples_p,
                                             uint64_t *shards_p);

/**
 * @brief Destroy a packer, waiting for its pool threads. Shards already written stay on disk.
 *        Accepts NULL.
 */
INGOT_API void ingot_packer_destroy(ingot_packer_h packer);

/**
 * @brief Train a zstd dictionary (ZDICT_trainFromBuffer, 110 KiB as `zstd --train`) from @p n
 *        samples concatenated in @p buf, their sizes in @p sizes.
 * @param dict_p  out: the dictionary, allocated with malloc(); the caller frees it.
 * @param len_p   out: its length.
 * @return INGOT_OK; INGOT_ERR_ZSTD (too few or too uniform samples); INGOT_ERR_NO_MEMORY.
 * Thread-safe.
 */
INGOT_API ingot_status_t ingot_pack_dict_train(const void *buf, const size_t *sizes, unsigned n,
                                               void **dict_p, size_t *len_p);

/* ------------------------------------------------------------------------------------------ */
/* Importers                                                                                    */

/** What an importer reads. */
typedef enum ingot_import_kind {
    INGOT_IMPORT_AUTO = 0,         /**< A directory tree if the path is a directory, else a tar. */
    INGOT_IMPORT_DIR  = 1,         /**< Every regular file below a directory (symbolic links
                                         not followed), sorted by path so that a key's members
                                         are adjacent; a file `a/b.c.d` is key `a/b`, field `c.d`. */
    INGOT_IMPORT_TAR  = 2,         /**< The regular members of a tar (ustar, pax, GNU), in order. */
    INGOT_IMPORT_FASHION_MNIST = 3 /**< The gzipped Fashion-MNIST idx files in a directory
                                         (`{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`,
                                         Debian package dataset-fashion-mnist), decompressed with
                                         zlib: samples `train-NNNNN` then `test-NNNNN`, each a
                                         `pgm` (P5 image) and a `cls` (label) member. */
} ingot_import_kind_t;

/** Directory of the Debian package dataset-fashion-mnist. */
#define INGOT_IMPORT_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/**
 * Receives each member an importer reads, in order. @p data is valid during the call only.
 * Return INGOT_OK to go on, INGOT_END_OF_DATA to stop the import early (not an error), or an
 * error status to fail it (the callback logs why).
 */
typedef ingot_status_t (*ingot_import_member_cb_t)(void *arg, const char *key, const char *field,
                                                   const void *data, size_t len);

/**
 * @brief A callback that adds each member to the packer passed as @p arg (an ingot_packer_h):
 *        `ingot_import(path, kind, ingot_pack_member_cb, packer)`.
 * @return What ingot_packer_add() returns. Thread safety: that of ingot_packer_add() (one thread
 *         per packer); the data is copied.
 */
INGOT_API ingot_status_t ingot_pack_member_cb(void *arg, const char *key, const char *field,
                                              const void *data, size_t len);

/**
 * @brief Read the dataset at @p path and hand every member to @p cb, in order.
 * @return INGOT_OK (also when @p cb stopped it with INGOT_END_OF_DATA); INGOT_ERR_NOT_FOUND /
 *         INGOT_ERR_PERMISSION / INGOT_ERR_IO (naming the file); INGOT_ERR_FORMAT (a malformed
 *         tar, idx files that do not match, a member name without a field); INGOT_ERR_NO_MEMORY;
 *         or the error @p cb returned.
 * Thread-safe (no global state); @p cb runs on the calling thread.
 */
INGOT_API ingot_status_t ingot_import(const char *path, ingot_import_kind_t kind,
                                      ingot_import_member_cb_t cb, void *arg);

/**
 * @brief How many members ingot_import() will hand over, for a progress bar, reading names or
 *        headers only: the regular files below a directory, or two per Fashion-MNIST image.
 * @param count_p  out: written only on success.
 * @return INGOT_OK; INGOT_ERR_UNSUPPORTED for a tar (counting would read it all); the errors
 *         of ingot_import() for unreadable input.
 * Thread-safe.
 */
INGOT_API ingot_status_t ingot_import_count(const char *path, ingot_import_kind_t kind,
                                            uint64_t *count_p);

/* ------------------------------------------------------------------------------------------ */
/* ImageFolder                                                                                  */

/** Name of the class list written beside the manifest of a packed ImageFolder
 *  (ingot_pack_classes_write()): line n, from 0, names class n. */
#define INGOT_PACK_CLASSES_NAME "classes.txt"

/** Extensions (any case) of the files ingot_import_image_folder() takes as images: the formats
 *  ingot_transform_image_decode() decodes. */
#define INGOT_IMAGE_FOLDER_EXTENSIONS "jpg jpeg png ppm pgm pnm"

/** Fields of ingot_image_folder_params_t. */
enum ingot_image_folder_params_field {
    INGOT_IMAGE_FOLDER_PARAM_FIELD_SKIP_NON_IMAGES = INGOT_BIT(0), /**< skip_non_images. */
    INGOT_IMAGE_FOLDER_PARAM_FIELD_ALLOW_EMPTY     = INGOT_BIT(1)  /**< allow_empty. */
};

/** Parameters of ingot_import_image_folder(); NULL or unset fields: 0. */
typedef struct ingot_image_folder_params {
    uint64_t field_mask;      /**< ingot_image_folder_params_field bits. */
    int      skip_non_images; /**< Non-zero: a file in a class folder that is not an image is
                                   left out (counted) instead of failing the import. */
    int      allow_empty;     /**< Non-zero: a class folder without images keeps its index
                                   (counted) instead of failing the import, so that two splits
                                   of one dataset number their classes alike. */
} ingot_image_folder_params_t;

/** What ingot_import_image_folder() found. */
typedef struct ingot_image_folder_info {
    uint32_t class_count; /**< Classes: the root's subdirectories. */
    char   **classes;     /**< Their names, sorted; class i has label i. Owned by the info:
                               ingot_image_folder_info_release() frees them. */
    uint64_t images;      /**< Samples (one image each). */
    uint64_t skipped;     /**< Files that are not images, left out (skip_non_images). */
    uint64_t outside;     /**< Files directly in the root, outside every class: ignored. */
    uint32_t empty;       /**< Classes without images (allow_empty). */
} ingot_image_folder_info_t;

/**
 * @brief Import torchvision's ImageFolder layout: every image below `root/<class>/` becomes a
 *        sample with its image member and a `cls` member holding the class index.
 *
 * Rules (checked over the whole tree before any file is read, so a bad tree packs nothing):
 * - Classes are the root's subdirectories (symbolic links are not followed), sorted by name
 *   bytewise, as Python's sorted() (torchvision's find_classes): class i has label i.
 * - Images may sit in nested folders inside a class folder: they take the class of its top
 *   folder (torchvision walks class folders recursively). A sample's key is its path from the
 *   root up to the first dot of its file name (`cat/sub/img1`); its image member is named by
 *   the rest (`jpg`).
 * - An image is a file whose name ends in one of INGOT_IMAGE_FOLDER_EXTENSIONS (any case). Any
 *   other file in a class folder fails the import naming it, unless skip_non_images.
 * - A class folder without images fails the import naming it, unless allow_empty.
 * - Files directly in the root belong to no class: they are ignored and counted.
 * - Two images with one key (`a.jpg` and `a.png`) fail the import naming both.
 * @param cb  receives every member (NULL: only check the tree and fill @p info_p).
 * @param info_p out (may be NULL): written on success; release it with
 *               ingot_image_folder_info_release().
 * @return INGOT_OK; INGOT_ERR_FORMAT (no class folder, a non-image file, an empty class, a
 *         shared key), naming the path and the rule; INGOT_ERR_NOT_FOUND / INGOT_ERR_PERMISSION
 *         / INGOT_ERR_IO naming the file; INGOT_ERR_NO_MEMORY; or @p cb's error.
 * Thread-safe (no global state); @p cb runs on the calling thread.
 */
INGOT_API ingot_status_t ingot_import_image_folder(const char                        *root,
                                                   const ingot_image_folder_params_t *params,
                                                   ingot_import_member_cb_t cb, void *arg,
                                                   ingot_image_folder_info_t *info_p);

/** @brief Free what an ingot_image_folder_info_t holds (and zero it). Accepts NULL. */
INGOT_API void ingot_image_folder_info_release(ingot_image_folder_info_t *info);

/**
 * @brief Write the class names, one a line, to `dir/` INGOT_PACK_CLASSES_NAME, atomically
 *        (beside the manifest a packer wrote in @p dir).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (a name holding a newline); INGOT_ERR_IO naming the
 *         file. Thread-safe.
 */
INGOT_API ingot_status_t ingot_pack_classes_write(const char *dir, char *const *classes,
                                                  uint32_t count);

INGOT_END_DECLS

#endif /* INGOT_PACK_H */
