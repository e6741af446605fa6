/*
 * Consumer of an installed ingot: init (ingot brings MPI up), query, finalize. It includes only
 * the umbrella header and uses a symbol of every module header through it, so a header left
 * out of ingot.h (or not installed) fails this build.
 */
#include <ingot/ingot.h>
#include <stdio.h>
#include <string.h>

/* One call or constant per public header; returns the number that misbehaved. */
static int use_every_header(ingot_ctx_h ctx)
{
    int bad = 0;
    char value[64];
    ingot_manifest_h m; /* shard.h */
    bad += ingot_manifest_open("/nonexistent/manifest.ingot", 0, &m) != INGOT_ERR_NOT_FOUND;
    ingot_order_params_t op = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | /* order.h */
                                             INGOT_ORDER_PARAM_FIELD_BATCH,
                               .sample_count = 10,
                               .global_batch = 5};
    ingot_order_h order;
    bad += ingot_order_create(&op, &order) != INGOT_OK || ingot_order_steps(order) != 2;
    ingot_order_destroy(order);
    ingot_loader_h loader; /* loader.h */
    bad += ingot_loader_create(ctx, NULL, &loader) != INGOT_ERR_INVALID_PARAM;
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_NODE}; /* topology.h */
    bad += ingot_placement_get(ctx, &pl) != INGOT_OK || pl.local_size < 1;
    bad += strcmp(ingot_topology_distance_name(INGOT_TOPOLOGY_DISTANCE_NUMA), "numa") != 0;
    ingot_runtime_info_t ri = {.field_mask = 0}; /* info.h */
    bad += ingot_runtime_info_query(&ri) != INGOT_OK;
    bad += ingot_config_get("LOG_LEVEL", value, sizeof(value)) != INGOT_OK; /* config.h */
    bad += strcmp(ingot_status_string(INGOT_OK), "") == 0;                  /* status.h */
    ingot_packer_h packer;                                                  /* pack.h */
    bad += ingot_packer_create(NULL, &packer) != INGOT_ERR_INVALID_PARAM;
    bad += INGOT_BIT(1) != 2; /* def.h */
    return bad;
}

int main(void)
{
    ingot_ctx_h ctx;
    ingot_ctx_attr_t attr = {.field_mask = INGOT_CTX_ATTR_FIELD_RANK | INGOT_CTX_ATTR_FIELD_SIZE};
    if (strcmp(ingot_version_string(), INGOT_VERSION_STRING) != 0) { /* version.h */
        fprintf(stderr, "header %s != library %s\n", INGOT_VERSION_STRING, ingot_version_string());
        return 1;
    }
    if (ingot_init(NULL, &ctx) != INGOT_OK || ingot_ctx_query(ctx, &attr) != INGOT_OK) {
        return 1;
    }
    int bad = use_every_header(ctx);
    if (bad != 0) {
        fprintf(stderr, "consumer: %d public call(s) misbehaved\n", bad);
        ingot_finalize(ctx);
        return 1;
    }
    printf("consumer: ingot %s, rank %d of %d\n", ingot_version_string(), attr.rank, attr.size);
    ingot_finalize(ctx);
    return 0;
}
