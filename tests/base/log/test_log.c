/*
 * Logging: INGOT_LOG_FILE with %h/%p/%r substitution, level filtering, the
 * "[host:pid:rank] INGOT level file:line" prefix, and one whole line per message; a hold keeps
 * a collective step's errors (each still the last error) until they are written or dropped.
 */
#include "common/test.h"
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

static size_t count_in(const char *path, const char *what)
{
    char *text = test_read_file(path, NULL);
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++) {
        n++;
    }
    free(text);
    return n;
}

static void two_errors(void)
{
    ingot_error("held one %d", 1);
    ingot_error("held two");
}

/* Held errors: not written while held, each the last error; their digest follows site and text
 * (not the order of holds); a flush writes them with the note on the last; a drop forgets them;
 * the outermost end writes what is left, and a thread without a hold writes at once. */
static void check_hold(const char *path)
{
    uint64_t d1, d2, d0;
    CHECK(ingot_log_held(&d0) == 0 && d0 == 0);
    ingot_log_hold_begin();
    ingot_log_hold_begin(); /* nested */
    two_errors();
    CHECK_CONTAINS(ingot_last_error(), "held two");
    CHECK(count_in(path, "held one") == 0);
    CHECK(ingot_log_held(&d1) == 2 && d1 != 0);
    ingot_log_held_flush(1, " (note)");
    CHECK(count_in(path, "held one 1\n") == 1 && count_in(path, "held two (note)\n") == 1);
    CHECK(ingot_log_held(&d2) == 0);
    two_errors();
    CHECK(ingot_log_held(&d2) == 2 && d2 == d1); /* the same sites and text, the same digest */
    ingot_log_held_flush(0, NULL);               /* dropped: another rank said it */
    CHECK(count_in(path, "held one 1") == 1);
    ingot_error("held three");
    ingot_log_hold_end(); /* inner: still held */
    CHECK(ingot_log_hold_depth() == 1 && count_in(path, "held three") == 0);
    ingot_log_hold_end(); /* outermost: written */
    CHECK(ingot_log_hold_depth() == 0 && count_in(path, "held three") == 1);
    ingot_error("not held");
    CHECK(count_in(path, "not held") == 1);
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
    check_hold(path);
    return 0;
}
