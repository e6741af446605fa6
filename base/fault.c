/*
 * INGOT_FAULT parsing and the per-site call counters. The parser is always built (so the config
 * table can reject specs with a clear message); counting happens only in fault-injection builds.
 */
#include "base/fault.h"
#include "base/status.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULT_RULES_MAX 16
#define FAULT_SPEC_MAX  1024

typedef struct fault_rule {
    ingot_fault_site_t site;
    uint64_t nth; /* 1-based call number; 0 = every call */
    int onward;   /* "N+": the nth and every later call */
    int err;
} fault_rule_t;

static const char *const site_names[INGOT_FAULT_SITE_LAST] = {
    "malloc",      "mmap",        "mlock",      "cuda_pin",   "open",         "pread",
    "thread",      "cuda_malloc", "cache_fill", "peer_key",   "peer_read",    "disk_write",
    "disk_folder", "disk_statfs", "arrival",    "part_fetch", "disk_publish", "disk_hold",
};
static const int site_default_errno[INGOT_FAULT_SITE_LAST] = {
    ENOMEM, ENOMEM, ENOMEM, ENOMEM, EACCES,  EIO,   EAGAIN, ENOMEM, EIO,
    EINVAL, EINVAL, ENOSPC, EROFS,  EREMOTE, EINTR, EINTR,  EINTR,  EINTR,
};

static const struct {
    const char *name;
    int err;
} errno_names[] = {
    {"ENOMEM", ENOMEM}, {"EIO", EIO},       {"EAGAIN", EAGAIN}, {"EPERM", EPERM},
    {"ENOSPC", ENOSPC}, {"EINVAL", EINVAL}, {"ENOENT", ENOENT}, {"EACCES", EACCES},
    {"EROFS", EROFS},   {"EDQUOT", EDQUOT},
};

static fault_rule_t armed_rules[FAULT_RULES_MAX];
static _Atomic int armed_count;
static _Atomic uint64_t site_calls[INGOT_FAULT_SITE_LAST];
static pthread_mutex_t arm_lock = PTHREAD_MUTEX_INITIALIZER;

static int parse_rule(char *tok, fault_rule_t *rule, char *err, size_t errlen)
{
    char *site = strtok_r(tok, ":", &tok), *nth = strtok_r(NULL, ":", &tok);
    char *action = strtok_r(NULL, ":", &tok);
    if (site == NULL || nth == NULL || action == NULL || strtok_r(NULL, ":", &tok) != NULL) {
        snprintf(err, errlen, "'%s' is not site:nth:action", site ? site : "");
        return -1;
    }
    int s;
    for (s = 0; s < INGOT_FAULT_SITE_LAST && strcmp(site, site_names[s]) != 0; s++) {
    }
    if (s == INGOT_FAULT_SITE_LAST) {
        snprintf(err, errlen,
                 "unknown site '%s' (sites: malloc, mmap, mlock, cuda_pin, open, "
                 "pread, thread, cuda_malloc, cache_fill, peer_key, peer_read, disk_write, "
                 "disk_folder, disk_statfs, arrival, part_fetch, disk_publish, disk_hold)",
                 site);
        return -1;
    }
    rule->site = (ingot_fault_site_t)s;
    rule->onward = 0;
    if (strcmp(nth, "*") == 0) {
        rule->nth = 0;
    } else {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(nth, &end, 10);
        if (end != nth && *end == '+' && end[1] == '\0') {
            rule->onward = 1;
        } else if (end == nth || *end != '\0') {
            n = 0;
        }
        if (n == 0 || errno == ERANGE || nth[0] == '-') {
            snprintf(err, errlen, "bad call number '%s' (a positive integer, 'N+' or '*')", nth);
            return -1;
        }
        rule->nth = n;
    }
    rule->err = 0;
    if (strcmp(action, "fail") == 0) {
        rule->err = site_default_errno[s];
    }
    for (size_t i = 0; i < INGOT_ARRAY_SIZE(errno_names) && rule->err == 0; i++) {
        if (strcmp(action, errno_names[i].name) == 0) {
            rule->err = errno_names[i].err;
        }
    }
    if (rule->err == 0) {
        int o = snprintf(err, errlen, "unknown action '%s' (fail", action);
        for (size_t i = 0; i < INGOT_ARRAY_SIZE(errno_names) && o > 0 && (size_t)o < errlen; i++) {
            o += snprintf(err + o, errlen - (size_t)o, ", %s", errno_names[i].name);
        }
        if (o > 0 && (size_t)o < errlen) {
            snprintf(err + o, errlen - (size_t)o, ")");
        }
        return -1;
    }
    return 0;
}

static ingot_status_t fault_parse(const char *spec, fault_rule_t *rules, int *count_p, char *err,
                                  size_t errlen)
{
    char buf[FAULT_SPEC_MAX];
    *count_p = 0;
    if (spec == NULL || strcmp(spec, "none") == 0) {
        return INGOT_OK;
    }
    if (strlen(spec) >= sizeof(buf)) {
        snprintf(err, errlen, "spec longer than %d characters", FAULT_SPEC_MAX - 1);
        return INGOT_ERR_CONFIG;
    }
    strcpy(buf, spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (*count_p == FAULT_RULES_MAX) {
            snprintf(err, errlen, "more than %d rules", FAULT_RULES_MAX);
            return INGOT_ERR_CONFIG;
        }
        if (parse_rule(tok, &rules[*count_p], err, errlen) != 0) {
            return INGOT_ERR_CONFIG;
        }
        (*count_p)++;
    }
    if (*count_p == 0) {
        snprintf(err, errlen, "no rule in '%s'", spec);
        return INGOT_ERR_CONFIG;
    }
    return INGOT_OK;
}

ingot_status_t ingot_fault_validate(const char *spec, char *err, size_t errlen)
{
    fault_rule_t rules[FAULT_RULES_MAX];
    int count;
    return fault_parse(spec, rules, &count, err, errlen);
}

ingot_status_t ingot_fault_arm(const char *spec, char *err, size_t errlen)
{
    fault_rule_t rules[FAULT_RULES_MAX];
    int count;
    ingot_status_t st = fault_parse(spec, rules, &count, err, errlen);
    if (st != INGOT_OK) {
        return st;
    }
    pthread_mutex_lock(&arm_lock);
    atomic_store(&armed_count, 0);
    memcpy(armed_rules, rules, sizeof(rules));
    for (int s = 0; s < INGOT_FAULT_SITE_LAST; s++) {
        atomic_store(&site_calls[s], 0);
    }
    atomic_store(&armed_count, count);
    pthread_mutex_unlock(&arm_lock);
    return INGOT_OK;
}

#ifdef INGOT_FAULT_INJECTION
int ingot_fault_check(ingot_fault_site_t site)
{
    int count = atomic_load(&armed_count);
    if (count == 0) {
        return 0;
    }
    /* Armed (tests only): the lock keeps a concurrent re-arm from tearing the rules. */
    int err = 0;
    pthread_mutex_lock(&arm_lock);
    uint64_t call = atomic_fetch_add(&site_calls[site], 1) + 1;
    for (int i = 0; i < atomic_load(&armed_count) && err == 0; i++) {
        const fault_rule_t *r = &armed_rules[i];
        if (r->site == site && (r->nth == 0 || call == r->nth || (r->onward && call > r->nth))) {
            err = r->err;
        }
    }
    pthread_mutex_unlock(&arm_lock);
    return err;
}
#endif
