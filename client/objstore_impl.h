/*
 * The client's insides, shared by its files: objstore.c (create, destroy), io.c (the queue,
 * the I/O thread and its scheduling), object.c (objects and the bucket table), transfer.c (one attempt on a curl easy
 * handle: headers and body into the caller's memory), response.c (what an ended attempt means:
 * done, retried or failed, and the message), sign.c (the headers and SigV4 options of an
 * attempt). The I/O thread owns every field marked "io"; the rest is set before it starts or
 * guarded by the lock named beside it.
 */
#ifndef INGOT_CLIENT_OBJSTORE_IMPL_H
#define INGOT_CLIENT_OBJSTORE_IMPL_H

#include "client/objstore.h"
#include "client/credentials.h"
#include "client/hedge.h"
#include "client/retry.h"
#include "client/stats.h"
#include "client/url.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>

/** Buckets (or HTTP hosts) one client can throttle separately. */
#define INGOT_OBJSTORE_MAX_BUCKETS 64
/** Bytes of an error answer's body kept for its code and region. */
#define INGOT_OBJSTORE_ERRBODY_MAX 4096
/** Headers of one attempt: x-amz-content-sha256, x-amz-security-token, If-Match. */
#define INGOT_OBJSTORE_MAX_HEADERS 3

/** Which list holds a request (ingot_objstore_req_private_t.where). */
enum {
    INGOT_OBJSTORE_REQ_NONE,    /* the caller's */
    INGOT_OBJSTORE_REQ_QUEUED,  /* in the submit queue (lock) */
    INGOT_OBJSTORE_REQ_PENDING, /* io: waiting for a slot, a token or its backoff */
    INGOT_OBJSTORE_REQ_ACTIVE   /* io: on a transfer slot */
};

typedef struct ingot_objstore_bucket {
    char name[256];                     /* the bucket, or the http(s) host */
    ingot_objstore_throttle_t throttle; /* io */
} ingot_objstore_bucket_t;

struct ingot_objstore_object {
    ingot_objstore_t *client;
    ingot_location_t url; /* what it is (a copy: its text, bucket or host, key) */
    char *request_url;    /* encoded: what curl is given */
    char *endpoint;       /* for messages: the endpoint, or scheme://host */
    uint32_t bucket;      /* index in the client's bucket table */
    int sign;             /* SigV4 (s3://) */
};

/** Request list (intrusive, through priv.next/prev). */
typedef struct ingot_objstore_reqlist {
    ingot_objstore_req_t *head, *tail;
    size_t count;
} ingot_objstore_reqlist_t;

void ingot_objstore_reqlist_push(ingot_objstore_reqlist_t *l, ingot_objstore_req_t *r);
void ingot_objstore_reqlist_remove(ingot_objstore_reqlist_t *l, ingot_objstore_req_t *r);

/** One transfer in flight: an easy handle and what its answer has said so far. */
typedef struct ingot_objstore_slot {
    CURL *easy;
    ingot_objstore_t *client;
    ingot_objstore_req_t *req; /* NULL when free */
    uint64_t start_ns;
    uint64_t last_byte_ns; /* when the answer last made progress (stall detection) */
    uint64_t max_gap_ns;   /* the longest wait between two pieces of its body so far */
    int stalled;           /* ended by the I/O thread: no byte for INGOT_S3_STALL_TIMEOUT */
    int hedge;             /* a hedge: outside the bucket's AIMD window */
    uint64_t first, last;  /* the range asked for by this attempt (ranged GETs) */
    /* request headers: nodes of a curl_slist we own (no allocation per request) */
    struct curl_slist hdr[INGOT_OBJSTORE_MAX_HEADERS];
    char if_match[INGOT_OBJSTORE_ETAG_MAX + 16];
    char *token_hdr; /* "x-amz-security-token: ..." (grown when a token grows) */
    size_t token_cap;
    /* the answer */
    long http;     /* from the status line */
    int has_range; /* a Content-Range was received */
    uint64_t cr_first, cr_last, cr_total;
    int64_t content_length; /* -1: none, or not a number */
    char etag[INGOT_OBJSTORE_ETAG_MAX + 1];
    char bucket_region[64]; /* x-amz-bucket-region */
    int checked;            /* the status and headers were judged before the first byte */
    int to_caller;          /* 1: the body is data for the caller, 0: an error body */
    ingot_status_t fatal;   /* not INGOT_OK: a check failed, message in fatal_msg */
    char fatal_msg[320];
    int iov_i; /* where the next byte goes */
    size_t iov_off;
    uint64_t got;   /* data bytes of this attempt */
    size_t put_off; /* PUT: body bytes sent by this attempt */
    char errbody[INGOT_OBJSTORE_ERRBODY_MAX + 1];
    size_t errlen;
} ingot_objstore_slot_t;

struct ingot_objstore {
    ingot_objstore_config_t cfg;
    int signing;                        /* settings below are resolved (s3 client) */
    ingot_objstore_settings_t settings; /* io after create (refreshed on ExpiredToken) */
    pthread_mutex_t settings_lock;      /* guards settings' strings for describe/identity */
    uint64_t creds_checked_ns;          /* io: last proactive refresh attempt */
    char sigv4[96];                     /* "aws:amz:REGION:s3" */

    CURLM *multi;
    pthread_t thread;
    int thread_started;
    _Atomic int stop;

