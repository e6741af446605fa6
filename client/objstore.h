/*
 * The object-store client: ranged GETs from an S3-compatible store (SigV4-signed) or a plain
 * HTTP(S) server, over libcurl. One client owns one I/O thread, which owns one curl_multi
 * handle; every other thread talks to it through a locked queue and curl_multi_wakeup (why one
 * thread rather than a multi per reader: README.md, "Design"). A byte source wraps it: the
 * source's request maps onto ingot_objstore_req_t field for field (a shard row names an object,
 * its offset and length a byte range, the manifest gives the size and ETag).
 *
 * Bytes are copied once, from curl's receive buffer into the caller's iovecs. A ranged GET is
 * accepted only as a 206 whose Content-Range is exactly the range asked for and whose total is
 * the expected object size, with exactly that many bytes; anything else fails (never overflowing
 * an iovec), is retried (500, 502, 503, 504, 429, resets, refused connections, stalls: backoff
 * with full jitter under a retry budget, never past the deadline), or is named at once (403,
 * 404, 412, 416, a wrong region, a short or long body). Messages name the endpoint, bucket,
 * key, range, HTTP status and S3 error code, never a secret.
 *
 * Thread safety: every function may be called from any thread, except that create and destroy
 * of one client are called once each, and no other call on a client may overlap its destroy.
 * Completion callbacks run on the client's I/O thread ("ingot-s3io") and must not block.
 */
#ifndef INGOT_CLIENT_OBJSTORE_H
#define INGOT_CLIENT_OBJSTORE_H

#include <ingot/status.h>
#include "client/objstore_config.h"
#include "base/location.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct ingot_objstore ingot_objstore_t;
struct ingot_objstore_counters;
typedef struct ingot_objstore_object ingot_objstore_object_t;
typedef struct ingot_objstore_req ingot_objstore_req_t;

/** ingot_objstore_req_t.object_size when the object's size is not known (no total check). */
#define INGOT_OBJSTORE_SIZE_UNKNOWN UINT64_MAX
/** Longest ETag a request may carry (S3's are 34 characters with their quotes). */
#define INGOT_OBJSTORE_ETAG_MAX 128
/** Room for an S3 error code ("SlowDown", "NoSuchKey", "AuthorizationHeaderMalformed"). */
#define INGOT_OBJSTORE_CODE_MAX 48
/** Room for a request's failure message. */
#define INGOT_OBJSTORE_MESSAGE_MAX 640
/** Room for ingot_objstore_describe() and ingot_objstore_object_describe(). */
#define INGOT_OBJSTORE_DESCRIBE_MAX 1536

/* ------------------------------------------------------------------ the client */

enum {
    INGOT_OBJSTORE_PARAM_URL = 1u << 0,      /**< url */
    INGOT_OBJSTORE_PARAM_CONFIG = 1u << 1,   /**< config */
    INGOT_OBJSTORE_PARAM_LOCATION = 1u << 2, /**< location (instead of url) */
};

typedef struct ingot_objstore_params {
    uint64_t field_mask;
    /**
     * A URL of the store the client will read (the dataset's prefix or manifest). Its scheme
     * decides: s3:// resolves the endpoint, region and credentials now (so "no credentials",
     * "unknown profile" and "metadata service unreachable" are errors of create, on the calling
     * thread); http:// and https:// read unsigned. Default: unsigned only.
     */
    const char *url;
    /** Settings (copied). Default: the process-wide INGOT_S3_* values (ingot_objstore_config). */
    const ingot_objstore_config_t *config;
    /** The url already parsed (base/location.h); its scheme decides as url's does. */
    const ingot_location_t *location;
} ingot_objstore_params_t;

/**
 * Create a client and start its I/O thread.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (a malformed url); INGOT_ERR_NOT_FOUND (no
 *         credentials, an unknown profile); INGOT_ERR_TIMED_OUT (the metadata service did not
 *         answer in INGOT_S3_IMDS_TIMEOUT); INGOT_ERR_CONFIG (a bad AWS_* setting or profile
 *         value); INGOT_ERR_NO_MEMORY; INGOT_ERR_IO (libcurl could not start). Each is logged
 *         naming the variable, profile, file or address.
 */
ingot_status_t ingot_objstore_create(const ingot_objstore_params_t *params,
                                     ingot_objstore_t **client_p);

/**
 * Stop the I/O thread and free the client. Every request still queued or in flight completes
 * with INGOT_ERR_CANCELED first (its callback runs, on the calling thread). Objects made by the
 * client must be destroyed before it. Accepts NULL.
 */
