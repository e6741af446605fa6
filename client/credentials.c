/* Endpoint, region and credentials of an s3 client, as the AWS CLI resolves them. */
#include "client/credentials.h"
#include "client/profile.h"
#include "base/log.h"
#include "base/status.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"

/* Profile keys that mean the keys come from somewhere we do not go. */
static const char *const unsupported_keys[] = {"role_arn", "credential_process", "sso_start_url",
                                               "sso_session", "web_identity_token_file"};

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

static int env_true(const char *name)
{
    const char *v = env(name);
    return v != NULL && strcasecmp(v, "true") == 0;
}

/* Both profile sections (credentials file, config file) of the profile in use. */
typedef struct {
    const char *name;
    int named; /* AWS_PROFILE or AWS_DEFAULT_PROFILE chose it */
    ingot_objstore_profile_t cred, conf;
} profiles_t;

static ingot_status_t profiles_load(profiles_t *p)
{
    char *cred_path = ingot_objstore_profile_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    char *conf_path = ingot_objstore_profile_path("AWS_CONFIG_FILE", "config");
    ingot_status_t status = INGOT_OK;

    memset(&p->cred, 0, sizeof(p->cred));
    memset(&p->conf, 0, sizeof(p->conf));
    p->name = env("AWS_PROFILE") ? env("AWS_PROFILE") : env("AWS_DEFAULT_PROFILE");
    p->named = p->name != NULL;
    if (p->name == NULL) p->name = "default";
    if (cred_path != NULL) status = ingot_objstore_profile_load(cred_path, 0, p->name, &p->cred);
    if (status == INGOT_OK && conf_path != NULL) {
        status = ingot_objstore_profile_load(conf_path, 1, p->name, &p->conf);
    }
    if (status == INGOT_OK && p->named && !p->cred.found && !p->conf.found) {
        status = ingot_fail(INGOT_ERR_NOT_FOUND,
                            "objstore: profile '%s' (AWS_PROFILE) not found in %s or in %s",
                            p->name, cred_path ? cred_path : "(no credentials file: HOME unset)",
                            conf_path ? conf_path : "(no config file: HOME unset)");
    }
    free(cred_path);
    free(conf_path);
    return status;
}

static void profiles_release(profiles_t *p)
{
    ingot_objstore_profile_release(&p->cred);
    ingot_objstore_profile_release(&p->conf);
}

