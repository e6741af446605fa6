/*
 * Who a rank reads an object store as (ingot_store_identity), and the job-wide check of it: the
 * resolved endpoint, region, bucket and credential source (never a secret) must be the same on
 * every rank, or the job reads different data, or the same data as different principals.
 */
#include "runtime/store/store.h"
#include "base/location.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <mpi.h>
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

/* The compared fields, NUL-separated, in @p buf; returns the length. */
static int check_pack(const ingot_store_identity_t *id, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%c%s%c%s%c%s", id->endpoint, 0, id->region, 0, id->bucket, 0,
                     id->credential_source);
    return n < (int)len ? n + 1 : (int)len;
}

static const char *const check_names[] = {"endpoint", "region", "bucket", "credential source"};
#define CHECK_NFIELDS 4

/* Bits of the fields where @p mine differs from @p root; each logged naming this rank. */
static int check_compare(const char *mine, const char *root, int rank)
{
    int mask = 0;
    for (int i = 0; i < CHECK_NFIELDS; i++) {
        if (strcmp(mine, root) != 0) {
            mask |= 1 << i;
            ingot_error("object store: the %s differs between ranks: rank %d resolves '%s', rank "
                        "0 '%s' (every rank must read the same bucket through the same endpoint, "
                        "region and credential source: check AWS_* and ~/.aws on each node)",
                        check_names[i], rank, mine, root);
        }
        mine += strlen(mine) + 1;
        root += strlen(root) + 1;
    }
    return mask;
}

/* Rank 0: name the ranks whose field @p i differs. */
static void check_report(const int *masks, int size, int i, const char *root)
{
    char ranks[256] = "";
    size_t o = 0;
    int count = 0;
    for (int r = 0; r < size; r++) {
        if ((masks[r] & (1 << i)) && o < sizeof(ranks) - 16) {
            o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%d", count ? "," : "", r);
        }
        count += (masks[r] >> i) & 1;
    }
    ingot_error("object store: %d rank(s) (%s%s) resolve another %s than rank 0's '%s'", count,
                ranks, o >= sizeof(ranks) - 16 ? ",..." : "", check_names[i], root);
}

ingot_status_t ingot_store_check_job(MPI_Comm comm, const ingot_store_identity_t *id)
{
    char mine[1400], root[1400];
    int rank, size, len = check_pack(id, mine, sizeof(mine)), any = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ingot_status_t st = INGOT_MPI_CALL("object store check", MPI_Bcast, &len, 1, MPI_INT, 0, comm);
    if (st == INGOT_OK) {
        memcpy(root, mine, (size_t)len);
        st = INGOT_MPI_CALL("object store check", MPI_Bcast, root, len, MPI_CHAR, 0, comm);
    }
    int mask = st == INGOT_OK ? check_compare(mine, root, rank) : 0;
    if (st != INGOT_OK || (st = INGOT_MPI_CALL("object store check", MPI_Allreduce, &mask, &any, 1,
                                               MPI_INT, MPI_BOR, comm)) != INGOT_OK) {
        return st;
    }
    if (any == 0) {
        return INGOT_OK;
    }
    int masks[size > 0 ? size : 1];
    st = INGOT_MPI_CALL("object store check", MPI_Gather, &mask, 1, MPI_INT, masks, 1, MPI_INT, 0,
                        comm);
    for (int i = 0; st == INGOT_OK && rank == 0 && i < CHECK_NFIELDS; i++) {
        const char *v = root;
        for (int k = 0; k < i; k++) {
            v += strlen(v) + 1;
        }
        if (any & (1 << i)) {
            check_report(masks, size, i, v);
        }
    }
    return st != INGOT_OK ? st : INGOT_ERR_CONFIG;
}
