/*
 * Credentials, region and endpoint resolved as the AWS CLI does, from files in a temporary HOME
 * (the real ~/.aws is never read: HOME and every AWS_* variable are replaced first). The
 * metadata service is exercised here only where it is absent: refused (a closed loopback port)
 * and silent (a loopback socket that accepts and never answers: bounded by the timeout). The
 * IMDSv2 exchange itself runs against a stand-in in the integration tests.
 */
#include "test.h"
#include "aws_env.h"
#include "loopback.h"
#include "client/credentials.h"
#include "base/log.h"
#include "base/time.h"
#include <sys/stat.h>

#define SECRET     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define TIMEOUT_NS (300 * INGOT_NSEC_PER_MSEC)

static char home[600], cred_path[700], conf_path[700];

static void clean_env(void)
{
    aws_env_clean(home); /* cases that want IMDS say so */
    remove(cred_path);
    remove(conf_path);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

static ingot_status_t resolve(ingot_objstore_settings_t *s)
{
    ingot_last_error_clear();
    ingot_status_t st = ingot_objstore_settings_resolve(TIMEOUT_NS, s);
    CHECK(strstr(ingot_last_error(), SECRET) == NULL); /* never a secret in a message */
    return st;
}

static void test_env(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    setenv("AWS_SESSION_TOKEN", "tok", 1);
    write_file(cred_path, "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = x\n");
    CHECK_OK(resolve(&s));
    CHECK(s.kind == INGOT_OBJSTORE_CRED_ENV && strcmp(s.credential_source, "env") == 0);
    CHECK(strcmp(s.creds.access_key, "AKIDENV") == 0 && strcmp(s.creds.token, "tok") == 0);
    CHECK(strcmp(s.region, "us-east-1") == 0 && strcmp(s.region_source, "default") == 0);
    CHECK(s.endpoint.base == NULL);
    /* environment credentials cannot be renewed */
    CHECK_STATUS(ingot_objstore_settings_refresh(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "cannot change under a running job");
    ingot_objstore_settings_release(&s);

    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK_STATUS(resolve(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY");
}

static void test_default_profile(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    write_file(cred_path, "# comment\n[other]\naws_access_key_id=NO\naws_secret_access_key=NO\n"
                          "[default]\naws_access_key_id = AKIDDEF\n; c\n"
                          "aws_secret_access_key = " SECRET "\n");
    write_file(conf_path, "[default]\nregion = eu-central-1\n");
    CHECK_OK(resolve(&s));
    CHECK(s.kind == INGOT_OBJSTORE_CRED_PROFILE);
    CHECK(strcmp(s.creds.access_key, "AKIDDEF") == 0 && strcmp(s.creds.secret_key, SECRET) == 0);
    CHECK(s.creds.token == NULL);
    CHECK_CONTAINS(s.credential_source, "profile default from ");
    CHECK_CONTAINS(s.credential_source, cred_path);
    CHECK(strcmp(s.region, "eu-central-1") == 0);
    CHECK_CONTAINS(s.region_source, conf_path);
    ingot_objstore_settings_release(&s);
}

static void test_named_profile(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    setenv("AWS_PROFILE", "ci", 1);
    write_file(cred_path, "[default]\naws_access_key_id=D\naws_secret_access_key=D\n");
    write_file(conf_path, "[profile ci]\nregion = ap-south-1\nendpoint_url = http://127.0.0.1:9/\n"
                          "aws_access_key_id = AKIDCONF\naws_secret_access_key = " SECRET "\n"
                          "aws_session_token = sess\ns3 =\n  addressing_style = path\n");
    CHECK_OK(resolve(&s));
    CHECK(strcmp(s.creds.access_key, "AKIDCONF") == 0 && strcmp(s.creds.token, "sess") == 0);
    CHECK_CONTAINS(s.credential_source, "profile ci from ");
    CHECK_CONTAINS(s.credential_source, conf_path);
    CHECK(strcmp(s.region, "ap-south-1") == 0);
    CHECK(s.endpoint.base != NULL && strcmp(s.endpoint.base, "http://127.0.0.1:9") == 0);
    CHECK(s.endpoint.path_style);
    CHECK_CONTAINS(s.endpoint_source, "endpoint_url");
    ingot_objstore_settings_release(&s);

    /* the variables win over the profile */
    setenv("AWS_REGION", "us-west-2", 1);
    setenv("AWS_DEFAULT_REGION", "us-west-1", 1);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:10", 1);
    setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:11", 1);
    CHECK_OK(resolve(&s));
    CHECK(strcmp(s.region, "us-west-2") == 0 && strcmp(s.region_source, "AWS_REGION") == 0);
    CHECK(strcmp(s.endpoint.base, "http://127.0.0.1:11") == 0);
    CHECK_CONTAINS(s.endpoint_source, "AWS_ENDPOINT_URL_S3");
    ingot_objstore_settings_release(&s);
    unsetenv("AWS_REGION");
    unsetenv("AWS_ENDPOINT_URL_S3");
    CHECK_OK(resolve(&s));
    CHECK(strcmp(s.region, "us-west-1") == 0 &&
          strcmp(s.endpoint.base, "http://127.0.0.1:10") == 0);
    ingot_objstore_settings_release(&s);
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    CHECK_OK(resolve(&s));
    CHECK(s.endpoint.base == NULL);
    ingot_objstore_settings_release(&s);
}

static void test_unknown_and_bad_profiles(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    setenv("AWS_PROFILE", "nosuch", 1);
    write_file(cred_path, "[default]\naws_access_key_id=D\naws_secret_access_key=D\n");
    write_file(conf_path, "[nosuch]\nregion = x\n"); /* config needs "[profile nosuch]" */
    CHECK_STATUS(resolve(&s), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(ingot_last_error(), "profile 'nosuch'");
    CHECK_CONTAINS(ingot_last_error(), cred_path);
    CHECK_CONTAINS(ingot_last_error(), conf_path);

    setenv("AWS_PROFILE", "half", 1);
    write_file(cred_path, "[half]\naws_access_key_id = AKIDHALF\n");
    CHECK_STATUS(resolve(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "aws_access_key_id without aws_secret_access_key");

    setenv("AWS_PROFILE", "role", 1);
    write_file(conf_path, "[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = d\n");
    CHECK_STATUS(resolve(&s), INGOT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(ingot_last_error(), "role_arn");

    setenv("AWS_PROFILE", "x", 1);
    write_file(cred_path, "[x]\naws_access_key_id = A\nthis line is wrong\n");
    CHECK_STATUS(resolve(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), ":3:");

    setenv("AWS_PROFILE", "x", 1);
    write_file(cred_path, "[x]\naws_access_key_id=A\naws_secret_access_key=" SECRET "\n");
    setenv("AWS_REGION", "us east", 1);
    CHECK_STATUS(resolve(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "'us east' from AWS_REGION");
    unsetenv("AWS_REGION");
    setenv("AWS_ENDPOINT_URL", "localhost:9000", 1);
    CHECK_STATUS(resolve(&s), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(ingot_last_error(), "AWS_ENDPOINT_URL");
}

static void test_file_variables(void)
{
    ingot_objstore_settings_t s;
    char alt[800];
    clean_env();
    snprintf(alt, sizeof(alt), "%s/elsewhere-credentials", home);
    write_file(alt, "[default]\naws_access_key_id = AKIDALT\naws_secret_access_key = y\n");
    write_file(cred_path, "[default]\naws_access_key_id = AKIDHOME\naws_secret_access_key = y\n");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "~/elsewhere-credentials", 1); /* ~ is HOME */
    CHECK_OK(resolve(&s));
    CHECK(strcmp(s.creds.access_key, "AKIDALT") == 0);
    CHECK_CONTAINS(s.credential_source, alt);
    ingot_objstore_settings_release(&s);
    remove(alt);
}

static void test_refresh_profile(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    write_file(cred_path, "[default]\naws_access_key_id=OLD\naws_secret_access_key=old\n"
                          "aws_session_token=t1\n");
    CHECK_OK(resolve(&s));
    write_file(cred_path, "[default]\naws_access_key_id=NEW\naws_secret_access_key=new\n"
                          "aws_session_token=t2\n");
    CHECK_OK(ingot_objstore_settings_refresh(&s));
    CHECK(strcmp(s.creds.access_key, "NEW") == 0 && strcmp(s.creds.token, "t2") == 0);
    remove(cred_path);
    CHECK_STATUS(ingot_objstore_settings_refresh(&s), INGOT_ERR_NOT_FOUND);
    CHECK(strcmp(s.creds.access_key, "NEW") == 0); /* kept when the refresh fails */
    ingot_objstore_settings_release(&s);
}

static void test_no_credentials(void)
{
    ingot_objstore_settings_t s;
    clean_env();
    CHECK_STATUS(resolve(&s), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(ingot_last_error(), "no credentials");
    CHECK_CONTAINS(ingot_last_error(), "AWS_ACCESS_KEY_ID");
    CHECK_CONTAINS(ingot_last_error(), "profile 'default'");
    CHECK_CONTAINS(ingot_last_error(), "AWS_EC2_METADATA_DISABLED");
    unsetenv("HOME");
    CHECK_STATUS(resolve(&s), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(ingot_last_error(), "HOME unset");
}

static void test_imds_absent(void)
{
    ingot_objstore_settings_t s;
    char url[64];
    int fd;
    clean_env();
    unsetenv("AWS_EC2_METADATA_DISABLED");

    snprintf(url, sizeof(url), "http://127.0.0.1:%d", test_loopback_port(0, &fd));
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
    /* refused at once: what a resolve costs besides waiting, on this machine now (the most
     * of three), the baseline of the silent service's bound */
    uint64_t base = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t t = ingot_time_ns();
        CHECK_STATUS(resolve(&s), INGOT_ERR_NOT_FOUND);
        t = ingot_time_ns() - t;
        base = t > base ? t : base;
    }
    CHECK_CONTAINS(ingot_last_error(), url);

    snprintf(url, sizeof(url), "http://127.0.0.1:%d", test_loopback_port(1, &fd));
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
    uint64_t t0 = ingot_time_ns();
    CHECK_STATUS(resolve(&s), INGOT_ERR_TIMED_OUT);
    uint64_t took = ingot_time_ns() - t0;
    printf("imds: silent %.3f s, refused %.3f s (INGOT_S3_IMDS_TIMEOUT %.3f s)\n", took / 1e9,
           base / 1e9, TIMEOUT_NS / 1e9);
    CHECK(took >= TIMEOUT_NS - 20 * INGOT_NSEC_PER_MSEC && took < 3 * TIMEOUT_NS + 4 * base);
    CHECK_CONTAINS(ingot_last_error(), url);
    CHECK_CONTAINS(ingot_last_error(), "no answer within INGOT_S3_IMDS_TIMEOUT");
    close(fd);
}

int main(void)
{
    snprintf(home, sizeof(home), "%s", test_tmpdir());
    snprintf(cred_path, sizeof(cred_path), "%s/.aws/credentials", home);
    snprintf(conf_path, sizeof(conf_path), "%s/.aws/config", home);
    char dir[700];
    snprintf(dir, sizeof(dir), "%s/.aws", home);
    CHECK(mkdir(dir, 0700) == 0);

    test_env();
    test_default_profile();
    test_named_profile();
    test_unknown_and_bad_profiles();
    test_file_variables();
    test_refresh_profile();
    test_no_credentials();
    test_imds_absent();
    printf("objstore credentials: ok\n");
    return 0;
}
