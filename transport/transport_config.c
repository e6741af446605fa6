/* The transport's INGOT_PEER_* variables: the peer read protocol, the peer deadline, what a silent
 * peer makes of the job, and who allocates windows. */
#include "transport/transport.h"
#include "base/config.h"
#include <limits.h>
#include <stddef.h>

#define F(_field) offsetof(ingot_transport_config_t, _field)

_Static_assert(sizeof(ingot_peer_protocol_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_peer_failure_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_peer_window_t) == sizeof(int), "enum variables are stored as int");

const char *const ingot_peer_failure_names[] = {[INGOT_PEER_FAILURE_ABORT] = "abort",
                                                [INGOT_PEER_FAILURE_STORAGE] = "storage",
                                                [INGOT_PEER_FAILURE_STORAGE + 1] = NULL};

static const char *const windows[] = {[INGOT_PEER_WINDOW_UCX] = "ucx",
                                      [INGOT_PEER_WINDOW_REGISTERED] = "registered",
                                      [INGOT_PEER_WINDOW_REGISTERED + 1] = NULL};

static const ingot_config_field_t transport_fields[] = {
    {"PEER_PROTOCOL", "auto",
     "How a rank reads a peer's cache window: 'get' (ucp_get_nbx; zero-copy over shared memory "
     "and RDMA), 'am' (an active-message request answered by the owner with the bytes; for "
     "tcp, where UCX only emulates get), 'put' (an active-message request; the owner puts the "
     "bytes into the requester's registered buffer, flushes and answers; measured slower than "
     "am over tcp and than get over shared memory with UCX 1.13, docs/cache.md), or 'auto' "
     "(get where UCX has an RMA lane for the pair other than tcp, am elsewhere).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(protocol), 0, 0, ingot_peer_protocol_names, NULL,
     NULL, NULL},
    {"PEER_TIMEOUT", "10s",
     "Deadline of every read from a peer's cache window (UCX cannot see a stopped peer, and its "
     "keepalive finds a dead one only after 20 s on tcp); what happens then is "
     "INGOT_PEER_FAILURE.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_DURATION, F(peer_timeout), 1000000, INT64_MAX, NULL, NULL,
     NULL, NULL},
    {"PEER_FAILURE", "abort",
     "What a read from a peer that misses INGOT_PEER_TIMEOUT does: 'abort' fails the batch with "
     "an error naming the rank (the job ends), 'storage' reads that peer's samples from storage "
     "from then on (a peer alive but late: stopped, overloaded).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(peer_failure), 0, 0, ingot_peer_failure_names,
     NULL, NULL, NULL},
    {"PEER_WINDOW", "ucx",
     "Who allocates a rank's window that peers read (the peer cache's): 'ucx' (ucp_mem_map "
     "allocates it in shared memory; measured 3x faster to read over cma than 'registered' on a "
     "2-core VM, docs/cache.md) or 'registered' (ingot's huge-page, NUMA-bound memory, "
     "registered with ucp_mem_map). Formerly INGOT_CACHE_WINDOW, still read when this is unset.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(window), 0, 0, windows, NULL, NULL,
     "CACHE_WINDOW"},
};

INGOT_CONFIG_MODULE(ingot_transport, "transport", INGOT_CONFIG_ORDER_RUNTIME + 1, transport_fields,
                    ingot_transport_config_t, NULL)
