/*
 * What this build contains and what it finds at run time: CUDA devices (base/cuda.c), NCCL
 * (dlopen'ed, never linked, so a host-only node or a framework with its own NCCL is unaffected),
 * UCX version, memory types and transports.
 */
#include <ingot/info.h>
#include <ingot/version.h>
#include "runtime/context_impl.h"
#include "transport/transport.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/field_mask.h"
#include "base/log.h"
#include "collectives/nccl_load.h"
#include "base/status.h"
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#include <ucs/memory/memory_type.h>
#include <zlib.h>
#include <zstd.h>

static void info_nccl(ingot_runtime_info_t *info)
{
    info->nccl_compiled = INGOT_BUILD_NCCL;
    info->nccl_version = ingot_nccl_probe_version(info->nccl_reason, sizeof(info->nccl_reason));
}

static void format_mem_types(uint64_t mask, char *buf, size_t buflen)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int t = 0; t < UCS_MEMORY_TYPE_LAST && o < buflen; t++) {
        if (mask & (1ull << t)) {
            o += (size_t)snprintf(buf + o, buflen - o, "%s%s", o ? "," : "",
                                  ucs_memory_type_names[t]);
        }
    }
}

/* Called for every memory domain UCX offers, open, with its attributes and transports (or
 * with @p error when it cannot be opened). */
typedef void (*md_fn_t)(void *arg, const char *comp_name, const char *md_name,
                        const uct_md_attr_t *attr, const uct_tl_resource_desc_t *tls, unsigned ntls,
                        const char *error);
static ingot_status_t for_each_md(md_fn_t fn, void *arg);
static void md_cuda_transports(void *arg, const char *comp_name, const char *md_name,
                               const uct_md_attr_t *attr, const uct_tl_resource_desc_t *tls,
                               unsigned ntls, const char *error);

static ingot_status_t info_ucx(ingot_runtime_info_t *info)
{
    ucp_get_version(&info->ucx_major, &info->ucx_minor, &info->ucx_release);
    ucp_config_t *config;
    ingot_status_t st = INGOT_UCX_CALL("runtime info", ucp_config_read, NULL, NULL, &config);
    if (st != INGOT_OK) {
        return st;
    }
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_TAG};
    ucp_context_h ucp;
    st = INGOT_UCX_CALL("runtime info", ucp_init, &params, config, &ucp);
    ucp_config_release(config);
    if (st != INGOT_OK) {
        return st;
    }
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    st = INGOT_UCX_CALL("runtime info", ucp_context_query, ucp, &attr);
    if (st == INGOT_OK) {
        format_mem_types(attr.memory_types, info->ucx_memory_types, sizeof(info->ucx_memory_types));
        info->ucx_cuda_memory = !!(attr.memory_types & (1ull << UCS_MEMORY_TYPE_CUDA));
    }
    ucp_cleanup(ucp);
    info->ucx_cuda_transports[0] = '\0';
    if (st == INGOT_OK && info->ucx_cuda_memory) {
        for_each_md(md_cuda_transports, info);
    }
    return st;
}

/* Versions of zstd and zlib as loaded (not those of the headers built with); hwloc's library
 * can only say its API version (2.9 has 2.8's), so its release is the one built against. */
static void info_libs(ingot_runtime_info_t *info)
{
    snprintf(info->version_hwloc, sizeof(info->version_hwloc), "%s", HWLOC_VERSION);
    snprintf(info->version_zstd, sizeof(info->version_zstd), "%s", ZSTD_versionString());
    snprintf(info->version_zlib, sizeof(info->version_zlib), "%s", zlibVersion());
}

/* The members each ingot_runtime_info_field bit covers. */
static const ingot_field_span_t info_spans[] = {
    INGOT_FIELD_SPAN(INGOT_RUNTIME_INFO_FIELD_CUDA, ingot_runtime_info_t, cuda_compiled,
                     cuda_reason),
    INGOT_FIELD_SPAN(INGOT_RUNTIME_INFO_FIELD_NCCL, ingot_runtime_info_t, nccl_compiled,
                     nccl_reason),
    INGOT_FIELD_SPAN(INGOT_RUNTIME_INFO_FIELD_UCX, ingot_runtime_info_t, ucx_major,
                     ucx_cuda_transports),
    INGOT_FIELD_SPAN(INGOT_RUNTIME_INFO_FIELD_LIBS, ingot_runtime_info_t, version_hwloc,
                     version_zlib)};

ingot_status_t ingot_runtime_info_query(ingot_runtime_info_t *info_p)
{
    if (info_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_runtime_info_query: NULL info_p");
    }
    uint64_t mask = info_p->field_mask;
    ingot_runtime_info_t all = {.cuda_compiled = INGOT_BUILD_CUDA,
                                .nccl_compiled = INGOT_BUILD_NCCL};
    if (mask & INGOT_RUNTIME_INFO_FIELD_CUDA) {
        const ingot_cuda_probe_t *p = ingot_cuda_probe();
        all.cuda_device_count = p->device_count;
        all.cuda_driver_version = p->driver_version;
        all.cuda_runtime_version = p->runtime_version;
        snprintf(all.cuda_reason, sizeof(all.cuda_reason), "%s", p->reason);
    }
    if (mask & INGOT_RUNTIME_INFO_FIELD_NCCL) {
        info_nccl(&all);
    }
    if (mask & INGOT_RUNTIME_INFO_FIELD_LIBS) {
        info_libs(&all);
    }
    if (mask & INGOT_RUNTIME_INFO_FIELD_UCX) {
        INGOT_CHECK(info_ucx(&all));
    }
    ingot_field_mask_copy(info_p, &all, mask, info_spans, INGOT_ARRAY_SIZE(info_spans));
    return INGOT_OK;
}

