/*
 * Output structs that grow without breaking callers (UCX ucp_worker_attr_t style): the caller
 * sets field_mask to the fields it wants, and the library copies exactly those from a complete
 * value it built, leaving every other byte of the caller's struct (field_mask included) as it
 * was. A caller compiled against an older header has a smaller struct and asks only for the
 * fields it knows, so nothing is written past its end.
 */
#ifndef INGOT_BASE_FIELD_MASK_H
#define INGOT_BASE_FIELD_MASK_H

#include <stddef.h>
#include <stdint.h>

/** The members one field-mask bit covers: a contiguous run of a struct. */
typedef struct ingot_field_span {
    uint64_t bit;  /**< The field-mask bit. */
    size_t offset; /**< Offset of the first member it covers. */
    size_t size;   /**< Bytes from there to the end of the last member it covers. */
} ingot_field_span_t;

/** The span of bit @p _bit: members @p _first to @p _last (inclusive, in declaration order). */
#define INGOT_FIELD_SPAN(_bit, _type, _first, _last) \
    { \
        (_bit), offsetof(_type, _first), \
            offsetof(_type, _last) + sizeof(((_type *)0)->_last) - offsetof(_type, _first) \
    }

/**
 * Copy from @p src to @p dst the spans whose bit is set in @p mask; bits no span names are
 * ignored (a field this library does not have stays untouched). Thread-safe.
 */
void ingot_field_mask_copy(void *dst, const void *src, uint64_t mask,
                           const ingot_field_span_t *spans, size_t count);

#endif
