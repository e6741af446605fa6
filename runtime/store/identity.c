/*
 * Who a rank reads an object store as (ingot_store_identity): the resolved endpoint, region,
 * bucket and credential source, never a secret (the job-wide check of it is the object-store
 * tier's: source/objstore/check.c).
 */
#include "runtime/store/store.h"
#include "source/objstore/url.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <stdio.h>
#include <string.h>

/* The client that stands for s3:// URLs in general (its bucket does not matter). */
#define IDENTITY_ANY_S3 "s3://ingot-identity/"

ingot_status_t ingot_store_identity(const char *url, ingot_store_identity_t *id_p)
{
    ingot_objstore_t *c;
    ingot_objstore_identity_t id;
    if (id_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_store_identity: NULL id_p");
    }
    if (url != NULL) {
        ingot_objstore_url_t parsed;
        INGOT_CHECK(ingot_objstore_url_parse(url, 0, &parsed));
        snprintf(id_p->bucket, sizeof(id_p->bucket), "%s",
                 parsed.bucket ? parsed.bucket : parsed.host);
        ingot_objstore_url_release(&parsed);
    } else {
        id_p->bucket[0] = '\0';
    }
    INGOT_CHECK(ingot_store_client(url ? url : IDENTITY_ANY_S3, &c));
    ingot_objstore_identity(c, &id);
    snprintf(id_p->endpoint, sizeof(id_p->endpoint), "%s", id.endpoint);
    snprintf(id_p->region, sizeof(id_p->region), "%s", id.region);
    snprintf(id_p->region_source, sizeof(id_p->region_source), "%s", id.region_source);
    snprintf(id_p->credential_source, sizeof(id_p->credential_source), "%s", id.credential_source);
    return INGOT_OK;
}
