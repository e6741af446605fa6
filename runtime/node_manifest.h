/*
 * One copy of the manifest per node (node_manifest.c): the node's first rank reads the file into
 * an MPI-3 shared window and validates it fully; the node's other ranks open those bytes lazily.
 */
#ifndef INGOT_RUNTIME_NODE_MANIFEST_H
#define INGOT_RUNTIME_NODE_MANIFEST_H

#include <ingot/ingot.h>
#include <ingot/shard.h>

/**
 * Open a manifest once per node: the node's first rank reads the file into an MPI-3 shared
 * window and validates it fully; the node's other ranks map that window and open it lazily
 * (already validated). Collective over ctx->comm: every rank returns the same status.
 * @param window_p out: the MPI window (free with ingot_node_manifest_close()).
 */
ingot_status_t ingot_node_manifest_open(ingot_ctx_h ctx, const char *path,
                                        ingot_manifest_h *manifest_p, void **window_p);
/** Close a manifest opened by ingot_node_manifest_open() (collective over the node's communicator). */
void ingot_node_manifest_close(ingot_ctx_h ctx, ingot_manifest_h manifest, void *window);

#endif
