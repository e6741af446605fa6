/* The transport's INGOT_* variables: the peer read protocol and the peer deadline. */
#include "transport/transport_impl.h"
#include <limits.h>
#include <stddef.h>

#define F(_field) offsetof(ingot_transport_config_t, _field)

_Static_assert(sizeof(ingot_peer_protocol_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_cache_window_t) == sizeof(int), "enum variables are stored as int");

static const char *const windows[] = {[INGOT_CACHE_WINDOW_UCX] = "ucx",
                                      [INGOT_CACHE_WINDOW_REGISTERED] = "registered",
                                      [INGOT_CACHE_WINDOW_REGISTERED + 1] = NULL};

static const ingot_config_field_t transport_fields[] = {
    {"PEER_PROTOCOL", "auto",
     "How a rank reads a peer's cache window: 'get' (ucp_get_nbx; zero-copy over shared memory "
     "and RDMA), 'am' (an active-message request answered by the owner with the bytes; for "
     "tcp, where UCX only emulates get), 'put' (an active-message request; the owner puts the "
     "bytes into the requester's registered buffer, flushes and answers; measured slower than "
     "am over tcp and than get over shared memory with UCX 1.13, docs/cache.md), or 'auto' "
     "(get where UCX has an RMA lane for the pair other than tcp, am elsewhere).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(protocol), 0, 0, ingot_peer_protocol_names, NULL},
    {"PEER_TIMEOUT", "10s",
     "Deadline of every read from a peer's cache window (UCX cannot see a stopped peer, and its "
     "keepalive finds a dead one only after 20 s on tcp); what happens then is "
     "INGOT_PEER_FAILURE.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_DURATION, F(peer_timeout), 1000000, INT64_MAX, NULL,
     NULL},
    {"CACHE_WINDOW", "ucx",
     "Who allocates a rank's cache window: 'ucx' (ucp_mem_map allocates it in shared memory; "
     "measured 3x faster to read over cma than 'registered' on a 2-core VM, docs/cache.md) or "
     "'registered' (ingot's huge-page, NUMA-bound memory, registered with ucp_mem_map).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(window), 0, 0, windows, NULL},
};

INGOT_CONFIG_MODULE(ingot_transport, "transport", INGOT_CONFIG_ORDER_RUNTIME + 1, transport_fields,
                    ingot_transport_config_t, NULL)
