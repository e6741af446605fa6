/*
 * Logging: INGOT_LOG_FILE with %h/%p/%r substitution, level filtering, the
 * "[host:pid:rank] INGOT level file:line" prefix, and one whole line per message.
 */
#include "test.h"
#include "base/config.h"
#include "base/log.h"
#include <pthread.h>

#define LOG_THREADS 4
#define LOG_LINES   500

static void *log_many(void *arg)
{
    for (int i = 0; i < LOG_LINES; i++) {
        ingot_warn("thread %ld line %d %s", (long)(intptr_t)arg, i,
                   "padding-padding-padding-padding-padding-padding-padding-padding");
    }
    return NULL;
}

int main(void)
{
    char pattern[4096], path[4096], host[64];
    snprintf(pattern, sizeof(pattern), "%s/log.%%h.%%p.%%r", test_tmpdir());
    setenv("INGOT_LOG_FILE", pattern, 1);
    setenv("INGOT_LOG_LEVEL", "info", 1);
    ingot_log_set_rank(7);
    CHECK_OK(ingot_config_load());
    gethostname(host, sizeof(host));
    host[strcspn(host, ".")] = '\0';
    snprintf(path, sizeof(path), "%s/log.%s.%d.7", test_tmpdir(), host, (int)getpid());

    ingot_info("visible info %d", 1);
    ingot_debug("hidden debug %d", 2);
    ingot_error("visible error %s", "x");
    pthread_t th[LOG_THREADS];
    for (long t = 0; t < LOG_THREADS; t++) {
        CHECK(pthread_create(&th[t], NULL, log_many, (void *)(intptr_t)t) == 0);
    }
    for (int t = 0; t < LOG_THREADS; t++) {
        pthread_join(th[t], NULL);
    }
    char *text = test_read_file(path, NULL);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "[%s:%d:7] INGOT info  test_log.c:", host, (int)getpid());
    CHECK_CONTAINS(text, prefix);
    CHECK_CONTAINS(text, "visible info 1");
    CHECK_CONTAINS(text, "INGOT error test_log.c:");
    CHECK(strstr(text, "hidden debug") == NULL);
    /* Every line is whole: starts with the prefix and ends with the padding or a message. */
    int lines = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        CHECK(l[0] == '[');
        CHECK(strstr(l + 1, "[") == NULL);
        lines++;
    }
    CHECK(lines == 2 + LOG_THREADS * LOG_LINES);
    free(text);
    return 0;
}
