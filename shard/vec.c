/* Growable arrays for the builder (see vec.h). */
#include "shard/vec.h"
#include "base/log.h"
#include <stdlib.h>
#include <string.h>

#define SHARD_VEC_MIN_CAP 64

ingot_status_t ingot_shard_vec_push(shard_vec_t *v, const void *src, size_t n, size_t *at_p)
{
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : SHARD_VEC_MIN_CAP;
        while (cap < v->len + n) {
            cap *= 2;
        }
        void *p = realloc(v->data, cap * v->esize);
        if (p == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory growing a table to %zu rows",
                              cap);
        }
        v->data = p;
        v->cap = cap;
    }
    char *dst = (char *)v->data + v->len * v->esize;
    if (src != NULL) {
        memcpy(dst, src, n * v->esize);
    } else {
        memset(dst, 0, n * v->esize);
    }
    if (at_p != NULL) {
        *at_p = v->len;
    }
    v->len += n;
    return INGOT_OK;
}

void ingot_shard_vec_free(shard_vec_t *v)
{
    free(v->data);
    shard_vec_init(v, v->esize);
}
