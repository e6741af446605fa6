/*
 * What one attempt sends beyond its method and range: the URL, the headers, and libcurl's SigV4
 * options. Facts of Debian 12's libcurl 7.88.1 this relies on (checked against botocore's signer
 * at the loopback recorder, tests/client/objstore/recorder.py):
 *  - CURLOPT_AWS_SIGV4 does not add x-amz-content-sha256, which S3 requires: we send
 *    "UNSIGNED-PAYLOAD" (a GET has no body) and curl signs it with every header we add;
 *  - it signs the path and the query as sent, so both are sent in S3's canonical form
 *    (url.c: the key encoded, the parameters sorted);
 *  - a session token goes in x-amz-security-token (signed, never logged).
 * Header nodes live in the slot (no allocation per request); curl copies the URL, the user, the
 * password and the SigV4 string when they are set.
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define URL_MAX             8192
#define CREDS_EXPIRY_MARGIN 300 /* seconds before expiry when credentials are re-read */
#define CREDS_RECHECK_NS    (10 * INGOT_NSEC_PER_SEC)

static const char content_sha256_hdr[] = "x-amz-content-sha256: UNSIGNED-PAYLOAD";

static ingot_status_t set_url(ingot_objstore_slot_t *s, const ingot_objstore_req_t *req)
{
    const char *url = req->object->request_url, *query = req->priv.query;
    char buf[URL_MAX];

    if (query == NULL) {
        curl_easy_setopt(s->easy, CURLOPT_URL, url);
        return INGOT_OK;
    }
    if (snprintf(buf, sizeof(buf), "%s?%s", url, query) >= (int)sizeof(buf)) {
        return INGOT_ERR_INVALID_PARAM;
    }
    curl_easy_setopt(s->easy, CURLOPT_URL, buf);
    return INGOT_OK;
}

/* "x-amz-security-token: TOKEN" into the slot's buffer, grown when needed. */
static const char *token_header(ingot_objstore_slot_t *s, const char *token)
{
    size_t need = strlen(token) + sizeof("x-amz-security-token: ");
    if (need > s->token_cap) {
        char *grown = realloc(s->token_hdr, need);
        if (grown == NULL) return NULL;
        s->token_hdr = grown;
        s->token_cap = need;
    }
    snprintf(s->token_hdr, s->token_cap, "x-amz-security-token: %s", token);
    return s->token_hdr;
}

static ingot_status_t set_headers(ingot_objstore_t *c, ingot_objstore_slot_t *s,
                                  const ingot_objstore_req_t *req)
{
    const char *etag = req->etag ? req->etag
                                 : (req->priv.etag_seen[0] ? req->priv.etag_seen : NULL);
    const char *lines[INGOT_OBJSTORE_MAX_HEADERS];
    size_t n = 0;

    if (req->object->sign) {
        lines[n++] = content_sha256_hdr;
        if (c->settings.creds.token != NULL) {
            lines[n] = token_header(s, c->settings.creds.token);
            if (lines[n++] == NULL) return INGOT_ERR_NO_MEMORY;
        }
    }
    if (etag != NULL) {
        snprintf(s->if_match, sizeof(s->if_match), "If-Match: %s", etag);
        lines[n++] = s->if_match;
    }
    for (size_t i = 0; i < n; i++) {
        s->hdr[i].data = (char *)lines[i];
        s->hdr[i].next = i + 1 < n ? &s->hdr[i + 1] : NULL;
    }
    curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, n ? &s->hdr[0] : NULL);
    return INGOT_OK;
}

static void set_auth(ingot_objstore_t *c, ingot_objstore_slot_t *s, int sign)
{
    if (sign) {
        curl_easy_setopt(s->easy, CURLOPT_AWS_SIGV4, c->sigv4);
        curl_easy_setopt(s->easy, CURLOPT_USERNAME, c->settings.creds.access_key);
        curl_easy_setopt(s->easy, CURLOPT_PASSWORD, c->settings.creds.secret_key);
    } else {
        curl_easy_setopt(s->easy, CURLOPT_AWS_SIGV4, NULL);
        curl_easy_setopt(s->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(s->easy, CURLOPT_USERNAME, NULL);
        curl_easy_setopt(s->easy, CURLOPT_PASSWORD, NULL);
    }
}

ingot_status_t ingot_objstore_sign_attempt(ingot_objstore_t *c, ingot_objstore_slot_t *s,
                                           const ingot_objstore_req_t *req)
{
    if (set_url(s, req) != INGOT_OK) return INGOT_ERR_INVALID_PARAM;
    INGOT_CHECK(set_headers(c, s, req));
    set_auth(c, s, req->object->sign);
    return INGOT_OK;
}

ingot_status_t ingot_objstore_creds_refresh(ingot_objstore_t *c)
{
    pthread_mutex_lock(&c->settings_lock);
    ingot_status_t status = ingot_objstore_settings_refresh(&c->settings);
    pthread_mutex_unlock(&c->settings_lock);
    if (status == INGOT_OK) {
        ingot_info("objstore: credentials re-read from %s", c->settings.credential_source);
    }
    return status;
}

void ingot_objstore_creds_check_expiry(ingot_objstore_t *c, uint64_t now)
{
    int64_t expires = c->settings.creds.expires_unix;
    if (!c->signing || expires == 0 || (int64_t)time(NULL) < expires - CREDS_EXPIRY_MARGIN) return;
    if (c->creds_checked_ns != 0 && now - c->creds_checked_ns < CREDS_RECHECK_NS) return;
    c->creds_checked_ns = now;
    if (ingot_objstore_creds_refresh(c) != INGOT_OK) {
        ingot_warn("objstore: credentials from %s expire soon and could not be re-read; "
                   "going on with them",
                   c->settings.credential_source);
    }
}
