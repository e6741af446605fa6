/*
 * Config table: every type's good and bad values, every variable rejecting garbage with a
 * message that names it, canonical formatting round trips, unknown-name suggestions, and
 * ingot_config_print listing every variable with doc and scope.
 */
#include "common/test.h"
#include "base/base_config.h"
#include "runtime/loader/loader_config.h"
#include "source/cache/cache.h"
#include "transport/transport.h"
#include "topology/topo.h"
#include <ingot/config.h>
#include <stdint.h>

typedef struct env_pair {
    const char *name, *value;
} env_pair_t;

/* Lookup over a fixed list of pairs (the real environment is never touched). */
static const char *lookup_pairs(const char *name, void *arg)
{
    for (const env_pair_t *p = arg; p->name != NULL; p++) {
        if (strcmp(p->name, name) == 0) {
            return p->value;
        }
    }
    return NULL;
}

/* Every variable of every registered module table: for (FIELDS(t, f)) { ... } */
#define FIELDS(_t, _f) \
    size_t _t##_i = 0; \
    _t##_i < ingot_config_table_count(); _t##_i++) \
    for (const ingot_config_table_t *_t = ingot_config_table_at(_t##_i); _t != NULL; _t = NULL) \
    for (const ingot_config_field_t *_f = _t->fields; _f < _t->fields + _t->count; _f++

static const ingot_config_field_t *field_of_type(ingot_config_type_t type)
{
    for (FIELDS(t, f)) {
        if (f->type == type) {
            return f;
        }
    }
    return NULL;
}

/* A synthetic field of each type with known bounds, so parser rules are tested exactly. */
static const char *const colours[] = {"red", "green", NULL};
static ingot_config_field_t f_int = {
    "T_INT", "0",  "",  INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_INT, 0, -5, 1000, NULL,
    NULL,    NULL, NULL};
static ingot_config_field_t f_size = {
    "T_SIZE", "0", "", INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_SIZE, 0, 0, 0, NULL, NULL, NULL, NULL};
static ingot_config_field_t f_dur = {
    "T_DUR", "0",  "",  INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_DURATION, 0, 0, 0, NULL,
    NULL,    NULL, NULL};
static ingot_config_field_t f_bool = {
    "T_BOOL", "y", "", INGOT_CONFIG_SCOPE_RANK, INGOT_CONFIG_BOOL, 0, 0, 0, NULL, NULL, NULL, NULL};
static ingot_config_field_t f_enum = {"T_ENUM",          "red", "",   INGOT_CONFIG_SCOPE_RANK,
                                      INGOT_CONFIG_ENUM, 0,     0,    0,
                                      colours,           NULL,  NULL, NULL};

static void expect_u64(ingot_config_field_t *f, const char *s, uint64_t want)
{
    uint64_t v = 0;
    char err[512] = "";
    ingot_status_t st = ingot_config_parse(f, s, &v, err, sizeof(err));
    if (st != INGOT_OK || v != want) {
        fprintf(stderr, "%s='%s': got %llu (status %d, %s), want %llu\n", f->name, s,
                (unsigned long long)v, st, err, (unsigned long long)want);
        exit(1);
    }
}

static void expect_bad(ingot_config_field_t *f, const char *s, const char *why)
{
    char value[64], err[512] = "", want[128];
    CHECK_STATUS(ingot_config_parse(f, s, value, err, sizeof(err)), INGOT_ERR_CONFIG);
    snprintf(want, sizeof(want), "INGOT_%s='%s'", f->name, s);
    CHECK_CONTAINS(err, want);
    CHECK_CONTAINS(err, why);
    CHECK_CONTAINS(err, "accepted:");
}

static void test_int(void)
{
    int64_t v;
    char err[256];
    CHECK_OK(ingot_config_parse(&f_int, "42", &v, err, sizeof(err)));
    CHECK(v == 42);
    CHECK_OK(ingot_config_parse(&f_int, "-5", &v, err, sizeof(err)));
    CHECK(v == -5);
    CHECK_OK(ingot_config_parse(&f_int, "1000", &v, err, sizeof(err)));
    expect_bad(&f_int, "1001", "out of range");
    expect_bad(&f_int, "-6", "out of range");
    expect_bad(&f_int, "abc", "not an integer");
    expect_bad(&f_int, "10abc", "not an integer");
    expect_bad(&f_int, " 10", "not an integer");
    expect_bad(&f_int, "1e3", "not an integer");
    expect_bad(&f_int, "", "empty value");
    expect_bad(&f_int, "99999999999999999999999", "overflows");
}

static void test_size(void)
{
    expect_u64(&f_size, "0", 0);
    expect_u64(&f_size, "512", 512);
    expect_u64(&f_size, "512B", 512);
    expect_u64(&f_size, "4k", 4096);
    expect_u64(&f_size, "4KiB", 4096);
    expect_u64(&f_size, "4KB", 4000);
    expect_u64(&f_size, "64MiB", 64ull << 20);
    expect_u64(&f_size, "64mib", 64ull << 20);
    expect_u64(&f_size, "1.5GiB", 3ull << 29);
    expect_u64(&f_size, "2T", 2ull << 40);
    expect_u64(&f_size, "8388607TiB", 8388607ull << 40);
    expect_bad(&f_size, "abc", "not a size");
    expect_bad(&f_size, "-1", "not a size");
    expect_bad(&f_size, "10abc", "not a size");
    expect_bad(&f_size, "1.", "not a size");
    expect_bad(&f_size, ".5M", "not a size");
    expect_bad(&f_size, "", "empty value");
    expect_bad(&f_size, "99999999999999999999", "overflows");
    expect_bad(&f_size, "16777216TiB", "overflows");
    ingot_config_field_t bounded = f_size;
    bounded.min = 4096;
    bounded.max = 1 << 20;
    expect_bad(&bounded, "1GiB", "out of range");
    expect_bad(&bounded, "1", "out of range");
}

static void test_duration(void)
{
    expect_u64(&f_dur, "0", 0);
    expect_u64(&f_dur, "250ms", 250000000ull);
    expect_u64(&f_dur, "2s", 2000000000ull);
    expect_u64(&f_dur, "1.5m", 90000000000ull);
    expect_u64(&f_dur, "1h", 3600000000000ull);
    expect_u64(&f_dur, "20us", 20000ull);
    expect_u64(&f_dur, "7ns", 7ull);
    expect_bad(&f_dur, "10", "not a duration"); /* a unit is required */
    expect_bad(&f_dur, "abc", "not a duration");
    expect_bad(&f_dur, "-1s", "not a duration");
    expect_bad(&f_dur, "10abc", "not a duration");
    expect_bad(&f_dur, "", "empty value");
    expect_bad(&f_dur, "99999999999999999999h", "overflows");
    expect_bad(&f_dur, "9999999999h", "overflows");
}

static void test_bool_enum(void)
{
    bool b;
    int e;
    char err[256];
    const char *yes[] = {"y", "YES", "on", "true", "1"}, *no[] = {"n", "No", "OFF", "false", "0"};
    for (size_t i = 0; i < 5; i++) {
        CHECK_OK(ingot_config_parse(&f_bool, yes[i], &b, err, sizeof(err)));
        CHECK(b == true);
        CHECK_OK(ingot_config_parse(&f_bool, no[i], &b, err, sizeof(err)));
        CHECK(b == false);
    }
    expect_bad(&f_bool, "abc", "not a boolean");
    expect_bad(&f_bool, "2", "not a boolean");
    expect_bad(&f_bool, "", "empty value");
    CHECK_OK(ingot_config_parse(&f_enum, "GREEN", &e, err, sizeof(err)));
    CHECK(e == 1);
    expect_bad(&f_enum, "blue", "unknown value");
    CHECK_CONTAINS(err, "");
    char syn[256];
    CHECK_CONTAINS(ingot_config_syntax(&f_enum, syn, sizeof(syn)), "red|green");
}

/* Every variable of the real table rejects each garbage value with a message naming it. */
static void test_every_variable_rejects_garbage(void)
{
    static const char *const garbage[] = {"abc", "-1", "10abc", "", "99999999999999999999999"};
    for (FIELDS(t, f)) {
        char full[128];
        snprintf(full, sizeof(full), "INGOT_%s", f->name);
        for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++) {
            if (f->type == INGOT_CONFIG_STRING && f->check == NULL && garbage[g][0] != '\0') {
                continue; /* a free-form string (a file path) accepts any non-empty text */
            }
            env_pair_t env[] = {{full, garbage[g]}, {NULL, NULL}};
            _Alignas(16) char values[1024];
            char err[512] = "", want[160];
            CHECK(t->size <= sizeof(values));
            ingot_status_t st = ingot_config_table_read(t, values, lookup_pairs, env, err,
                                                        sizeof(err));
            if (st != INGOT_ERR_CONFIG) {
                fprintf(stderr, "%s='%s' was accepted\n", full, garbage[g]);
                exit(1);
            }
            snprintf(want, sizeof(want), "%s='%s'", full, garbage[g]);
            CHECK_CONTAINS(err, want);
        }
    }
}

/* Defaults parse, and formatting is canonical: format(parse(format(x))) == format(x). */
static void test_defaults_and_round_trip(void)
{
    _Alignas(16) char cfg[1024], again[1024];
    char err[512];
    env_pair_t none[] = {{NULL, NULL}};
    for (size_t ti = 0; ti < ingot_config_table_count(); ti++) {
        const ingot_config_table_t *t = ingot_config_table_at(ti);
        CHECK(t->size <= sizeof(cfg));
        CHECK_OK(ingot_config_table_read(t, cfg, lookup_pairs, none, err, sizeof(err)));
        for (const ingot_config_field_t *f = t->fields; f < t->fields + t->count; f++) {
            char text[512], text2[512];
            ingot_config_format(f, cfg + f->offset, text, sizeof(text));
            memset(again, 0, sizeof(again));
            CHECK_OK(ingot_config_parse(f, text, again + f->offset, err, sizeof(err)));
            ingot_config_format(f, again + f->offset, text2, sizeof(text2));
            CHECK(strcmp(text, text2) == 0);
            if (f->type == INGOT_CONFIG_STRING) {
                free(*(char **)(again + f->offset));
            }
        }
        ingot_config_table_release(t, cfg);
    }
    /* 64MiB and 67108864 are the same value and format the same way (job-wide comparison). */
    uint64_t a, b;
    char ta[64], tb[64];
    CHECK_OK(ingot_config_parse(&f_size, "64MiB", &a, err, sizeof(err)));
    CHECK_OK(ingot_config_parse(&f_size, "67108864", &b, err, sizeof(err)));
    ingot_config_format(&f_size, &a, ta, sizeof(ta));
    ingot_config_format(&f_size, &b, tb, sizeof(tb));
    CHECK(strcmp(ta, tb) == 0 && strcmp(ta, "64MiB") == 0);
    /* Values from the environment override defaults. */
    env_pair_t env[] = {{"INGOT_TIMEOUT", "2s"}, {"INGOT_LOG_LEVEL", "debug"}, {NULL, NULL}};
    ingot_base_config_t base;
    CHECK_OK(ingot_config_table_read(&ingot_base_config_table, &base, lookup_pairs, env, err,
                                     sizeof(err)));
    CHECK(base.timeout_ns == 2000000000ull && base.log_level == INGOT_LOG_LEVEL_DEBUG);
    ingot_config_table_release(&ingot_base_config_table, &base);
}

/* Each module registers its own table, kept in layer order; enum variables parse to the enum
 * value their name stands for (names indexed by the enum, so no order is assumed). */
static void test_registry(void)
{
    CHECK(ingot_config_table_count() >= 3);
    CHECK(ingot_config_table_at(0) == &ingot_base_config_table);
    for (size_t i = 1; i < ingot_config_table_count(); i++) {
        CHECK(ingot_config_table_at(i - 1)->order <= ingot_config_table_at(i)->order);
    }
    CHECK(ingot_config_table_at(ingot_config_table_count()) == NULL);
    static const struct {
        const char *var, *value;
        int want;
    } enums[] = {
        {"PLACEMENT", "cpu", INGOT_TOPO_MODE_CPU},
        {"PLACEMENT", "GPU", INGOT_TOPO_MODE_GPU},
        {"GPU_SHARING", "share", INGOT_TOPO_SHARING_SHARE},
        {"BIND", "cpu+mem", INGOT_TOPO_BIND_CPUMEM},
        {"BIND", "none", INGOT_TOPO_BIND_NONE},
        {"VERIFY", "skip", INGOT_VERIFY_SKIP},
        {"VERIFY", "off", INGOT_VERIFY_OFF},
        {"PIN", "off", INGOT_MEM_PIN_OFF},
        {"LOG_LEVEL", "trace", INGOT_LOG_LEVEL_TRACE},
        {"PEER_PROTOCOL", "put", INGOT_PEER_PROTOCOL_PUT},
        {"PEER_PROTOCOL", "am", INGOT_PEER_PROTOCOL_AM},
        {"CACHE_FETCH", "device", INGOT_CACHE_FETCH_DEVICE},
        {"CACHE_FETCH", "host", INGOT_CACHE_FETCH_HOST},
    };
    for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
        const ingot_config_field_t *f = ingot_config_find(enums[i].var, NULL);
        int v = -1;
        char err[256];
        CHECK(f != NULL && f->type == INGOT_CONFIG_ENUM);
        CHECK_OK(ingot_config_parse(f, enums[i].value, &v, err, sizeof(err)));
        CHECK(v == enums[i].want);
    }
    /* the peer cache's enums refuse other values, naming the variable, value and choices */
    static const char *const bad[][2] = {{"PEER_PROTOCOL", "rdma"}, {"CACHE_FETCH", "gpu"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_bad((ingot_config_field_t *)ingot_config_find(bad[i][0], NULL), bad[i][1],
                   "unknown value");
    }
}

/* Typed variables are parsed once into their module's type and print back canonically; a renamed
 * variable is still read under its old name while the new one is unset. */
static void test_typed_and_renamed(void)
{
    char err[512], text[64];
    const ingot_config_field_t *order = ingot_config_find("ORDER", NULL);
    ingot_loader_order_t o;
    CHECK(order != NULL && order->type == INGOT_CONFIG_TYPED);
    CHECK_OK(ingot_config_parse(order, "window:3", &o, err, sizeof(err)));
    CHECK(o.mode == INGOT_ORDER_LOCALITY && o.window == 3);
    ingot_config_format(order, &o, text, sizeof(text));
    CHECK(strcmp(text, "window:3") == 0);
    expect_bad((ingot_config_field_t *)order, "window:0", "neither full nor window:N");
    const ingot_config_field_t *budget = ingot_config_find("CACHE_BYTES", NULL);
    ingot_cache_budget_t b;
    CHECK_OK(ingot_config_parse(budget, "65536MiB/node", &b, err, sizeof(err)));
    CHECK(b.per_node && b.bytes == 64ull << 30);
    ingot_config_format(budget, &b, text, sizeof(text));
    CHECK(strcmp(text, "64GiB/node") == 0);
    expect_bad((ingot_config_field_t *)budget, "64GiB/rank", "not a size, or a size per node");
    /* INGOT_CACHE_WINDOW is INGOT_PEER_WINDOW now: the old name still works, the new one wins */
    const ingot_config_table_t *t = NULL;
    CHECK(ingot_config_find("CACHE_WINDOW", &t) == ingot_config_find("PEER_WINDOW", NULL));
    CHECK(t == &ingot_transport_config_table);
    ingot_transport_config_t tc;
    env_pair_t old[] = {{"INGOT_CACHE_WINDOW", "registered"}, {NULL, NULL}};
    CHECK_OK(ingot_config_table_read(t, &tc, lookup_pairs, old, err, sizeof(err)));
    CHECK(tc.window == INGOT_PEER_WINDOW_REGISTERED);
    env_pair_t both[] = {
        {"INGOT_CACHE_WINDOW", "registered"}, {"INGOT_PEER_WINDOW", "ucx"}, {NULL, NULL}};
    CHECK_OK(ingot_config_table_read(t, &tc, lookup_pairs, both, err, sizeof(err)));
    CHECK(tc.window == INGOT_PEER_WINDOW_UCX);
    env_pair_t bad[] = {{"INGOT_CACHE_WINDOW", "gpu"}, {NULL, NULL}};
    CHECK_STATUS(ingot_config_table_read(t, &tc, lookup_pairs, bad, err, sizeof(err)),
                 INGOT_ERR_CONFIG);
    CHECK_CONTAINS(err, "INGOT_CACHE_WINDOW (now INGOT_PEER_WINDOW)='gpu': unknown value");
}

static void test_suggest(void)
{
    CHECK(ingot_config_suggest("INGOT_LOGLEVEL") != NULL);
    CHECK(strcmp(ingot_config_suggest("INGOT_LOGLEVEL"), "LOG_LEVEL") == 0);
    CHECK(strcmp(ingot_config_suggest("INGOT_TIMEOUTS"), "TIMEOUT") == 0);
    CHECK(ingot_config_suggest("INGOT_COMPLETELY_DIFFERENT_THING") == NULL);
    const ingot_config_table_t *t = NULL;
    CHECK(ingot_config_find("INGOT_TIMEOUT", &t) != NULL && ingot_config_find("TIMEOUT", NULL));
    CHECK(t == &ingot_base_config_table);
    CHECK(ingot_config_find("INGOT_PLACEMENT", &t) != NULL && t == &ingot_topo_config_table);
    CHECK(ingot_config_find("INGOT_VERIFY", &t) != NULL && t == &ingot_loader_config_table);
    CHECK(ingot_config_find("NOPE", NULL) == NULL);
}

/* ingot_config_print (what ingot-info -c shows) lists every variable with doc and scope. */
static void test_print(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/config.txt", test_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    CHECK_OK(ingot_config_print(f, INGOT_CONFIG_PRINT_DOC | INGOT_CONFIG_PRINT_HEADER));
    fclose(f);
    char *text = test_read_file(path, NULL);
    for (FIELDS(t, var)) {
        char line[160];
        snprintf(line, sizeof(line), "\nINGOT_%s=", var->name);
        CHECK_CONTAINS(text, line);
        CHECK_CONTAINS(text, var->doc);
        CHECK(var->doc[0] != '\0');
    }
    CHECK_CONTAINS(text, "# ---- base");
    CHECK_CONTAINS(text, "# ---- topology");
    CHECK_CONTAINS(text, "# ---- loader");
    CHECK_CONTAINS(text, "# scope:   job-wide");
    CHECK_CONTAINS(text, "# scope:   per-rank");
    char buf[64];
    CHECK_OK(ingot_config_get("INGOT_TIMEOUT", buf, sizeof(buf)));
    CHECK(strcmp(buf, "5m") == 0); /* 300s canonical */
    CHECK_STATUS(ingot_config_get("INGOT_NOPE", buf, sizeof(buf)), INGOT_ERR_NOT_FOUND);
    CHECK_STATUS(ingot_config_get("TIMEOUT", buf, 2), INGOT_ERR_NO_RESOURCE);
    free(text);
}

int main(void)
{
    CHECK(field_of_type(INGOT_CONFIG_DURATION) != NULL);
    test_int();
    test_size();
    test_duration();
    test_bool_enum();
    test_every_variable_rejects_garbage();
    test_defaults_and_round_trip();
    test_registry();
    test_typed_and_renamed();
    test_suggest();
    test_print();
    return 0;
}