void ingot_objstore_destroy(ingot_objstore_t *client);

/** What a rank reads from, for ingot-info and the job-wide check: no secret in any field. */
typedef struct ingot_objstore_identity {
    char endpoint[256];          /**< "http://127.0.0.1:8333 (path-style, AWS_ENDPOINT_URL)" */
    char region[64];             /**< "us-east-1" */
    char region_source[160];     /**< "AWS_REGION", "profile ci in /x/config", "default" */
    char credential_source[512]; /**< "env", "profile ci from /x/credentials", "imds (...)",
                                      "none" (unsigned) */
} ingot_objstore_identity_t;

/** Fill @p id_p with @p client's endpoint, region and credential source (never a secret). */
void ingot_objstore_identity(const ingot_objstore_t *client, ingot_objstore_identity_t *id_p);

/**
 * The process-wide client for @p loc (an s3 or http(s) location): one per endpoint, region and
 * credentials' identity, so the buckets of one endpoint share a client and two endpoints (or
 * regions, or principals) in one process get two; made at the first call (on the calling thread:
 * the metadata service is asked then, if it is the credentials' source) and kept until the
 * process exits. The identity resolved (endpoint, region, credential source: never a secret) is
 * written into @p loc (ingot_location_identify). For the calls that have no client of their own
 * (the tools' manifests and builds); a loader's byte source makes its own. Thread-safe.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for a file location; the errors of
 *         ingot_objstore_create() (no credentials, an unknown profile, a bad AWS_* value).
 */
ingot_status_t ingot_objstore_shared(ingot_location_t *loc, ingot_objstore_t **client_p);

/** One line describing @p client (its identity) in @p buf; returns @p buf. */
const char *ingot_objstore_describe(const ingot_objstore_t *client, char *buf, size_t len);

/* ------------------------------------------------------------------ objects */

/**
 * Parse @p url (s3://BUCKET/KEY, http(s)://HOST[:PORT]/PATH) into an object of @p client: the
 * request URL (the key percent-encoded as S3 signs it, path-style on a custom endpoint,
 * virtual-hosted on AWS), its bucket's throttle state. Not on the hot path: made once per shard.
 * An s3:// object needs a client created with an s3:// url (credentials).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM naming what is malformed; INGOT_ERR_NO_RESOURCE
 *         past INGOT_OBJSTORE_MAX_BUCKETS buckets or hosts; INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_object_create(ingot_objstore_t *client, const char *url,
                                            ingot_objstore_object_t **object_p);

/** Free @p object (no request may still use it). Accepts NULL. */
void ingot_objstore_object_destroy(ingot_objstore_object_t *object);

/**
 * An object of @p client at @p url (a URL already parsed, copied): as
 * ingot_objstore_object_create(), without parsing it again.
 */
ingot_status_t ingot_objstore_object_at(ingot_objstore_t *client, const ingot_location_t *url,
                                        ingot_objstore_object_t **object_p);

/** "bucket 'b', key 'k' at http://127.0.0.1:8333" (or "https://host/path") in @p buf. */
const char *ingot_objstore_object_describe(const ingot_objstore_object_t *object, char *buf,
                                           size_t len);

/** The object's request URL (encoded), for messages and tests. */
const char *ingot_objstore_object_url(const ingot_objstore_object_t *object);

/* ------------------------------------------------------------------ asynchronous ranged GETs */

/** Completion callback, on the I/O thread (or in destroy), once per accepted request. */
typedef void (*ingot_objstore_cb_t)(ingot_objstore_req_t *req);

/** Why an attempt was retried. */
typedef enum ingot_objstore_retry_class {
    INGOT_OBJSTORE_RETRY_THROTTLE = 0, /**< 503 (SlowDown), 429 */
    INGOT_OBJSTORE_RETRY_SERVER = 1,   /**< 500, 502, 504 */
    INGOT_OBJSTORE_RETRY_NETWORK = 2,  /**< refused, reset, closed mid-body, DNS */
    INGOT_OBJSTORE_RETRY_STALL = 3,    /**< below the low-speed limit for INGOT_S3_STALL_TIMEOUT */
    INGOT_OBJSTORE_RETRY_AUTH = 4,     /**< ExpiredToken: credentials re-read */
    INGOT_OBJSTORE_RETRY_CLASSES = 5
} ingot_objstore_retry_class_t;

