/* The transport's INGOT_* variables: the peer read protocol and the peer deadline. */
#include "runtime/transport/transport_impl.h"
#include <limits.h>
#include <stddef.h>

#define F(_field) offsetof(ingot_transport_config_t, _field)

_Static_assert(sizeof(ingot_peer_protocol_t) == sizeof(int), "enum variables are stored as int");

static const ingot_config_field_t transport_fields[] = {
    {"PEER_PROTOCOL", "auto",
     "How a rank reads a peer's cache window: 'get' (ucp_get_nbx; zero-copy over shared memory "
     "and RDMA), 'am' (an active-message request answered by the owner, rendezvous into the "
     "destination; for tcp, where UCX only emulates get), or 'auto' (get where UCX has an RMA "
     "lane for the pair other than tcp, am elsewhere).",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_ENUM, F(protocol), 0, 0, ingot_peer_protocol_names, NULL},
    {"PEER_TIMEOUT", "10s",
     "Deadline of every read from a peer's cache window (UCX cannot see a stopped peer, and its "
     "keepalive finds a dead one only after 20 s on tcp); what happens then is "
     "INGOT_PEER_FAILURE.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_DURATION, F(peer_timeout), 1000000, INT64_MAX, NULL,
     NULL},
};

INGOT_CONFIG_MODULE(ingot_transport, "transport", INGOT_CONFIG_ORDER_RUNTIME + 1, transport_fields,
                    ingot_transport_config_t, NULL)
