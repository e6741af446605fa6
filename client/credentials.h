/*
 * Where an s3 client's requests go and who signs them (credentials.c, imds.c), resolved as the
 * AWS CLI resolves them:
 *
 *   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN); else the
 *                profile (AWS_PROFILE, AWS_DEFAULT_PROFILE, "default") in the credentials file
 *                (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials), then in the config file
 *                (AWS_CONFIG_FILE, ~/.aws/config, "[profile NAME]" sections); else the instance
 *                metadata service, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT, default
 *                http://169.254.169.254; AWS_EC2_METADATA_DISABLED=true skips it)
 *   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1
 *   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url (all skipped
 *                under AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else AWS; a configured
 *                endpoint is addressed path-style
 *
 * A named profile that exists in neither file is an error, as in the CLI. Profiles that get
 * their keys elsewhere (role_arn, credential_process, sso_*, web_identity_token_file) are named
 * as unsupported. Temporary credentials are re-read from their source on ExpiredToken
 * (ingot_objstore_settings_refresh); environment variables cannot change under a running job, so
 * credentials from them are not.
 */
#ifndef INGOT_CLIENT_CREDENTIALS_H
#define INGOT_CLIENT_CREDENTIALS_H

#include <ingot/status.h>
#include "client/url.h"
#include <stdint.h>

typedef enum ingot_objstore_cred_kind {
    INGOT_OBJSTORE_CRED_NONE,    /**< unsigned requests (http(s) only) */
    INGOT_OBJSTORE_CRED_ENV,     /**< AWS_ACCESS_KEY_ID ... */
    INGOT_OBJSTORE_CRED_PROFILE, /**< a shared file */
    INGOT_OBJSTORE_CRED_IMDS     /**< the instance metadata service */
} ingot_objstore_cred_kind_t;

/** A key pair. The secret and the token are never logged, printed or written out. */
typedef struct ingot_objstore_creds {
    char *access_key;
    char *secret_key;
    char *token;          /**< session token, or NULL */
    int64_t expires_unix; /**< when they expire (seconds since the epoch), 0: not known */
} ingot_objstore_creds_t;

/** Everything resolved for an s3 client. */
typedef struct ingot_objstore_settings {
    ingot_objstore_cred_kind_t kind;
    ingot_objstore_creds_t creds;
    char *profile;       /**< the profile read ("default") */
    char *cred_file;     /**< the file the credentials came from (profile kind) */
    char *imds_endpoint; /**< the metadata service's base URL */
    uint64_t imds_timeout_ns;
    char region[64];
    char region_source[160];
    ingot_objstore_endpoint_t endpoint;
    char endpoint_source[160];
    char credential_source[512]; /**< "env", "profile ci from /x/credentials", "imds (URL)" */
} ingot_objstore_settings_t;

/**
 * Resolve endpoint, region and credentials from the environment and the shared files.
 * @p imds_timeout_ns bounds the whole metadata exchange.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND (no credentials anywhere, or an unknown profile);
 *         INGOT_ERR_TIMED_OUT (the metadata service did not answer in time); INGOT_ERR_CONFIG
 *         (half a key pair, a malformed region or endpoint, a file line); INGOT_ERR_UNSUPPORTED
 *         (a profile that assumes a role, runs a process or uses SSO); INGOT_ERR_IO. Each is
 *         logged naming the variables, profile, files and address it looked at.
 */
ingot_status_t ingot_objstore_settings_resolve(uint64_t imds_timeout_ns,
                                               ingot_objstore_settings_t *settings);

/**
 * What ingot_objstore_settings_resolve() would resolve, without asking the metadata service:
 * endpoint, region, and the credentials of the environment or the profile, or else "imds (URL)"
 * as their source (kind INGOT_OBJSTORE_CRED_IMDS, no keys). What a client's identity is, before
 * one is made (ingot_objstore_shared). Errors as resolve's, but never the metadata service's.
 */
ingot_status_t ingot_objstore_settings_identify(ingot_objstore_settings_t *settings);

/**
 * Re-read the credentials from where they came from (the profile's file, the metadata service):
 * after an ExpiredToken answer, or before @p settings' credentials expire.
 * @return INGOT_OK (settings->creds replaced); INGOT_ERR_CONFIG for credentials from the
 *         environment (they cannot change under a running job); the errors of resolve.
 */
ingot_status_t ingot_objstore_settings_refresh(ingot_objstore_settings_t *settings);

/** Zero the secrets and free @p settings' strings. Accepts NULL. */
void ingot_objstore_settings_release(ingot_objstore_settings_t *settings);

/** Zero and free a key pair. */
void ingot_objstore_creds_release(ingot_objstore_creds_t *creds);

/**
 * IMDSv2 (imds.c): PUT ENDPOINT/latest/api/token, then GET the role name and its credentials
 * with the token, all within @p timeout_ns, bypassing any proxy. Logs nothing: on failure @p why
 * (room @p whylen) says which step failed and how (never a token or key).
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND (refused, no role attached), INGOT_ERR_TIMED_OUT (no
 *         answer in time), INGOT_ERR_PERMISSION (another HTTP status), INGOT_ERR_FORMAT (an
 *         answer that is not credentials), INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_imds_fetch(const char *endpoint, uint64_t timeout_ns,
                                         ingot_objstore_creds_t *creds, char *why, size_t whylen);

/*
 * The metadata service's two answers, read (imds.c; its fetch's steps, and the fuzz target's
 * entry points). Bodies are NUL-terminated; nothing is logged.
 */

/**
 * The role's name in the listing @p body: its first line, cut there in place.
 * @return @p body, or NULL when it holds no name or one longer than 256 bytes.
 */
const char *ingot_objstore_imds_role(char *body);

/**
 * The credentials document @p body ({"Code": "Success", "AccessKeyId", "SecretAccessKey",
 * "Token", "Expiration": "YYYY-MM-DDTHH:MM:SSZ"}) into @p creds (zeroed first; release with
 * ingot_objstore_creds_release()).
 * @return INGOT_OK; INGOT_ERR_FORMAT (no "Code": "Success" or no key pair: @p why, room
 *         @p whylen, says so), @p creds then empty.
 */
ingot_status_t ingot_objstore_imds_credentials(const char *body, ingot_objstore_creds_t *creds,
                                               char *why, size_t whylen);

#endif
