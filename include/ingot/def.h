/**
 * @file def.h
 * @brief Basic definitions shared by every ingot public header: export macro, handle types and
 *        the field-mask convention of parameter structs.
 */
#ifndef INGOT_DEF_H
#define INGOT_DEF_H

#include <stddef.h>
#include <stdint.h>

#if defined(INGOT_BUILDING_LIBRARY)
#  define INGOT_API __attribute__((visibility("default")))
#else
#  define INGOT_API
#endif

#ifdef __cplusplus
#  define INGOT_BEGIN_DECLS extern "C" {
#  define INGOT_END_DECLS   }
#else
#  define INGOT_BEGIN_DECLS
#  define INGOT_END_DECLS
#endif

/** Bit @p i of a field mask. */
#define INGOT_BIT(i) (1ull << (i))

/** Opaque handle to an ingot context (one per communicator a trainer gives to ingot). */
typedef struct ingot_ctx *ingot_ctx_h;

#endif /* INGOT_DEF_H */
