/* Masked copies of output structs (see field_mask.h). */
#include "base/field_mask.h"
#include <string.h>

void ingot_field_mask_copy(void *dst, const void *src, uint64_t mask,
                           const ingot_field_span_t *spans, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (mask & spans[i].bit) {
            memcpy((char *)dst + spans[i].offset, (const char *)src + spans[i].offset,
                   spans[i].size);
        }
    }
}
