/*
 * The instance metadata service, IMDSv2: a session token first (PUT), then the role's name and
 * its temporary credentials (GET with the token). Blocking, on its own easy handle, bounded by
 * one deadline for the whole exchange, never through a proxy (the service is link-local).
 * Nothing it receives is logged: the token and the credentials are secrets. It logs nothing at
 * all: what failed is written for the caller, who knows whether it ends the search.
 */
#include "client/credentials.h"
#include "base/time.h"
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IMDS_BODY_MAX   (64 * 1024)
#define IMDS_TOKEN_TTL  "21600" /* seconds: the longest IMDS grants */
#define IMDS_TOKEN_PATH "/latest/api/token"
#define IMDS_ROLE_PATH  "/latest/meta-data/iam/security-credentials/"
#define IMDS_ROLE_MAX   256 /* bytes of a role's name at most (IAM allows 64) */

typedef struct {
    char buf[IMDS_BODY_MAX + 1];
    size_t len;
    int overflow;
} imds_body_t;

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    imds_body_t *b = arg;
    size_t len = size * n;
    if (b->len + len > IMDS_BODY_MAX) {
        b->overflow = 1;
        return CURL_WRITEFUNC_ERROR;
    }
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return len;
}

typedef struct {
    CURL *h;
    const char *endpoint;
    uint64_t deadline_ns;
    imds_body_t *body;
    char *why; /* what failed, for the caller */
    size_t whylen;
} imds_t;

static ingot_status_t imds_fail(const imds_t *m, ingot_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ingot_status_t imds_fail(const imds_t *m, ingot_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, m->whylen, fmt, ap);
    va_end(ap);
    return status;
}

static ingot_status_t curl_failure(const imds_t *m, const char *step, CURLcode rc)
{
    ingot_status_t st = rc == CURLE_OPERATION_TIMEDOUT ? INGOT_ERR_TIMED_OUT : INGOT_ERR_NOT_FOUND;
    return imds_fail(m, st, "%s: %s", step,
                     rc == CURLE_OPERATION_TIMEDOUT ? "no answer within INGOT_S3_IMDS_TIMEOUT"
                                                    : curl_easy_strerror(rc));
}

/* One request of the exchange; 200 expected, its body in m->body. */
static ingot_status_t imds_call(imds_t *m, const char *step, const char *path, int put,
                                const char *header)
{
    char url[1024];
    struct curl_slist hdr = {(char *)header, NULL};
    uint64_t now = ingot_time_ns();
    long left_ms = now >= m->deadline_ns ? 1 : (long)((m->deadline_ns - now) / 1000000) + 1;
    long http = 0;

    snprintf(url, sizeof(url), "%s%s", m->endpoint, path);
    m->body->len = 0;
    m->body->buf[0] = '\0';
    curl_easy_setopt(m->h, CURLOPT_URL, url);
    curl_easy_setopt(m->h, CURLOPT_CUSTOMREQUEST, put ? "PUT" : NULL);
    curl_easy_setopt(m->h, CURLOPT_HTTPHEADER, &hdr);
    curl_easy_setopt(m->h, CURLOPT_TIMEOUT_MS, left_ms);
    curl_easy_setopt(m->h, CURLOPT_CONNECTTIMEOUT_MS, left_ms);
    CURLcode rc = curl_easy_perform(m->h);
    curl_easy_setopt(m->h, CURLOPT_HTTPHEADER, NULL);
    if (rc != CURLE_OK) return curl_failure(m, step, rc);
    curl_easy_getinfo(m->h, CURLINFO_RESPONSE_CODE, &http);
    if (http == 200) return INGOT_OK;
    return imds_fail(m, http == 404 ? INGOT_ERR_NOT_FOUND : INGOT_ERR_PERMISSION, "%s: HTTP %ld%s",
                     step, http, http == 404 ? " (no IAM role attached to this instance?)" : "");
}

static const char *json_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* The end of the JSON string whose text begins at @p p (after its '"'): its closing '"', or
 * NULL when it is not closed. */
static const char *json_string_end(const char *p)
{
    while (*p != '\0' && *p != '"') p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
    return *p == '"' ? p : NULL;
}

/* Where the value of member "key" of @p json begins: a string that is a member's name (outside
 * every other string, followed by ':') and reads "key". NULL when absent. */
static const char *json_member(const char *json, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strchr(json, '"'); p != NULL; p = strchr(p + 1, '"')) {
        const char *close = json_string_end(p + 1);
        if (close == NULL) return NULL;
        const char *after = json_space(close + 1);
        if (*after == ':' && (size_t)(close - p - 1) == n && memcmp(p + 1, key, n) == 0) {
            return json_space(after + 1);
        }
        p = close; /* a value that reads "key" is not its name */
    }
    return NULL;
}

