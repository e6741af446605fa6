/* Public topology queries of a context: its placement and the node's devices. */
#include "runtime/context_impl.h"
#include "base/log.h"

ingot_status_t ingot_placement_get(ingot_ctx_h ctx, ingot_placement_t *placement_p)
{
    if (ctx == NULL || placement_p == NULL) {
        ingot_error("ingot_placement_get: NULL %s", ctx == NULL ? "ctx" : "placement_p");
        return INGOT_ERR_INVALID_PARAM;
    }
    *placement_p = ctx->topo->placement;
    return INGOT_OK;
}

ingot_status_t ingot_topology_query(ingot_ctx_h ctx, ingot_topology_summary_t *summary_p)
{
    if (ctx == NULL || summary_p == NULL) {
        ingot_error("ingot_topology_query: NULL %s", ctx == NULL ? "ctx" : "summary_p");
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_topo_summary_fill(ctx->topo->topo, summary_p);
    return INGOT_OK;
}

ingot_status_t ingot_topology_device_query(ingot_ctx_h ctx, ingot_topology_device_kind_t kind,
                                           int index, ingot_topology_device_t *dev_p)
{
    ingot_topology_device_t dev;
    if (ctx == NULL || dev_p == NULL) {
        ingot_error("ingot_topology_device_query: NULL %s", ctx == NULL ? "ctx" : "dev_p");
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_status_t st = ingot_topo_device_fill(ctx->topo->topo, kind, index, &dev);
    if (st == INGOT_OK) {
        *dev_p = dev;
    }
    return st;
}