static ingot_status_t creds_set(ingot_objstore_creds_t *c, const char *ak, const char *sk,
                                const char *token)
{
    memset(c, 0, sizeof(*c));
    c->access_key = strdup(ak);
    c->secret_key = strdup(sk);
    c->token = token ? strdup(token) : NULL;
    if (c->access_key == NULL || c->secret_key == NULL || (token != NULL && c->token == NULL)) {
        ingot_objstore_creds_release(c);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    return INGOT_OK;
}

static void free_secret(char **secret_p)
{
    if (*secret_p != NULL) explicit_bzero(*secret_p, strlen(*secret_p));
    free(*secret_p);
    *secret_p = NULL;
}

void ingot_objstore_creds_release(ingot_objstore_creds_t *c)
{
    free_secret(&c->secret_key);
    free_secret(&c->token);
    free(c->access_key);
    c->access_key = NULL;
    c->expires_unix = 0;
}

static ingot_status_t from_env(ingot_objstore_settings_t *s, int *found_p)
{
    const char *ak = env("AWS_ACCESS_KEY_ID"), *sk = env("AWS_SECRET_ACCESS_KEY");
    *found_p = 0;
    if (ak == NULL && sk == NULL) return INGOT_OK;
    if (ak == NULL || sk == NULL) {
        return ingot_fail(INGOT_ERR_CONFIG, "objstore: %s is set but %s is not",
                          ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                          ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    }
    *found_p = 1;
    s->kind = INGOT_OBJSTORE_CRED_ENV;
    snprintf(s->credential_source, sizeof(s->credential_source), "env");
    return creds_set(&s->creds, ak, sk, env("AWS_SESSION_TOKEN"));
}

/* The key pair of one section, if it holds one (profile kind). */
static ingot_status_t from_section(ingot_objstore_settings_t *s, const char *name,
                                   const ingot_objstore_profile_t *sec, int *found_p)
{
    const char *ak = ingot_objstore_profile_get(sec, "aws_access_key_id");
    const char *sk = ingot_objstore_profile_get(sec, "aws_secret_access_key");
    if (ak == NULL && sk == NULL) return INGOT_OK;
    if (ak == NULL || sk == NULL || ak[0] == '\0' || sk[0] == '\0') {
        return ingot_fail(INGOT_ERR_CONFIG, "objstore: profile '%s' in %s has %s without %s", name,
                          sec->path, ak ? "aws_access_key_id" : "aws_secret_access_key",
                          ak ? "aws_secret_access_key" : "aws_access_key_id");
    }
    *found_p = 1;
    s->kind = INGOT_OBJSTORE_CRED_PROFILE;
    free(s->cred_file);
    if ((s->cred_file = strdup(sec->path)) == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory reading profile '%s'",
                          name);
    }
    snprintf(s->credential_source, sizeof(s->credential_source), "profile %s from %s", name,
             sec->path);
    return creds_set(&s->creds, ak, sk, ingot_objstore_profile_get(sec, "aws_session_token"));
}

static ingot_status_t from_profile(ingot_objstore_settings_t *s, const profiles_t *p, int *found_p)
{
    *found_p = 0;
    INGOT_CHECK(from_section(s, p->name, &p->cred, found_p));
    if (!*found_p) INGOT_CHECK(from_section(s, p->name, &p->conf, found_p));
    if (*found_p) return INGOT_OK;
    for (size_t i = 0; i < sizeof(unsupported_keys) / sizeof(unsupported_keys[0]); i++) {
        const ingot_objstore_profile_t *sec =
            ingot_objstore_profile_get(&p->cred, unsupported_keys[i]) ? &p->cred : &p->conf;
        if (ingot_objstore_profile_get(sec, unsupported_keys[i]) != NULL) {
            return ingot_fail(INGOT_ERR_UNSUPPORTED,
                              "objstore: profile '%s' in %s gets its keys through %s, which "
                              "ingot does not support: export them (aws configure "
                              "export-credentials) or use a profile with static keys",
                              p->name, sec->path, unsupported_keys[i]);
        }
    }
    return INGOT_OK;
}

static ingot_status_t from_imds(ingot_objstore_settings_t *s, const profiles_t *p)
{
    char why[256] = "AWS_EC2_METADATA_DISABLED=true";
    ingot_status_t status = INGOT_ERR_NOT_FOUND;
    if (!env_true("AWS_EC2_METADATA_DISABLED")) {
        status = ingot_objstore_imds_fetch(s->imds_endpoint, s->imds_timeout_ns, &s->creds, why,
                                           sizeof(why));
    }
    if (status == INGOT_OK) {
        s->kind = INGOT_OBJSTORE_CRED_IMDS;
        snprintf(s->credential_source, sizeof(s->credential_source), "imds (%s)", s->imds_endpoint);
        return INGOT_OK;
    }
    return ingot_fail(status,
                      "objstore: no credentials: AWS_ACCESS_KEY_ID is not set; profile '%s' "
                      "has no keys in %s or %s; instance metadata service at %s: %s",
                      p->name, p->cred.path ? p->cred.path : "(HOME unset)",
                      p->conf.path ? p->conf.path : "(HOME unset)", s->imds_endpoint, why);
}

static int region_ok(const char *r)
{
    size_t n = strlen(r);
    if (n == 0 || n >= 64) return 0;
    for (size_t i = 0; i < n; i++) {
        if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9') || r[i] == '-')) {
            return 0;
        }
    }
    return 1;
}

static ingot_status_t resolve_region(ingot_objstore_settings_t *s, const profiles_t *p)
{
    const char *r = env("AWS_REGION"), *from = "AWS_REGION";
    char where[160];
    if (r == NULL && (r = env("AWS_DEFAULT_REGION")) != NULL) from = "AWS_DEFAULT_REGION";
    if (r == NULL && (r = ingot_objstore_profile_get(&p->conf, "region")) != NULL) {
        snprintf(where, sizeof(where), "profile %s in %s", p->name, p->conf.path);
        from = where;
    }
    if (r == NULL) {
        r = "us-east-1";
        from = "default";
    }
    if (!region_ok(r)) {
        return ingot_fail(INGOT_ERR_CONFIG,
                          "objstore: region '%s' from %s is not a region name ([a-z0-9-]+)", r,
                          from);
    }
    snprintf(s->region, sizeof(s->region), "%s", r);
    snprintf(s->region_source, sizeof(s->region_source), "%s", from);
    return INGOT_OK;
}

