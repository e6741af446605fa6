/* The object store's INGOT_S3_* variables: one table, registered with base's registry. */
#include "client/objstore_config.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_objstore_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK
#define MS        1000000LL
#define SEC       1000000000LL

/* Where ingot-info -c shows the table: where it stood while the client was part of the source
 * layer (the transport and the cache sit at the runtime's order + 1 and + 2), just before the
 * runtime's, so the output keeps its order. */
#define INGOT_OBJSTORE_CONFIG_ORDER (INGOT_CONFIG_ORDER_RUNTIME - 5)

/* Rows are name, default, doc; then scope, type, offset, bounds: kept as laid out by hand. */
/* clang-format off */
static const ingot_config_field_t objstore_fields[] = {
    {"S3_PART_SIZE", "8MiB",
     "Bytes of one ranged GET of the part cache (a shard is cut into equal parts of at most this "
     "and an eighth) and of a large read's pieces. Measured against SeaweedFS on loopback "
     "(client/README.md): 8 MiB parts, 4 in flight, match one curl GET of the whole "
     "object; 1 MiB parts cost the server 3-4x the CPU per GiB and halve the rate; 16 MiB gains "
     "under 6% and doubles the latency and the memory of each transfer.",
     JOB, INGOT_CONFIG_SIZE, F(part_size), 64 * 1024, 1024LL * 1024 * 1024, NULL, NULL, NULL, NULL},
    {"S3_CONNECTIONS", "16",
     "Transfers in flight at once per client, and the cap on connections per host "
     "(CURLMOPT_MAX_HOST_CONNECTIONS). Each is a keep-alive HTTP/1.1 connection: S3 does not "
     "multiplex. Hedged GETs (INGOT_S3_HEDGE) have a quarter more, plus one, of their own.",
     RANK, INGOT_CONFIG_INT, F(connections), 1, 512, NULL, NULL, NULL, NULL},
    {"S3_MAX_RETRIES", "0",
     "Retries of one request (503 SlowDown, 500, 502, 504, 429, resets, refused connections, "
     "stalls) before it fails; 0: no count, the request is retried until its deadline "
     "(INGOT_TIMEOUT for the loader's reads).",
     JOB, INGOT_CONFIG_INT, F(max_retries), 0, 1000000, NULL, NULL, NULL, NULL},
    {"S3_RETRY_BUDGET", "500",
     "Retry tokens shared by a client's requests: a retry after a server error, a reset or a "
     "stall costs 5, a success gives 1 back; throttling (SlowDown, 429) costs none, since the "
     "concurrency drops instead. Once the budget is spent, retries wait INGOT_S3_BACKOFF_MAX "
     "each (a failing store is not hammered) and go on until the request's deadline. "
     "0: never retry.",
     JOB, INGOT_CONFIG_INT, F(retry_budget), 0, 100000000, NULL, NULL, NULL, NULL},
    {"S3_BACKOFF_BASE", "50ms",
     "Ceiling of the first retry's wait; the n-th waits a random time in [0, min(base * 2^n, "
     "INGOT_S3_BACKOFF_MAX)] (full jitter).",
     JOB, INGOT_CONFIG_DURATION, F(backoff_base_ns), 1 * MS, 60 * SEC, NULL, NULL, NULL, NULL},
    {"S3_BACKOFF_MAX", "2s", "Largest ceiling of a retry's wait.",
     JOB, INGOT_CONFIG_DURATION, F(backoff_max_ns), 1 * MS, 600 * SEC, NULL, NULL, NULL, NULL},
    {"S3_RATE_LIMIT", "0",
     "Requests started per second to one bucket (or HTTP host) by this client; 0: no cap. AWS "
     "serves about 5,500 GET/s per prefix.",
     RANK, INGOT_CONFIG_INT, F(rate_limit), 0, 10000000, NULL, NULL, NULL, NULL},
    {"S3_STALL_TIMEOUT", "5s",
     "An attempt that receives no byte for this long (waiting for the answer or inside its body) "
     "is abandoned, its connection closed, and retried; a ranged GET resumes after the bytes it "
     "has.",
     JOB, INGOT_CONFIG_DURATION, F(stall_timeout_ns), 100 * MS, 3600 * SEC, NULL, NULL, NULL, NULL},
    {"S3_CONNECT_TIMEOUT", "3s", "Deadline of one TCP (and TLS) connect.",
     JOB, INGOT_CONFIG_DURATION, F(connect_timeout_ns), 10 * MS, 600 * SEC, NULL, NULL, NULL, NULL},
    {"S3_IMDS_TIMEOUT", "1s",
     "Deadline of the whole instance-metadata exchange (IMDSv2 token, role, credentials); an "
     "unreachable service is named after it.",
     JOB, INGOT_CONFIG_DURATION, F(imds_timeout_ns), 10 * MS, 60 * SEC, NULL, NULL, NULL, NULL},
    {"S3_RECV_BUFFER", "512KiB",
     "libcurl's receive buffer per transfer (CURLOPT_BUFFERSIZE): the bytes read from the socket "
     "per call, copied from it once into the caller's memory.",
     RANK, INGOT_CONFIG_SIZE, F(recv_buffer), 16 * 1024, 10 * 1024 * 1024, NULL, NULL, NULL, NULL},
    {"S3_HEDGE", "3",
     "Hedged GETs: a ranged GET still running after this many times the p95 of the client's "
     "recent GETs of its size (within INGOT_S3_HEDGE_FLOOR and INGOT_S3_HEDGE_CEILING) gets a "
     "second GET for the bytes it still lacks, on another connection; the first to finish wins, "
     "the other is stopped. Covers the stalled GET before INGOT_S3_STALL_TIMEOUT and the one that "
     "trickles, which the stall timeout never catches. Hedges draw on tokens that one request in "
     "ten earns. 0: never hedge.",
     JOB, INGOT_CONFIG_INT, F(hedge), 0, 1000, NULL, NULL, NULL, NULL},
    {"S3_HEDGE_FLOOR", "100ms", "The earliest a GET is hedged (see INGOT_S3_HEDGE).",
     JOB, INGOT_CONFIG_DURATION, F(hedge_floor_ns), 1 * MS, 3600 * SEC, NULL, NULL, NULL, NULL},
    {"S3_HEDGE_CEILING", "2s",
     "The latest a GET is hedged, and when it is hedged while the client has not yet seen "
     "enough GETs of its size (see INGOT_S3_HEDGE).",
     JOB, INGOT_CONFIG_DURATION, F(hedge_ceiling_ns), 1 * MS, 3600 * SEC, NULL, NULL, NULL, NULL},
};
/* clang-format on */

INGOT_CONFIG_MODULE(ingot_objstore, "objstore", INGOT_OBJSTORE_CONFIG_ORDER, objstore_fields,
                    ingot_objstore_config_t, NULL)
