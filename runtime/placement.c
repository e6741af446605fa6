/* Public topology queries of a context: its placement and the node's devices. Each writes only
 * the fields the caller's field_mask names (base/field_mask.h). */
#include "runtime/context_impl.h"
#include "base/field_mask.h"
#include "base/log.h"
#include "base/status.h"

#define PL_SPAN(_bit, _first, _last) \
    INGOT_FIELD_SPAN(INGOT_PLACEMENT_FIELD_##_bit, ingot_placement_t, _first, _last)
#define SUM_SPAN(_bit, _first, _last) \
    INGOT_FIELD_SPAN(INGOT_TOPOLOGY_SUMMARY_FIELD_##_bit, ingot_topology_summary_t, _first, _last)
#define DEV_SPAN(_bit, _first, _last) \
    INGOT_FIELD_SPAN(INGOT_TOPOLOGY_DEVICE_FIELD_##_bit, ingot_topology_device_t, _first, _last)

static const ingot_field_span_t placement_spans[] = {
    PL_SPAN(NODE, node_id, hostname),
    PL_SPAN(GPU, gpu_index, gpu_ranks),
    PL_SPAN(NIC, nic_name, nic_distance),
    PL_SPAN(CPUS, numa_node, trainer_cpuset),
    PL_SPAN(ENV, cuda_visible_devices, nccl_ib_hca),
    PL_SPAN(FLAGS, flags, conflict)};

static const ingot_field_span_t summary_spans[] = {
    SUM_SPAN(HOST, hostname, source), SUM_SPAN(COUNTS, packages, storage),
    SUM_SPAN(CPUSET, allowed_cpuset, allowed_cpuset)};

static const ingot_field_span_t device_spans[] = {
    DEV_SPAN(NAME, kind, pci_busid), DEV_SPAN(NUMA, numa_node, package), DEV_SPAN(PORT, port, port),
    DEV_SPAN(LOCALITY, locality, locality)};

ingot_status_t ingot_placement_get(ingot_ctx_h ctx, ingot_placement_t *placement_p)
{
    if (ctx == NULL || placement_p == NULL) {
        ingot_error("ingot_placement_get: NULL %s", ctx == NULL ? "ctx" : "placement_p");
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_field_mask_copy(placement_p, &ctx->topo->placement, placement_p->field_mask,
                          placement_spans, INGOT_ARRAY_SIZE(placement_spans));
    return INGOT_OK;
}

ingot_status_t ingot_topology_query(ingot_ctx_h ctx, ingot_topology_summary_t *summary_p)
{
    if (ctx == NULL || summary_p == NULL) {
        ingot_error("ingot_topology_query: NULL %s", ctx == NULL ? "ctx" : "summary_p");
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_topology_summary_t all;
    ingot_topo_summary_fill(ctx->topo->topo, &all);
    ingot_field_mask_copy(summary_p, &all, summary_p->field_mask, summary_spans,
                          INGOT_ARRAY_SIZE(summary_spans));
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
        ingot_field_mask_copy(dev_p, &dev, dev_p->field_mask, device_spans,
                              INGOT_ARRAY_SIZE(device_spans));
    }
    return st;
}