    pthread_mutex_t lock; /* guards queue, destroying */
    ingot_objstore_reqlist_t queue;
    int destroying;

    ingot_objstore_reqlist_t pending; /* io */
    ingot_objstore_slot_t *slots;     /* io */
    ingot_objstore_slot_t **free_slots;
    size_t nslots, nfree;
    ingot_objstore_budget_t budget; /* io */
    ingot_objstore_hedge_t hedge;   /* io */
    size_t hedge_slots;             /* slots beyond INGOT_S3_CONNECTIONS, for hedges only */
    uint64_t rng;                   /* io: jitter */

    pthread_mutex_t buckets_lock; /* guards adding buckets */
    ingot_objstore_bucket_t buckets[INGOT_OBJSTORE_MAX_BUCKETS];
    _Atomic uint32_t nbuckets;

    ingot_objstore_counters_t counters;
};

/* io.c */
/** The I/O thread's body (@p arg: the client). */
void *ingot_objstore_io_main(void *arg);
/** INGOT_OK, or INGOT_ERR_INVALID_PARAM (logged) for a ranged request that cannot be run. */
ingot_status_t ingot_objstore_req_check(const ingot_objstore_t *c, const ingot_objstore_req_t *r);
/** Queue @p req as it is (checked, priv.whole and priv.query set by the caller). */
ingot_status_t ingot_objstore_submit_internal(ingot_objstore_t *c, ingot_objstore_req_t *req);
/** Stop every attempt of @p keep's request but @p keep (one of them finished it). */
void ingot_objstore_twins_stop(ingot_objstore_t *c, ingot_objstore_slot_t *keep);
/** Complete @p req: set its status, count it, run its callback (io thread or destroy). */
void ingot_objstore_req_complete(ingot_objstore_t *c, ingot_objstore_req_t *req,
                                 ingot_status_t status);

/* object.c */
/** An object of @p url (copied); with @p list, a bucket-level object (a prefix) that LIST
 *  requests. */
ingot_status_t ingot_objstore_object_make(ingot_objstore_t *client, const ingot_location_t *url,
                                          int list, ingot_objstore_object_t **object_p);
/** "bucket 'b', key 'k' at ENDPOINT" of @p req's object plus its range, for messages. */
void ingot_objstore_req_describe(const ingot_objstore_req_t *req, char *buf, size_t len);

/* blocking.c */
/** Run a whole-object GET (or, with @p query, a LIST page) of @p object and wait; the body is
 *  in req->priv.buf (req->priv.done bytes; the caller frees it, also on failure). */
ingot_status_t ingot_objstore_fetch_body(ingot_objstore_t *c, const ingot_objstore_object_t *object,
                                         const char *query, uint64_t max_size, uint64_t deadline_ns,
                                         ingot_objstore_req_t *req);

/** A whole-object request of any kind: a GET (@p query NULL), a LIST page, or a PUT of
 *  @p put_size bytes of @p put (not NULL). */
ingot_status_t ingot_objstore_whole(ingot_objstore_t *c, const ingot_objstore_object_t *object,
                                    const char *query, const void *put, size_t put_size,
                                    uint64_t max_size, uint64_t deadline_ns,
                                    ingot_objstore_req_t *req);

/* transfer.c */
ingot_status_t ingot_objstore_slot_init(ingot_objstore_t *c, ingot_objstore_slot_t *s);
void ingot_objstore_slot_fini(ingot_objstore_slot_t *s);
/** Set up and add @p req's next attempt on @p s. INGOT_OK or an error to fail it with. */
ingot_status_t ingot_objstore_attempt_start(ingot_objstore_t *c, ingot_objstore_slot_t *s,
                                            ingot_objstore_req_t *req, uint64_t now);
/**
 * Read one header line of an answer into @p s (@p len bytes, not NUL-terminated, its CRLF
 * included, as libcurl hands it over): a status line starts a new answer; Content-Range
 * ("bytes FIRST-LAST/TOTAL"), Content-Length, ETag and x-amz-bucket-region are kept; the rest is
 * ignored. The header callback's body, and the fuzz target's entry point.
 */
void ingot_objstore_slot_header(ingot_objstore_slot_t *s, const char *h, size_t len);
/** Judge the answer before its first byte (also called at the end of a body-less answer). */
void ingot_objstore_slot_check(ingot_objstore_slot_t *s);

/* response.c */
/** An attempt ended with @p rc: complete, fail or re-queue its request; frees nothing. */
void ingot_objstore_attempt_done(ingot_objstore_t *c, ingot_objstore_slot_t *s, CURLcode rc,
                                 uint64_t now);
/** Fail @p req with @p status: message (prefixed with what and where), logged once. */
void ingot_objstore_req_fail(ingot_objstore_t *c, ingot_objstore_req_t *req, ingot_status_t status,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* sign.c */
/** Set @p s's URL, headers and signing options for an attempt of @p req. */
ingot_status_t ingot_objstore_sign_attempt(ingot_objstore_t *c, ingot_objstore_slot_t *s,
                                           const ingot_objstore_req_t *req);
/** Re-read credentials after ExpiredToken or before they expire (io thread). */
ingot_status_t ingot_objstore_creds_refresh(ingot_objstore_t *c);
/** Refresh credentials that expire within 5 minutes (io thread, at most every 10 s). */
void ingot_objstore_creds_check_expiry(ingot_objstore_t *c, uint64_t now);

#endif