static ingot_status_t resolve_endpoint(ingot_objstore_settings_t *s, const profiles_t *p)
{
    const char *names[] = {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"};
    const char *url = NULL, *from = NULL;
    const char *style = ingot_objstore_profile_get(&p->conf, "s3.addressing_style");
    char where[160];

    for (size_t i = 0; i < 2 && url == NULL; i++) from = (url = env(names[i])) ? names[i] : NULL;
    if (url == NULL && (url = ingot_objstore_profile_get(&p->conf, "endpoint_url")) != NULL) {
        snprintf(where, sizeof(where), "profile %s endpoint_url in %s", p->name, p->conf.path);
        from = where;
    }
    s->endpoint.path_style = style != NULL && strcmp(style, "path") == 0;
    if (url == NULL || env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
        snprintf(s->endpoint_source, sizeof(s->endpoint_source), "AWS, %s",
                 s->endpoint.path_style ? "path-style" : "virtual-hosted");
        return INGOT_OK;
    }
    INGOT_CHECK(ingot_location_endpoint_check(url, from, &s->endpoint.base));
    s->endpoint.path_style = 1;
    snprintf(s->endpoint_source, sizeof(s->endpoint_source), "path-style, %.140s", from);
    return INGOT_OK;
}

/* The environment's keys, else the profile's, else the metadata service's: asked with @p ask,
 * else only named (what ingot_objstore_settings_identify resolves). */
static ingot_status_t resolve_credentials(ingot_objstore_settings_t *s, const profiles_t *p,
                                          int ask)
{
    int found = 0;
    INGOT_CHECK(from_env(s, &found));
    if (!found) INGOT_CHECK(from_profile(s, p, &found));
    if (!found && ask) INGOT_CHECK(from_imds(s, p));
    if (!found && !ask) {
        s->kind = INGOT_OBJSTORE_CRED_IMDS;
        snprintf(s->credential_source, sizeof(s->credential_source), "imds (%s)", s->imds_endpoint);
    }
    return INGOT_OK;
}

static ingot_status_t settings_resolve(uint64_t imds_timeout_ns, int ask_imds,
                                       ingot_objstore_settings_t *s)
{
    profiles_t p;
    ingot_status_t status;
    const char *imds = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");

    memset(s, 0, sizeof(*s));
    s->imds_timeout_ns = imds_timeout_ns;
    status = profiles_load(&p);
    if (status == INGOT_OK) {
        s->profile = strdup(p.name);
        s->imds_endpoint = strdup(imds ? imds : IMDS_DEFAULT_ENDPOINT);
        if (s->profile == NULL || s->imds_endpoint == NULL) {
            status = ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
        }
    }
    if (status == INGOT_OK) status = resolve_region(s, &p);
    if (status == INGOT_OK) status = resolve_endpoint(s, &p);
    if (status == INGOT_OK) status = resolve_credentials(s, &p, ask_imds);
    profiles_release(&p);
    if (status != INGOT_OK) ingot_objstore_settings_release(s);
    return status;
}

ingot_status_t ingot_objstore_settings_resolve(uint64_t imds_timeout_ns,
                                               ingot_objstore_settings_t *s)
{
    return settings_resolve(imds_timeout_ns, 1, s);
}

ingot_status_t ingot_objstore_settings_identify(ingot_objstore_settings_t *s)
{
    return settings_resolve(0, 0, s);
}

/* Re-read the profile's files; the profile's keys replace @p s's. */
static ingot_status_t refresh_profile(ingot_objstore_settings_t *s)
{
    ingot_objstore_settings_t fresh;
    profiles_t p;
    int found = 0;
    ingot_status_t status;

    memset(&fresh, 0, sizeof(fresh));
    status = profiles_load(&p);
    if (status == INGOT_OK) status = from_profile(&fresh, &p, &found);
    if (status == INGOT_OK && !found) {
        status = ingot_fail(INGOT_ERR_NOT_FOUND, "objstore: profile '%s' no longer has keys in %s",
                            s->profile, s->cred_file);
    }
    profiles_release(&p);
    if (status == INGOT_OK) {
        ingot_objstore_creds_t old = s->creds;
        char *old_file = s->cred_file;
        s->creds = fresh.creds;
        s->cred_file = fresh.cred_file;
        memcpy(s->credential_source, fresh.credential_source, sizeof(s->credential_source));
        fresh.creds = old;
        fresh.cred_file = old_file;
    }
    ingot_objstore_settings_release(&fresh);
    return status;
}

ingot_status_t ingot_objstore_settings_refresh(ingot_objstore_settings_t *s)
{
    ingot_objstore_creds_t fresh = {0};
    ingot_status_t status;
    char why[256];

    switch (s->kind) {
    case INGOT_OBJSTORE_CRED_PROFILE: return refresh_profile(s);
    case INGOT_OBJSTORE_CRED_IMDS:
        status = ingot_objstore_imds_fetch(s->imds_endpoint, s->imds_timeout_ns, &fresh, why,
                                           sizeof(why));
        if (status != INGOT_OK) {
            return ingot_fail(status,
                              "objstore: re-reading credentials from the instance "
                              "metadata service at %s: %s",
                              s->imds_endpoint, why);
        }
        ingot_objstore_creds_release(&s->creds);
        s->creds = fresh;
        return INGOT_OK;
    case INGOT_OBJSTORE_CRED_ENV:
        return ingot_fail(INGOT_ERR_CONFIG,
                          "objstore: the credentials from the environment expired; environment "
                          "variables cannot change under a running job: use a profile or the "
                          "instance metadata service for temporary credentials");
    case INGOT_OBJSTORE_CRED_NONE: break;
    }
    return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: no credentials to refresh");
}

void ingot_objstore_settings_release(ingot_objstore_settings_t *s)
{
    if (s == NULL) return;
    ingot_objstore_creds_release(&s->creds);
    free(s->profile);
    free(s->cred_file);
    free(s->imds_endpoint);
    free(s->endpoint.base);
    memset(s, 0, sizeof(*s));
}