/* Called for every memory domain UCX offers, open, with its attributes and transports. */

static void md_visit(uct_component_h comp, const char *comp_name, const char *md_name, md_fn_t fn,
                     void *arg)
{
    uct_md_config_t *md_config;
    uct_md_h md;
    if (uct_md_config_read(comp, NULL, NULL, &md_config) != UCS_OK) {
        return;
    }
    ucs_status_t us = uct_md_open(comp, md_name, md_config, &md);
    uct_config_release(md_config);
    if (us != UCS_OK) {
        fn(arg, comp_name, md_name, NULL, NULL, 0, ucs_status_string(us));
        return;
    }
    uct_md_attr_t md_attr;
    int have_attr = (uct_md_query(md, &md_attr) == UCS_OK);
    uct_tl_resource_desc_t *tls = NULL;
    unsigned ntls = 0;
    if (uct_md_query_tl_resources(md, &tls, &ntls) == UCS_OK) {
        fn(arg, comp_name, md_name, have_attr ? &md_attr : NULL, tls, ntls, NULL);
        uct_release_tl_resource_list(tls);
    }
    uct_md_close(md);
}

/* Every memory domain of every UCX component. */
static ingot_status_t for_each_md(md_fn_t fn, void *arg)
{
    uct_component_h *comps;
    unsigned ncomps;
    ingot_status_t st = INGOT_UCX_CALL("transport list", uct_query_components, &comps, &ncomps);
    if (st != INGOT_OK) {
        return st;
    }
    for (unsigned c = 0; c < ncomps; c++) {
        uct_component_attr_t attr = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                                                   UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT};
        if (uct_component_query(comps[c], &attr) != UCS_OK) {
            continue;
        }
        uct_md_resource_desc_t mds[attr.md_resource_count ? attr.md_resource_count : 1];
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds;
        if (uct_component_query(comps[c], &attr) != UCS_OK) {
            continue;
        }
        for (unsigned m = 0; m < attr.md_resource_count; m++) {
            md_visit(comps[c], attr.name, mds[m].md_name, fn, arg);
        }
    }
    uct_release_component_list(comps);
    return INGOT_OK;
}

/* The transports that move CUDA memory: those of a domain that accesses it (cuda_copy,
 * cuda_ipc), and a NIC's that registers it (GPUDirect RDMA). */
static void md_cuda_transports(void *arg, const char *comp_name, const char *md_name,
                               const uct_md_attr_t *attr, const uct_tl_resource_desc_t *tls,
                               unsigned ntls, const char *error)
{
    ingot_runtime_info_t *info = arg;
    const uint64_t cuda = 1ull << UCS_MEMORY_TYPE_CUDA;
    (void)comp_name;
    (void)md_name;
    if (attr == NULL || error != NULL) {
        return;
    }
    int access = !!(attr->cap.access_mem_types & cuda), reg = !!(attr->cap.reg_mem_types & cuda);
    for (unsigned i = 0; i < ntls && (access || reg); i++) {
        char *out = info->ucx_cuda_transports;
        size_t used = strlen(out), len = sizeof(info->ucx_cuda_transports);
        char name[64];
        snprintf(name, sizeof(name), "%s%s", tls[i].tl_name, access ? "" : " (GPUDirect RDMA)");
        if (strstr(out, name) == NULL) {
            snprintf(out + used, len - used, "%s%s", used ? ", " : "", name);
        }
    }
}

static void md_print(void *arg, const char *comp_name, const char *md_name,
                     const uct_md_attr_t *attr, const uct_tl_resource_desc_t *tls, unsigned ntls,
                     const char *error)
{
    FILE *stream = arg;
    char mem_types[128] = "?";
    if (error != NULL) {
        fprintf(stream, "#   %-8s %-14s (cannot open: %s)\n", comp_name, md_name, error);
        return;
    }
    if (attr != NULL) {
        format_mem_types(attr->cap.access_mem_types, mem_types, sizeof(mem_types));
    }
    for (unsigned i = 0; i < ntls; i++) {
        fprintf(stream, "  %-8s %-14s %-10s %-16s memory: %s\n", comp_name, md_name, tls[i].tl_name,
                tls[i].dev_name, mem_types);
    }
}

ingot_status_t ingot_ucx_transports_print(FILE *stream)
{
    fprintf(stream, "  %-8s %-14s %-10s %-16s %s\n", "component", "md", "transport", "device",
            "memory types");
    return for_each_md(md_print, stream);
}

ingot_status_t ingot_peer_paths(ingot_ctx_h ctx, char *buf, size_t len)
{
    if (ctx == NULL || buf == NULL || len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_peer_paths: NULL argument");
    }
    buf[0] = '\0';
    ingot_transport_t *t;
    ingot_status_t st = ingot_ctx_transport(ctx, &t); /* collective, agreed */
    return st == INGOT_OK ? ingot_transport_paths(t, buf, len) : st;
}
