/*
 * Who a rank reads an object store as (ingot_store_identity): the resolved endpoint, region,
 * bucket and credential source, never a secret (the job-wide check of it is the object-store
 * tier's: source/objstore/check.c).
 */
#include "runtime/store/store.h"
#include "base/location.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <stdio.h>
#include <string.h>

ingot_status_t ingot_store_identity(const char *url, ingot_store_identity_t *id_p)
{
    ingot_objstore_t *c;
    ingot_objstore_identity_t id;
    /* without a URL: s3 in general (a bucket does not change the client) */
    ingot_location_t loc = {.scheme = INGOT_LOCATION_S3};
    if (id_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_store_identity: NULL id_p");
    }
    if (url != NULL) {
        INGOT_CHECK(ingot_location_parse(url, INGOT_LOCATION_URL, &loc));
    }
    snprintf(id_p->bucket, sizeof(id_p->bucket), "%s",
             url == NULL  ? ""
             : loc.bucket ? loc.bucket
                          : loc.host);
    ingot_status_t st = ingot_objstore_shared(&loc, &c);
    ingot_location_release(&loc);
    INGOT_CHECK(st);
    ingot_objstore_identity(c, &id);
    snprintf(id_p->endpoint, sizeof(id_p->endpoint), "%s", id.endpoint);
    snprintf(id_p->region, sizeof(id_p->region), "%s", id.region);
    snprintf(id_p->region_source, sizeof(id_p->region_source), "%s", id.region_source);
    snprintf(id_p->credential_source, sizeof(id_p->credential_source), "%s", id.credential_source);
    return INGOT_OK;
}
