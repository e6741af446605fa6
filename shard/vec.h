/* A growable array of fixed-size elements for the builder (not used on hot paths). */
#ifndef INGOT_SHARD_VEC_H
#define INGOT_SHARD_VEC_H

#include <ingot/status.h>
#include <stddef.h>

typedef struct shard_vec {
    void *data;
    size_t len;   /* elements */
    size_t cap;   /* elements */
    size_t esize; /* bytes per element */
} shard_vec_t;

static inline void shard_vec_init(shard_vec_t *v, size_t esize)
{
    v->data = NULL;
    v->len = 0;
    v->cap = 0;
    v->esize = esize;
}

/** Append @p n elements (copied from @p src, or zeroed when NULL); *at_p = index of the first. */
ingot_status_t ingot_shard_vec_push(shard_vec_t *v, const void *src, size_t n, size_t *at_p);
void ingot_shard_vec_free(shard_vec_t *v);

#define SHARD_VEC_AT(_v, _type, _i) (&((_type *)(_v)->data)[_i])

#endif
