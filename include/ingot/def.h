/**
 * @file def.h
 * @brief Basic definitions shared by every ingot public header: export macro, handle types and
 *        the field-mask convention of parameter structs.
 *
 * Field masks (as UCX's ucp_params_t and ucp_worker_attr_t): every struct passed between a
 * program and ingot begins with `uint64_t field_mask`, one bit per field or named group of
 * fields, so fields can be appended in later releases without breaking programs built against
 * older headers.
 *  - Parameter structs (ingot reads them): the bits say which fields the caller set; unset
 *    fields take their defaults.
 *  - Output structs (ingot writes them into caller memory: ingot_ctx_attr_t,
 *    ingot_placement_t, ingot_topology_summary_t, ingot_topology_device_t,
 *    ingot_loader_stats_t, ingot_runtime_info_t): the caller sets the bits of the fields it
 *    wants; ingot writes those and leaves every other byte untouched, field_mask included.
 *    Bits this library does not know are ignored (their fields stay as the caller left them).
 *    (ingot_runtime_info_t, older, zeroes the fields not asked for.)
 * Records ingot hands over whole (ingot_batch_t, ingot_cursor_t, the manifest's row and summary
 * structs of ingot/shard.h) have no field_mask: they are versioned with the library.
 */
#ifndef INGOT_DEF_H
#define INGOT_DEF_H

#include <stddef.h>
#include <stdint.h>

#if defined(INGOT_BUILDING_LIBRARY)
#    define INGOT_API __attribute__((visibility("default")))
#else
#    define INGOT_API
#endif

#ifdef __cplusplus
#    define INGOT_BEGIN_DECLS extern "C" {
#    define INGOT_END_DECLS   }
#else
#    define INGOT_BEGIN_DECLS
#    define INGOT_END_DECLS
#endif

/** Bit @p i of a field mask. */
#define INGOT_BIT(i) (1ull << (i))

/** Opaque handle to an ingot context (one per communicator a trainer gives to ingot). */
typedef struct ingot_ctx *ingot_ctx_h;

#endif /* INGOT_DEF_H */
