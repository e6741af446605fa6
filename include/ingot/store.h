/**
 * @file store.h
 * @brief Object stores: datasets in S3-compatible buckets or on HTTP(S) servers.
 *
 * A manifest can live in a bucket (s3://BUCKET/PREFIX/manifest.ingot) or on a web server
 * (https://HOST/PATH/manifest.ingot) beside its shards; every call that takes a manifest path
 * (ingot_manifest_open(), ingot_loader_create(), the tools) takes such a URL too. The loader
 * then reads shards with ranged GETs (one client per loader, its I/O thread, retries and
 * throttling; docs/objectstore.md), with zero LIST or HEAD requests at run time: the manifest
 * records every shard's size and ETag.
 *
 * Endpoint, region and credentials are resolved as the AWS CLI resolves them: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; AWS_PROFILE with ~/.aws/credentials and
 * ~/.aws/config (or AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE); the instance metadata service
 * (IMDSv2; AWS_EC2_METADATA_SERVICE_ENDPOINT); AWS_REGION / AWS_DEFAULT_REGION;
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (path-style addressing), else AWS (virtual-hosted).
 * http(s):// URLs are read unsigned. No call logs, prints or returns a secret key or token.
 */
#ifndef INGOT_STORE_H
#define INGOT_STORE_H

#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>
#include <ingot/shard.h>

INGOT_BEGIN_DECLS

/** Where and as whom a process reads an object store. Never holds a secret. */
typedef struct ingot_store_identity {
    char endpoint[256];          /**< "http://127.0.0.1:8333 (path-style, AWS_ENDPOINT_URL)",
                                      "AWS S3 (...)", or, for http(s) URLs, their own hosts */
    char region[64];             /**< "us-east-1" ("" for http(s) URLs) */
    char region_source[160];     /**< "AWS_REGION", "profile ci in /x/config", "default" */
    char credential_source[512]; /**< "env", "profile ci from /x/credentials", "imds (URL)",
                                      "none" (unsigned http(s)) */
    char bucket[256];            /**< the URL's bucket (or host); "" when no URL was given */
} ingot_store_identity_t;

/**
 * @brief Resolve the endpoint, region and credential source this process would use for @p url
 *        (an s3:// or http(s):// URL), or for s3:// URLs in general when @p url is NULL.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND (no credentials, an unknown profile);
 *         INGOT_ERR_TIMED_OUT (the metadata service did not answer within
 *         INGOT_S3_IMDS_TIMEOUT); INGOT_ERR_CONFIG (a bad AWS_* value or profile line);
 *         INGOT_ERR_INVALID_PARAM (a malformed URL). Each is logged naming the variable,
 *         profile, file or address it looked at.
 * @note Thread-safe; no secret is written to @p id_p. The first call makes the process's
 *       client (kept until exit, shared by the tool calls of this header), which may ask the
 *       instance metadata service when no environment variable or profile gives credentials:
 *       it can block for up to INGOT_S3_IMDS_TIMEOUT. No request is made to the store.
 */
INGOT_API ingot_status_t ingot_store_identity(const char *url, ingot_store_identity_t *id_p);

/** Fields of ingot_store_build_params_t. */
enum ingot_store_build_params_field {
    INGOT_STORE_BUILD_PARAM_FIELD_PREFIX   = INGOT_BIT(0), /**< prefix (required). */
    INGOT_STORE_BUILD_PARAM_FIELD_MANIFEST = INGOT_BIT(1), /**< manifest. */
    INGOT_STORE_BUILD_PARAM_FIELD_SUFFIX   = INGOT_BIT(2), /**< suffix. */
    INGOT_STORE_BUILD_PARAM_FIELD_SPECIAL  = INGOT_BIT(3), /**< special. */
    INGOT_STORE_BUILD_PARAM_FIELD_LABELS   = INGOT_BIT(4)  /**< label_path. */
};

/** Parameters of ingot_store_manifest_build(). */
typedef struct ingot_store_build_params {
    uint64_t                   field_mask; /**< ingot_store_build_params_field bits. */
    /** The shards: every object under s3://BUCKET/PREFIX/ whose key ends in suffix. */
    const char                *prefix;
    /** Where the manifest is written (PUT): an s3:// URL directly under prefix (shard names are
     *  relative to it). Default: prefix + "manifest.ingot". */
    const char                *manifest;
    const char                *suffix;     /**< Default ".tar". */
    ingot_tar_special_policy_t special;    /**< As ingot_manifest_builder_params_t. */
    const char                *label_path; /**< As ingot_manifest_builder_params_t. */
} ingot_store_build_params_t;

/** What ingot_store_manifest_build() did. */
typedef struct ingot_store_build_report {
    uint64_t shards;         /**< Objects indexed. */
    uint64_t samples;        /**< Samples in the manifest. */
    uint64_t bytes;          /**< Bytes of the shards. */
    uint64_t skipped;        /**< Objects listed but not taken (suffix, the manifest itself). */
    uint64_t list_requests;  /**< LIST pages (the only LIST ingot makes). */
    uint64_t get_requests;   /**< GETs of the shards (ranged, in parts). */
    uint64_t manifest_bytes; /**< Bytes of the manifest written. */
} ingot_store_build_report_t;

/**
 * @brief Build a manifest over the shards in a bucket: LIST the prefix once, GET every shard
 *        (into a temporary file, unlinked) and index it as ingot_manifest_builder_add_shard()
 *        does, recording each object's size and ETag (format version 3), then PUT the manifest.
 *        Shard names are relative to the manifest's URL, so a copy of the prefix elsewhere (a
 *        mirror) reads as well. Objects are taken in key order.
 * @param report_p may be NULL.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (a malformed URL, a manifest outside the prefix);
 *         INGOT_ERR_NOT_FOUND (no shard under the prefix, a missing bucket); the object
 *         store's errors; the builder's (INGOT_ERR_FORMAT for a bad tar).
 * @note Thread-safe (over the process's shared client, as ingot_store_identity()); blocking,
 *       each request bounded by INGOT_TIMEOUT. Not collective: one process builds it.
 */
INGOT_API ingot_status_t ingot_store_manifest_build(const ingot_store_build_params_t *params,
                                                    ingot_store_build_report_t       *report_p);

INGOT_END_DECLS

#endif /* INGOT_STORE_H */
