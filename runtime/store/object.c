/*
 * Whole objects for the tools, over the client layer's process-wide clients: the GET of a
 * manifest, the PUT of one built over a bucket, and the deadline of such a blocking call.
 */
#include "runtime/store/store.h"
#include "base/base_config.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"

uint64_t ingot_store_deadline(void)
{
    const ingot_base_config_t *cfg;
    uint64_t timeout = ingot_base_config(&cfg) == INGOT_OK ? cfg->timeout_ns
                                                           : 300ull * INGOT_NSEC_PER_SEC;
    return ingot_time_ns() + timeout;
}

ingot_status_t ingot_store_fetch(ingot_location_t *loc, uint64_t max_size, void **data_p,
                                 size_t *size_p, char *etag)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o;
    INGOT_CHECK(ingot_objstore_shared(loc, &c));
    INGOT_CHECK(ingot_objstore_object_at(c, loc, &o));
    ingot_status_t st = ingot_objstore_get(c, o, max_size, ingot_store_deadline(), data_p, size_p,
                                           etag);
    ingot_objstore_object_destroy(o);
    return st;
}

ingot_status_t ingot_store_put(ingot_location_t *loc, const void *data, size_t size)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o;
    INGOT_CHECK(ingot_objstore_shared(loc, &c));
    INGOT_CHECK(ingot_objstore_object_at(c, loc, &o));
    ingot_status_t st = ingot_objstore_put(c, o, data, size, ingot_store_deadline(), NULL);
    ingot_objstore_object_destroy(o);
    return st;
}
