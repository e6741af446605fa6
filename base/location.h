/*
 * Where something lives (a dataset's folder, a manifest, a shard): a local path, or a URL of an
 * object store (s3://BUCKET/KEY) or a web server (http(s)://HOST[:PORT]/PATH), parsed once into a
 * value that the layers above carry instead of asking a string again.
 *
 * This file is the one place that decides whether a string is a URL and takes it apart: a string
 * that begins with s3://, http:// or https:// (the scheme in any case, as RFC 3986 has it) is a
 * URL, anything else a local path ("s3:/x" too: a folder "s3:"). Where a URL's requests go (an
 * S3 endpoint, path-style or virtual-hosted, the encoded key) is the client's (client/url.h).
 * Pure functions: no I/O, no globals.
 */
#ifndef INGOT_BASE_LOCATION_H
#define INGOT_BASE_LOCATION_H

#include <ingot/status.h>
#include <stddef.h>

/** S3's longest key, in bytes. */
#define INGOT_LOCATION_KEY_MAX 1024

typedef enum ingot_location_scheme {
    INGOT_LOCATION_FILE,  /**< a local path */
    INGOT_LOCATION_S3,    /**< s3://BUCKET/KEY: signed; the endpoint is resolved by a client */
    INGOT_LOCATION_HTTP,  /**< http://HOST[:PORT]/PATH: unsigned */
    INGOT_LOCATION_HTTPS, /**< https://HOST[:PORT]/PATH: unsigned */
} ingot_location_scheme_t;

/**
 * A location. Strings are owned (ingot_location_release); a zeroed value is an empty file
 * location that release accepts.
 */
typedef struct ingot_location {
    ingot_location_scheme_t scheme;
    char *text;   /**< as given: the local path, or the URL as written (messages, and the names
                       joined under it) */
    char *host;   /**< http(s): "host[:port]" as written; NULL otherwise */
    char *bucket; /**< s3: the bucket; NULL otherwise */
    char *key;    /**< s3: the key, or a folder's key prefix, literal as written (may be "");
                       http(s): the path after the host, '/' first, as written (already a URL;
                       "" for the root folder); NULL for a file */
    /* The credentials' identity, once a client resolved one (ingot_location_identify): never a
     * secret. NULL before, and for files. */
    char *endpoint;    /**< "http://127.0.0.1:8333 (path-style, AWS_ENDPOINT_URL)", or an http(s)
                            URL's scheme://host */
    char *region;      /**< "us-east-1"; "" for http(s) */
    char *credentials; /**< where the keys came from: "env", "profile ci from /x/credentials",
                            "imds (URL)", "none" (unsigned http(s)) */
} ingot_location_t;

/** Flags of ingot_location_parse(). */
enum {
    /** Refuse a string that is not a URL (INGOT_ERR_INVALID_PARAM), rather than take it as a
     *  local path. */
    INGOT_LOCATION_URL = 1u << 0,
    /** An s3 URL must name an object (s3://BUCKET/KEY), not a bucket or a prefix ending in '/'. */
    INGOT_LOCATION_OBJECT = 1u << 1,
};

/** 1 when @p text is a URL (s3://, http://, https://, the scheme in any case), 0 for a path. */
int ingot_location_is_url(const char *text);

/** The scheme @p text begins with (INGOT_LOCATION_FILE: a path), without checking the rest. */
ingot_location_scheme_t ingot_location_scheme(const char *text);

/**
 * Parse @p text into @p loc (zeroed first). A path becomes a file location (any string, "" too,
 * unless INGOT_LOCATION_URL). An s3 key is taken literally, as the AWS CLI does ("s3://b/a%20b"
 * is the key "a%20b"); a bucket is letters, digits, '.', '-', '_', at most 255 bytes; a key at
 * most INGOT_LOCATION_KEY_MAX bytes. An http(s) URL must be a valid URL already (no space,
 * control or non-ASCII byte, no '#' or '\\'), carry no user:password@, no query, and have a
 * path. With INGOT_LOCATION_OBJECT an s3 URL needs a key.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM, logged naming the URL (a user:password@ in it shown
 *         as ***) and what is wrong; INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_location_parse(const char *text, unsigned flags, ingot_location_t *loc);

/**
 * INGOT_OK when @p loc names an object: a file, an http(s) URL, an s3 URL with a key; else
 * INGOT_ERR_INVALID_PARAM, logged as ingot_location_parse() logs a bucket without a key.
 */
ingot_status_t ingot_location_need_object(const ingot_location_t *loc);

/** 1 when @p loc is not a local file (an object store's or a web server's). */
static inline int ingot_location_is_remote(const ingot_location_t *loc)
{
    return loc->scheme != INGOT_LOCATION_FILE;
}

/** The scheme's name ("file", "s3", "http", "https"). */
const char *ingot_location_scheme_name(ingot_location_scheme_t scheme);

/** A deep copy of @p from into @p to. @return INGOT_OK, INGOT_ERR_NO_MEMORY (logged). */
ingot_status_t ingot_location_copy(const ingot_location_t *from, ingot_location_t *to);

/**
 * The folder of @p of (a manifest's location: where its shards' names start) into @p dir:
 * everything before the last '/' of the path ("." for a bare file name, "/" for a file at the
 * root) or of the URL's key ("s3://b/p/m.ingot": "s3://b/p", key "p"; "s3://b/m.ingot":
 * "s3://b", key ""). The identity is kept.
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY (logged).
 */
ingot_status_t ingot_location_dir(const ingot_location_t *of, ingot_location_t *dir);

/**
 * The text of @p name (a shard or file a manifest names) under the folder @p dir into @p buf
 * (@p len bytes, truncating like snprintf): the folder, '/', the name, percent-encoded when
 * the folder is an http(s) URL (space, '+', '=', '%', UTF-8: ingot_uri_encode, '/' kept); an s3
 * key as stored (its requests encode it), a path as it is.
 * @return the length it needs, without the NUL.
 */
size_t ingot_location_join_text(const ingot_location_t *dir, const char *name, char *buf,
                                size_t len);

/**
 * The location of @p name under the folder @p dir (its text as ingot_location_join_text(), the
 * key extended likewise), with @p dir's identity.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for an s3 key past INGOT_LOCATION_KEY_MAX (logged);
 *         INGOT_ERR_NO_MEMORY (logged).
 */
ingot_status_t ingot_location_join(const ingot_location_t *dir, const char *name,
                                   ingot_location_t *out);

/**
 * Record the credentials' identity a client resolved for @p loc (copies; replaces any).
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY (logged).
 */
ingot_status_t ingot_location_identify(ingot_location_t *loc, const char *endpoint,
                                       const char *region, const char *credentials);

/** Free @p loc's strings and zero it. Accepts NULL. */
void ingot_location_release(ingot_location_t *loc);

/**
 * Check an endpoint URL as AWS_ENDPOINT_URL takes it: http(s)://HOST[:PORT][/PATH], no query, no
 * user:password@. On success *base_p is a malloc'd copy without its trailing '/'.
 * @return INGOT_OK; INGOT_ERR_CONFIG, logged naming @p what (the variable or profile) and why;
 *         INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_location_endpoint_check(const char *text, const char *what, char **base_p);

#endif
