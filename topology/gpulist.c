/*
 * GPU lists: INGOT_GPUS and CUDA_VISIBLE_DEVICES name GPUs by index, PCI bus id or UUID.
 * Indices are node-wide in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID, as nvidia-smi).
 */
#include "topology/topo.h"
#include "base/log.h"
#include "base/status.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GPU_LIST_TOKEN_MAX   96
#define GPU_LIST_END         "-1" /* CUDA stops at an invalid index; "-1" hides the rest */
#define GPU_LIST_MIG_PREFIX  "MIG-"
#define BUSID_DOMAIN_DEFAULT "0000:"
#define BUSID_SHORT_LEN      7 /* "bb:dd.f" */

static bool gpu_token_is_index(const char *tok)
{
    if (*tok == '\0') {
        return false;
    }
    for (const char *p = tok; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p)) {
            return false;
        }
    }
    return true;
}

/* Node index of the GPU a token names, or -1. */
static int gpu_token_match(const ingot_topo_t *topo, const char *tok)
{
    if (gpu_token_is_index(tok)) {
        long idx = strtol(tok, NULL, 10);
        return idx < topo->ngpus ? (int)idx : -1;
    }
    if (strchr(tok, ':') != NULL) {
        char full[GPU_LIST_TOKEN_MAX];
        snprintf(full, sizeof(full), "%s%s",
                 strlen(tok) == BUSID_SHORT_LEN ? BUSID_DOMAIN_DEFAULT : "", tok);
        for (int i = 0; i < topo->ngpus; i++) {
            if (strcasecmp(topo->gpus[i].busid, full) == 0) {
                return i;
            }
        }
        return -1;
    }
    int found = -1;
    for (int i = 0; i < topo->ngpus; i++) {
        const char *u = topo->gpus[i].uuid;
        if (u[0] != '\0' && strncasecmp(u, tok, strlen(tok)) == 0) {
            if (found >= 0) {
                return -1; /* ambiguous prefix */
            }
            found = i;
        }
    }
    return found;
}

/* Next token of a comma-separated list, blanks trimmed; NULL at the end. */
static const char *gpu_list_next(const char *p, char *tok, size_t len)
{
    if (p == NULL || *p == '\0') {
        return NULL;
    }
    const char *end = strchr(p, ',');
    size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
    while (n > 0 && isspace((unsigned char)*p)) {
        p++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)p[n - 1])) {
        n--;
    }
    snprintf(tok, len, "%.*s", (int)n, p);
    return end != NULL ? end + 1 : p + strlen(p);
}

static void gpu_list_describe(const ingot_topo_t *topo, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%d GPU%s", topo->ngpus, topo->ngpus == 1 ? "" : "s");
    for (int i = 0; i < topo->ngpus && off < len; i++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%d=%s", i == 0 ? ": " : ", ", i,
                                topo->gpus[i].busid[0] != '\0' ? topo->gpus[i].busid
                                                               : topo->gpus[i].name);
    }
}

ingot_status_t ingot_topo_gpu_list_parse(const ingot_topo_t *topo, const char *list,
                                         const char *what, uint64_t *mask_p)
{
    char tok[GPU_LIST_TOKEN_MAX], found[INGOT_TOPOLOGY_STR_MAX * 2];
    uint64_t mask = 0;
    const char *p = list;

    if (list == NULL || strcasecmp(list, "all") == 0) {
        *mask_p = topo->ngpus >= INGOT_TOPO_MAX_GPUS ? INGOT_TOPO_GPUS_ALL
                                                     : ((uint64_t)1 << topo->ngpus) - 1;
        return INGOT_OK;
    }
    while ((p = gpu_list_next(p, tok, sizeof(tok))) != NULL) {
        if (strcmp(tok, GPU_LIST_END) == 0) {
            break;
        }
        if (strncasecmp(tok, GPU_LIST_MIG_PREFIX, strlen(GPU_LIST_MIG_PREFIX)) == 0) {
            ingot_error("%s='%s': MIG instance '%s' is not supported (expected whole GPUs by "
                        "index, PCI bus id or UUID)",
                        what, list, tok);
            return INGOT_ERR_UNSUPPORTED;
        }
        int gpu = gpu_token_match(topo, tok);
        if (gpu < 0) {
            gpu_list_describe(topo, found, sizeof(found));
            ingot_error("%s='%s': '%s' names no GPU of %s (expected an index, a PCI bus id or "
                        "a GPU UUID; found %s)",
                        what, list, tok, topo->source, found);
            return INGOT_ERR_NOT_FOUND;
        }
        mask |= (uint64_t)1 << gpu;
    }
    *mask_p = mask;
    return INGOT_OK;
}

int ingot_topo_gpu_list_position(const ingot_topo_t *topo, const char *list, int gpu)
{
    char tok[GPU_LIST_TOKEN_MAX];
    const char *p = list;
    int pos = 0;
    if (list == NULL || strcasecmp(list, "all") == 0) {
        return gpu;
    }
    while ((p = gpu_list_next(p, tok, sizeof(tok))) != NULL && strcmp(tok, GPU_LIST_END) != 0) {
        if (gpu_token_match(topo, tok) == gpu) {
            return pos;
        }
        pos++;
    }
    return -1;
}

ingot_status_t ingot_topo_gpu_mask(const ingot_topo_t *topo, const char *gpus,
                                   const char *cuda_visible, uint64_t *mask_p)
{
    uint64_t chosen, visible;
    INGOT_CHECK(ingot_topo_gpu_list_parse(topo, gpus, "INGOT_GPUS", &chosen));
    INGOT_CHECK(ingot_topo_gpu_list_parse(topo, cuda_visible, "CUDA_VISIBLE_DEVICES", &visible));
    *mask_p = chosen & visible;
    return INGOT_OK;
}