/* The JSON string value of member "key" of @p json, unescaped, malloc'd; NULL when absent. */
static char *json_string(const char *json, const char *key)
{
    const char *p = json_member(json, key);
    const char *close = p != NULL && *p == '"' ? json_string_end(++p) : NULL;
    char *out = close != NULL ? malloc((size_t)(close - p) + 1) : NULL;
    size_t n = 0;
    for (; out != NULL && p < close; p++) {
        if (*p == '\\') p++; /* json_string_end() saw its escaped character before close */
        out[n++] = *p;
    }
    if (out != NULL) out[n] = '\0';
    return out;
}

static int64_t parse_expiration(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (iso == NULL || strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) == NULL) return 0;
    return (int64_t)timegm(&tm);
}

ingot_status_t ingot_objstore_imds_credentials(const char *body, ingot_objstore_creds_t *creds,
                                               char *why, size_t whylen)
{
    char *code = json_string(body, "Code");
    char *exp = json_string(body, "Expiration");
    int ok = code != NULL && strcmp(code, "Success") == 0;

    memset(creds, 0, sizeof(*creds));
    if (ok) {
        creds->access_key = json_string(body, "AccessKeyId");
        creds->secret_key = json_string(body, "SecretAccessKey");
        creds->token = json_string(body, "Token");
        creds->expires_unix = parse_expiration(exp);
        ok = creds->access_key != NULL && creds->secret_key != NULL;
    }
    free(code);
    free(exp);
    if (ok) return INGOT_OK;
    ingot_objstore_creds_release(creds);
    snprintf(why, whylen,
             "the role's answer holds no credentials (no \"Code\": \"Success\" with "
             "AccessKeyId and SecretAccessKey)");
    return INGOT_ERR_FORMAT;
}

const char *ingot_objstore_imds_role(char *body)
{
    body[strcspn(body, "\r\n")] = '\0';
    return body[0] != '\0' && strlen(body) <= IMDS_ROLE_MAX ? body : NULL;
}

static ingot_status_t imds_exchange(imds_t *m, ingot_objstore_creds_t *creds)
{
    char header[IMDS_BODY_MAX / 4], path[512];
    ingot_status_t status;

    status = imds_call(m, "session token (PUT " IMDS_TOKEN_PATH ")", IMDS_TOKEN_PATH, 1,
                       "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
    if (status != INGOT_OK) return status;
    if (m->body->len == 0 || m->body->len >= sizeof(header) - 40) {
        return imds_fail(m, INGOT_ERR_FORMAT, "an empty or oversized session token");
    }
    snprintf(header, sizeof(header), "X-aws-ec2-metadata-token: %.*s", (int)m->body->len,
             m->body->buf);
    status = imds_call(m, "role name (GET " IMDS_ROLE_PATH ")", IMDS_ROLE_PATH, 0, header);
    if (status == INGOT_OK) {
        if (ingot_objstore_imds_role(m->body->buf) == NULL) {
            status = imds_fail(m, INGOT_ERR_NOT_FOUND, "no IAM role attached");
        }
    }
    if (status == INGOT_OK) {
        snprintf(path, sizeof(path), "%s%.256s", IMDS_ROLE_PATH, m->body->buf);
        status = imds_call(m, "role credentials (GET " IMDS_ROLE_PATH "ROLE)", path, 0, header);
    }
    if (status == INGOT_OK) {
        status = ingot_objstore_imds_credentials(m->body->buf, creds, m->why, m->whylen);
    }
    explicit_bzero(header, sizeof(header));
    return status;
}

ingot_status_t ingot_objstore_imds_fetch(const char *endpoint, uint64_t timeout_ns,
                                         ingot_objstore_creds_t *creds, char *why, size_t whylen)
{
    imds_t m = {curl_easy_init(), endpoint, ingot_deadline_after(timeout_ns), NULL, why, whylen};
    ingot_status_t status;

    m.body = calloc(1, sizeof(*m.body));
    if (m.h == NULL || m.body == NULL) {
        curl_easy_cleanup(m.h);
        free(m.body);
        return imds_fail(&m, INGOT_ERR_NO_MEMORY, "out of memory for the metadata client");
    }
    curl_easy_setopt(m.h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(m.h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(m.h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(m.h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(m.h, CURLOPT_WRITEDATA, m.body);
    curl_easy_setopt(m.h, CURLOPT_HTTPGET, 1L);
    status = imds_exchange(&m, creds);
    explicit_bzero(m.body, sizeof(*m.body));
    free(m.body);
    curl_easy_cleanup(m.h);
    return status;
}
