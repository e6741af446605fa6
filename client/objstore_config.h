/*
 * The object store's INGOT_S3_* variables (objstore_config.c): part size, connections, retries
 * and their budget, backoff, the request-rate cap, stall and connect timeouts, the metadata
 * service's deadline, curl's receive buffer, hedged GETs.
 */
#ifndef INGOT_CLIENT_OBJSTORE_CONFIG_H
#define INGOT_CLIENT_OBJSTORE_CONFIG_H

#include "base/config.h"
#include <stdint.h>

typedef struct ingot_objstore_config {
    uint64_t part_size;        /* bytes of one coalesced ranged GET */
    int64_t connections;       /* transfers in flight at once, and connections per host */
    int64_t max_retries;       /* retries of one request (0: until its deadline) */
    int64_t retry_budget;      /* client-wide retry tokens (0: never retry) */
    uint64_t backoff_base_ns;  /* first backoff ceiling */
    uint64_t backoff_max_ns;   /* largest backoff ceiling */
    int64_t rate_limit;        /* requests started per second per bucket (0: no cap) */
    uint64_t stall_timeout_ns; /* no byte for this long: the attempt is retried */
    uint64_t connect_timeout_ns;
    uint64_t imds_timeout_ns;  /* the whole IMDSv2 exchange */
    uint64_t recv_buffer;      /* CURLOPT_BUFFERSIZE */
    int64_t hedge;             /* hedge after this many times the p95 (0: never) */
    uint64_t hedge_floor_ns;   /* ... but not before this */
    uint64_t hedge_ceiling_ns; /* ... nor later than this */
} ingot_objstore_config_t;

extern ingot_config_table_t ingot_objstore_config_table;


/** The process-wide values (parsed from the environment at the first call). */
ingot_status_t ingot_objstore_config(const ingot_objstore_config_t **cfg_p);

#endif
