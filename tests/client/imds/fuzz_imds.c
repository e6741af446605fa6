/*
 * Fuzz target: the instance metadata service's answers (client/credentials.h, imds.c) over
 * arbitrary bodies. The body read as the role listing: a name is the body's first line, 1 to 256
 * bytes. The body read as the credentials document: what it yields lies within the body, and
 * written back as a document (the fields in an order the input picks, '"' and '\' escaped) it
 * reads again to the same keys, token and expiry.
 */
#include "client/credentials.h"
#include "common/fuzz.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FUZZ_BODY_MAX (64u << 10) /* imds.c's IMDS_BODY_MAX: the most it reads */

static void check_role(const char *body, size_t len)
{
    char *copy = fuzz_cstr((const uint8_t *)body, len);
    if (copy == NULL) return;
    const char *role = ingot_objstore_imds_role(copy);
    size_t n = role != NULL ? strlen(role) : 0;
    if (role != NULL && (role != copy || n == 0 || n > 256 || strncmp(role, body, n) != 0 ||
                         (body[n] != '\0' && body[n] != '\r' && body[n] != '\n'))) {
        abort(); /* not the first line */
    }
    free(copy);
}

/* "key": "value" with '"' and '\' escaped, appended at *p_p. */
static void put_field(char **p_p, const char *key, const char *value)
{
    char *p = *p_p;
    p += sprintf(p, "  \"%s\" : \"", key);
    for (const char *v = value; *v != '\0'; v++) {
        if (*v == '"' || *v == '\\') *p++ = '\\';
        *p++ = *v;
    }
    p += sprintf(p, "\",\n");
    *p_p = p;
}

/* @p c written as a document, its fields in the order @p pick chooses; malloc'd. */
static char *write_document(const ingot_objstore_creds_t *c, unsigned pick)
{
    char expires[64] = "";
    struct tm tm;
    time_t t = (time_t)c->expires_unix;
    if (c->expires_unix != 0 && gmtime_r(&t, &tm) != NULL) {
        strftime(expires, sizeof(expires), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    const char *keys[] = {"Code", "AccessKeyId", "SecretAccessKey", "Token", "Expiration"};
    const char *values[] = {"Success", c->access_key, c->secret_key, c->token, expires};
    size_t room = 256;
    for (size_t i = 0; i < 5; i++) room += 2 * (values[i] != NULL ? strlen(values[i]) : 0) + 32;
    char *doc = malloc(room), *p = doc;
    if (doc == NULL) return NULL;
    p += sprintf(p, "{\n");
    for (size_t i = 0; i < 5; i++) {
        size_t k = (i + pick) % 5; /* a rotation: every field first in turn */
        if (values[k] != NULL && (values[k] != expires || expires[0] != '\0')) {
            put_field(&p, keys[k], values[k]);
        }
    }
    p += sprintf(p, "  \"Type\" : \"AWS-HMAC\"\n}\n");
    return doc;
}

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void check_credentials(const char *body, size_t len, unsigned pick)
{
    ingot_objstore_creds_t c, again;
    char why[256];
    if (ingot_objstore_imds_credentials(body, &c, why, sizeof(why)) != INGOT_OK) {
        if (memchr(why, '\0', sizeof(why)) == NULL || why[0] == '\0') abort();
        return;
    }
    if (c.access_key == NULL || c.secret_key == NULL || strlen(c.access_key) > len ||
        strlen(c.secret_key) > len || (c.token != NULL && strlen(c.token) > len)) {
        abort(); /* more than the body holds */
    }
    char *doc = write_document(&c, pick);
    if (doc != NULL) {
        if (ingot_objstore_imds_credentials(doc, &again, why, sizeof(why)) != INGOT_OK ||
            !same(c.access_key, again.access_key) || !same(c.secret_key, again.secret_key) ||
            !same(c.token, again.token) || c.expires_unix != again.expires_unix) {
            abort(); /* what was read, written back, reads otherwise */
        }
        ingot_objstore_creds_release(&again);
        free(doc);
    }
    ingot_objstore_creds_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_BODY_MAX) return 0;
    char *body = fuzz_cstr(data, size); /* the fetch's bodies are NUL-terminated */
    if (body == NULL) return 0;
    size_t len = strlen(body);
    check_role(body, len);
    check_credentials(body, len, size > 0 ? data[size - 1] : 0);
    free(body);
    return 0;
}
