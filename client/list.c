/*
 * LIST (v2) of a prefix, page by page through continuation tokens, for building manifests: the
 * only LIST ingot makes. Each page is one signed GET of the bucket with a sorted, encoded query
 * (continuation-token, encoding-type=url, list-type=2, prefix): libcurl signs the query as sent,
 * S3 its sorted form, so the two agree only when we send it sorted. Keys come back URL-encoded
 * (encoding-type=url: keys may hold bytes XML cannot carry) and are decoded here.
 */
#include "client/objstore_impl.h"
#include "client/xml.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_PAGE_MAX (64ull * 1024 * 1024) /* bytes of one page's answer (1,000 keys) */
#define TOKEN_MAX     4096

typedef struct {
    ingot_objstore_listing_t *out;
    size_t max_entries;
    char page_keys[16]; /* max-keys, "" for the server's default */
    int url_encoded;    /* the page says <EncodingType>url</EncodingType> */
    const ingot_objstore_object_t *obj;
} list_ctx_t;

static ingot_status_t bad_page(const list_ctx_t *x, const char *why)
{
    char where[INGOT_OBJSTORE_DESCRIBE_MAX];
    ingot_objstore_object_describe(x->obj, where, sizeof(where));
    return ingot_fail(INGOT_ERR_FORMAT, "objstore: LIST %s (page %u): %s", where, x->out->pages,
                      why);
}

/* One <Contents> block: Key, Size, ETag. */
static ingot_status_t add_entry(list_ctx_t *x, const char *b, const char *e)
{
    char key[3 * INGOT_LOCATION_KEY_MAX + 1], size[32];
    ingot_objstore_entry_t *ent;

    if (x->out->count == x->max_entries) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "objstore: LIST of bucket '%s', prefix '%s': "
                          "more than %zu objects",
                          x->obj->url.bucket, x->obj->url.key, x->max_entries);
    }
    if (ingot_objstore_xml_text(b, e, "Key", key, sizeof(key)) != 0 ||
        ingot_objstore_xml_text(b, e, "Size", size, sizeof(size)) != 0) {
        return bad_page(x, "a <Contents> without <Key> or <Size>");
    }
    if (x->url_encoded && ingot_uri_decode(key, 1, key) != 0) {
        return bad_page(x, "a key with a malformed %-escape");
    }
    if ((x->out->count & (x->out->count - 1)) == 0) { /* grow at powers of two */
        size_t cap = x->out->count ? 2 * x->out->count : 64;
        ent = realloc(x->out->entries, cap * sizeof(*ent));
        if (ent == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
        x->out->entries = ent;
    }
    ent = &x->out->entries[x->out->count];
    memset(ent, 0, sizeof(*ent));
    ingot_objstore_xml_text(b, e, "ETag", ent->etag, sizeof(ent->etag));
    ent->size = strtoull(size, NULL, 10);
    ent->key = strdup(key);
    if (ent->key == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    x->out->count++;
    return INGOT_OK;
}

/* Parse one page; *token (room TOKEN_MAX) gets the next token, "" on the last page. */
static ingot_status_t parse_page(list_ctx_t *x, const char *body, size_t len, char *token)
{
    const char *end = body + len, *p = body, *after = NULL;
    char flag[16], enc[16];
    size_t n = 0;

    if (strstr(body, "<ListBucketResult") == NULL) return bad_page(x, "not a ListBucketResult");
    x->url_encoded = ingot_objstore_xml_text(body, end, "EncodingType", enc, sizeof(enc)) == 0 &&
                     strcmp(enc, "url") == 0;
    const char *text;
    while ((text = ingot_objstore_xml_find(p, end, "Contents", &n, &after)) != NULL) {
        INGOT_CHECK(add_entry(x, text, text + n));
        p = after;
    }
    token[0] = '\0';
    if (ingot_objstore_xml_text(body, end, "IsTruncated", flag, sizeof(flag)) == 0 &&
        strcmp(flag, "true") == 0) {
        if (ingot_objstore_xml_text(body, end, "NextContinuationToken", token, TOKEN_MAX) != 0 ||
            token[0] == '\0') {
            return bad_page(x, "IsTruncated without a NextContinuationToken");
        }
    }
    return INGOT_OK;
}

/* GET one page (after @p token, "" first) and parse it. */
static ingot_status_t list_page(ingot_objstore_t *c, list_ctx_t *x, uint64_t deadline_ns,
                                char *token)
{
    ingot_objstore_param_t params[5] = {
        {"list-type", "2"}, {"prefix", x->obj->url.key}, {"encoding-type", "url"}};
    size_t n = 3;
    char *query = NULL;
    ingot_objstore_req_t req;

    if (token[0] != '\0') params[n++] = (ingot_objstore_param_t){"continuation-token", token};
    if (x->page_keys[0] != '\0') params[n++] = (ingot_objstore_param_t){"max-keys", x->page_keys};
    INGOT_CHECK(ingot_objstore_query_build(params, n, &query));
    ingot_status_t status = ingot_objstore_fetch_body(c, x->obj, query, LIST_PAGE_MAX, deadline_ns,
                                                      &req);
    x->out->pages++;
    if (status == INGOT_OK) {
        char *body = realloc(req.priv.buf, req.priv.done + 1); /* NUL-terminate for strstr */
        if (body == NULL) {
            status = ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
        } else {
            req.priv.buf = body;
            body[req.priv.done] = '\0';
            status = parse_page(x, body, req.priv.done, token);
        }
    }
    free(req.priv.buf);
    free(query);
    return status;
}

ingot_status_t ingot_objstore_list(ingot_objstore_t *client, const char *prefix_url,
                                   uint32_t page_keys, size_t max_entries, uint64_t deadline_ns,
                                   ingot_objstore_listing_t *listing_p)
{
    ingot_objstore_listing_t out = {0};
    ingot_objstore_object_t *obj = NULL;
    char *token = calloc(1, TOKEN_MAX);
    ingot_status_t status = token ? INGOT_OK : ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: OOM");

    ingot_location_t prefix = {0};
    if (status == INGOT_OK) status = ingot_location_parse(prefix_url, INGOT_LOCATION_URL, &prefix);
    if (status == INGOT_OK) status = ingot_objstore_object_make(client, &prefix, 1, &obj);
    ingot_location_release(&prefix);
    list_ctx_t x = {&out, max_entries, "", 0, obj};
    if (page_keys > 0) snprintf(x.page_keys, sizeof(x.page_keys), "%u", page_keys);
    while (status == INGOT_OK) {
        status = list_page(client, &x, deadline_ns, token);
        if (token[0] == '\0') break;
    }
    ingot_objstore_object_destroy(obj);
    free(token);
    if (status != INGOT_OK) {
        ingot_objstore_listing_free(&out);
        return status;
    }
    *listing_p = out;
    return INGOT_OK;
}

void ingot_objstore_listing_free(ingot_objstore_listing_t *listing)
{
    if (listing == NULL) return;
    for (size_t i = 0; i < listing->count; i++) free(listing->entries[i].key);
    free(listing->entries);
    memset(listing, 0, sizeof(*listing));
}
