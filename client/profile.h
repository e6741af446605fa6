/*
 * The AWS shared files (profile.c): one profile's section of ~/.aws/credentials ("[NAME]") or
 * ~/.aws/config ("[default]", "[profile NAME]"), as the AWS CLI reads them: "key = value" lines,
 * '#' and ';' comments, and indented sub-keys under "s3 =" read as "s3.KEY". Values may be
 * secrets: they are zeroed when released and never logged.
 */
#ifndef INGOT_CLIENT_PROFILE_H
#define INGOT_CLIENT_PROFILE_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdio.h>

typedef struct ingot_objstore_kv {
    char *key, *value;
} ingot_objstore_kv_t;

/** One profile's section of one file. */
typedef struct ingot_objstore_profile {
    char *path;   /**< the file read */
    int exists;   /**< the file exists */
    int found;    /**< the profile's section exists in it */
    size_t count; /**< entries of the section */
    size_t room;  /**< entries kv has room for */
    ingot_objstore_kv_t *kv;
} ingot_objstore_profile_t;

/**
 * Read profile @p name's section of @p path (a credentials file, or a config file when
 * @p config_style). A missing file is not an error (exists = 0).
 * @return INGOT_OK; INGOT_ERR_IO (unreadable, naming the file and errno text); INGOT_ERR_CONFIG
 *         (a line that is neither a section, a "key = value" nor a comment, or one longer than
 *         8 KiB: file:line named);
 *         INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_profile_load(const char *path, int config_style, const char *name,
                                           ingot_objstore_profile_t *profile);

/**
 * Read profile @p name's section from the open file @p f into @p profile (zeroed, its path set
 * by the caller: it names the file in messages). The body of ingot_objstore_profile_load(), and
 * the fuzz target's entry point.
 * @return as ingot_objstore_profile_load(), less INGOT_ERR_IO.
 */
ingot_status_t ingot_objstore_profile_parse(FILE *f, int config_style, const char *name,
                                            ingot_objstore_profile_t *profile);

/** The value of @p key in @p profile, or NULL. */
const char *ingot_objstore_profile_get(const ingot_objstore_profile_t *profile, const char *key);

/** Zero and free @p profile's values. Accepts NULL. */
void ingot_objstore_profile_release(ingot_objstore_profile_t *profile);

/**
 * The path of a shared file: the variable @p env_var when set ("~/" expanded from HOME), else
 * $HOME/.aws/@p leaf; NULL when neither is known (HOME unset). malloc'd.
 */
char *ingot_objstore_profile_path(const char *env_var, const char *leaf);

#endif
