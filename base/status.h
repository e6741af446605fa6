/* Internal status helpers: wrapping errno at the boundary. */
#ifndef INGOT_BASE_STATUS_H
#define INGOT_BASE_STATUS_H

#include <ingot/status.h>

/** Map an errno value to the closest ingot status (ENOMEM -> NO_MEMORY, ENOENT -> NOT_FOUND...). */
ingot_status_t ingot_status_from_errno(int err);

/** Return early with @p _st when it is an error (propagation without re-logging). */
#define INGOT_CHECK(_expr) \
    do { \
        ingot_status_t _st = (_expr); \
        if (_st < 0) return _st; \
    } while (0)

#define INGOT_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))

#endif