/** The client's per-request state: not to be touched by the caller. */
typedef struct ingot_objstore_req_private {
    ingot_objstore_req_t *next, *prev;
    uint64_t submit_ns, not_before_ns; /* when submitted; earliest start of the next attempt */
    uint64_t done;                     /* bytes in place (a retry resumes after them) */
    _Atomic int where;                 /* which list holds it (io.c) */
    int expired_refreshed;             /* credentials were re-read once for this request */
    int rate_held;                     /* counted once as held by the rate cap */
    _Atomic int cancel;                /* raised by ingot_objstore_cancel */
    char etag_seen[INGOT_OBJSTORE_ETAG_MAX + 1]; /* ETag of the first answer (If-Match after) */
    void *buf;                                   /* whole-object GET: the growing buffer */
    size_t buf_cap;
    uint64_t buf_max;
    const char *query;  /* LIST: the sorted, encoded query */
    int whole;          /* 1: a whole-object GET (no Range, 200 expected), or a PUT */
    uint32_t active;    /* io: its attempts on slots (more than one: hedged) */
    uint64_t newest_ns; /* io: when its newest attempt started */
    const void *put;    /* PUT: the body (whole is 1), else NULL */
    size_t put_size;
} ingot_objstore_req_private_t;

struct ingot_objstore_req {
    /* in: set by the caller before submit, left alone until the callback */
    const ingot_objstore_object_t *object;
    uint64_t offset;         /**< first byte of the range */
    uint64_t length;         /**< bytes of the range (> 0; == the iovecs' total) */
    uint64_t object_size;    /**< the object's size as recorded (the manifest), or
                                   INGOT_OBJSTORE_SIZE_UNKNOWN */
    const char *etag;        /**< the ETag recorded for the object, sent as If-Match (an
                                   object replaced since fails with 412), or NULL */
    const struct iovec *iov; /**< destination, host memory; not modified */
    int iovcnt;
    uint64_t deadline_ns;   /**< absolute CLOCK_MONOTONIC deadline, retries included */
    ingot_objstore_cb_t cb; /**< may be NULL */
    void *arg;              /**< the caller's */
    /** A ranged GET's bytes landing, or NULL: called on the I/O thread after each part of the
     *  body is copied in, while those bytes are still in its cache, with @p upto the bytes of the
     *  range in place from its start, which no attempt will write again. Called only while one
     *  attempt runs: a hedge's twin writes the bytes past where it started a second time, so
     *  nothing is reported from its start until one of the two is left (what is never reported
     *  is the caller's to check at completion). Never for a whole-object GET. Must not block. */
    void (*landed)(ingot_objstore_req_t *req, uint64_t upto);
    /** Counters this request's attempts, bytes, retries and latencies are also added to (the
     *  caller's, e.g. one set per epoch: stats.h), or NULL. */
    struct ingot_objstore_counters *tally;
    /* out: valid when the callback runs */
    ingot_status_t status;                    /**< INGOT_OK: every byte of the range is in place */
    int http_status;                          /**< the last HTTP status received, 0 if none */
    char s3_code[INGOT_OBJSTORE_CODE_MAX];    /**< the last S3 error code received, or "" */
    uint32_t retries;                         /**< attempts made after the first */
    char message[INGOT_OBJSTORE_MESSAGE_MAX]; /**< why it failed (logged once), or "" */
    ingot_objstore_req_private_t priv;
};

/**
 * Queue @p req on @p client's I/O thread.
 * @return INGOT_OK: accepted, the callback comes exactly once (never inside this call);
 *         INGOT_ERR_INVALID_PARAM (no object, length 0, iovecs that do not add up to length, a
 *         range past object_size, an ETag too long), INGOT_ERR_CANCELED (the client is being
 *         destroyed): refused, no callback.
 */
ingot_status_t ingot_objstore_submit(ingot_objstore_t *client, ingot_objstore_req_t *req);

/**
 * Take @p req back. INGOT_OK: it had not left the queue; no callback will come and its buffer is
 * free. INGOT_ERR_BUSY: the I/O thread holds it; it is stopped and completes soon with
 * INGOT_ERR_CANCELED (the caller keeps the buffer out of service until the callback).
 */
ingot_status_t ingot_objstore_cancel(ingot_objstore_t *client, ingot_objstore_req_t *req);

/**
 * Submit @p req and wait for it (its cb and arg are the client's; leave them NULL). The I/O
 * thread ends every request at its deadline, so this wait is bounded by req->deadline_ns.
 * @return req->status; on error ingot_last_error() of the calling thread is req->message.
 */
ingot_status_t ingot_objstore_read(ingot_objstore_t *client, ingot_objstore_req_t *req);

