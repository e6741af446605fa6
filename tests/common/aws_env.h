/*
 * The AWS environment of a client test: every AWS_* variable the client reads unset, HOME the
 * test's own (the real ~/.aws is never read), the metadata service off (cases that want it say
 * so).
 */
#ifndef INGOT_TEST_AWS_ENV_H
#define INGOT_TEST_AWS_ENV_H

#include <stdlib.h>

static inline void aws_env_clean(const char *home)
{
    static const char *const vars[] = {
        "AWS_ACCESS_KEY_ID",         "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",         "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",       "AWS_REGION",
        "AWS_DEFAULT_REGION",        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",       "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",           "AWS_EC2_METADATA_SERVICE_ENDPOINT",
        "AWS_EC2_METADATA_DISABLED", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) unsetenv(vars[i]);
    setenv("HOME", home, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

#endif