/**
 * Submit @p n requests at once (in flight together, up to INGOT_S3_CONNECTIONS) and wait for all
 * of them: what ingot_objstore_read() is for one. Their cb and arg are the client's.
 * @return INGOT_OK when every one succeeded; else the first failure's status, whose message is
 *         the calling thread's ingot_last_error() (each request's own status and message hold).
 */
ingot_status_t ingot_objstore_read_many(ingot_objstore_t *client, ingot_objstore_req_t *reqs,
                                        size_t n);

/* ------------------------------------------------------------------ blocking calls */

/**
 * GET a whole object (a manifest) into a malloc'd buffer: one request, no HEAD, retried like a
 * ranged GET. @p max_size bounds what the server may make us allocate. @p etag (may be NULL)
 * receives the object's ETag (room: INGOT_OBJSTORE_ETAG_MAX + 1).
 * @return INGOT_OK (*data_p, *size_p set; free(*data_p)); the errors of a ranged GET;
 *         INGOT_ERR_OUT_OF_RANGE when the object is larger than @p max_size.
 */
ingot_status_t ingot_objstore_get(ingot_objstore_t *client, const ingot_objstore_object_t *object,
                                  uint64_t max_size, uint64_t deadline_ns, void **data_p,
                                  size_t *size_p, char *etag);

/**
 * PUT @p size bytes of @p data as @p object (a manifest written into its bucket), one request,
 * signed with UNSIGNED-PAYLOAD as the GETs are; retried as a GET (a retry sends the whole body
 * again). @p etag (may be NULL) receives the new object's ETag (room INGOT_OBJSTORE_ETAG_MAX + 1).
 * @return INGOT_OK; the errors of a GET (INGOT_ERR_PERMISSION for a refused write).
 */
ingot_status_t ingot_objstore_put(ingot_objstore_t *client, const ingot_objstore_object_t *object,
                                  const void *data, size_t size, uint64_t deadline_ns, char *etag);

/** One object of a listing. */
typedef struct ingot_objstore_entry {
    char *key;                              /**< the full key (decoded) */
    uint64_t size;                          /**< bytes */
    char etag[INGOT_OBJSTORE_ETAG_MAX + 1]; /**< as the server wrote it, quotes included */
} ingot_objstore_entry_t;

typedef struct ingot_objstore_listing {
    ingot_objstore_entry_t *entries; /**< in the server's (key) order */
    size_t count;
    uint32_t pages; /**< LIST requests made */
} ingot_objstore_listing_t;

/**
 * LIST (v2) every object under @p prefix_url (s3://BUCKET/PREFIX; "s3://BUCKET/" lists the
 * bucket), following continuation tokens. For building manifests only: ingot never lists at run
 * time. @p page_keys asks for that many keys per page (max-keys; 0: the server's default, 1,000
 * on S3); @p max_entries bounds the listing (INGOT_ERR_NO_RESOURCE past it).
 * @return INGOT_OK with *listing_p filled (free it with ingot_objstore_listing_free); the errors
 *         of a GET; INGOT_ERR_UNSUPPORTED for an http(s) URL; INGOT_ERR_FORMAT for an answer
 *         that is not a ListBucketResult.
 */
ingot_status_t ingot_objstore_list(ingot_objstore_t *client, const char *prefix_url,
                                   uint32_t page_keys, size_t max_entries, uint64_t deadline_ns,
                                   ingot_objstore_listing_t *listing_p);

/** Free a listing's entries and zero it. Accepts NULL. */
void ingot_objstore_listing_free(ingot_objstore_listing_t *listing);

/* ------------------------------------------------------------------ telemetry */


typedef struct ingot_objstore_stats {
    uint64_t requests; /**< requests completed (each once, whatever its attempts) */
    uint64_t failed;   /**< of which failed */
    uint64_t attempts; /**< HTTP requests sent */
    uint64_t bytes;    /**< payload bytes received into caller memory */
    uint64_t retries[INGOT_OBJSTORE_RETRY_CLASSES]; /**< by class */
    uint64_t throttle_events; /**< concurrency lowered after a SlowDown or 429 */
    uint64_t rate_waits;      /**< starts delayed by INGOT_S3_RATE_LIMIT */
    uint64_t latency_p50_ns;  /**< successful GET attempts, first byte asked to last received */
    uint64_t latency_p99_ns;
    uint64_t latency_count;
    uint64_t hedges;     /**< hedge attempts started (INGOT_S3_HEDGE) */
    uint64_t hedge_wins; /**< requests a hedge finished first */
} ingot_objstore_stats_t;

/** A snapshot of @p client's counters (any thread; the counters are not reset). */
void ingot_objstore_stats(const ingot_objstore_t *client, ingot_objstore_stats_t *stats_p);

#endif
