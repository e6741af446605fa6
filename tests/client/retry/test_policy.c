/*
 * The pieces with no I/O: S3 XML answers, backoff with full jitter, the retry budget, the
 * per-bucket AIMD window and rate cap, when a GET is hedged and the hedges' tokens, the latency
 * histogram's percentiles, and the INGOT_S3_* table's strict parsing.
 */
#include "test.h"
#include "client/hedge.h"
#include "client/objstore_config.h"
#include "client/retry.h"
#include "client/stats.h"
#include "client/xml.h"
#include "base/time.h"

static void test_xml(void)
{
    const char *body = "<?xml version=\"1.0\"?><Error><Code>AuthorizationHeaderMalformed</Code>"
                       "<Message>the region &apos;us-east-1&apos; is wrong; expecting "
                       "&quot;eu-west-1&quot; &amp; more &#65;&#x42;</Message>"
                       "<Region>eu-west-1</Region></Error>";
    const char *end = body + strlen(body);
    char out[128], tiny[5];
    CHECK(ingot_objstore_xml_text(body, end, "Code", out, sizeof(out)) == 0);
    CHECK(strcmp(out, "AuthorizationHeaderMalformed") == 0);
    CHECK(ingot_objstore_xml_text(body, end, "Message", out, sizeof(out)) == 0);
    CHECK(strcmp(out, "the region 'us-east-1' is wrong; expecting \"eu-west-1\" & more AB") == 0);
    CHECK(ingot_objstore_xml_text(body, end, "Region", out, sizeof(out)) == 0);
    CHECK(strcmp(out, "eu-west-1") == 0);
    CHECK(ingot_objstore_xml_text(body, end, "Endpoint", out, sizeof(out)) == -1 && !out[0]);
    CHECK(ingot_objstore_xml_text(body, end, "Region", tiny, sizeof(tiny)) == 0);
    CHECK(strcmp(tiny, "eu-w") == 0);
    /* bounded by end: an element cut off by the bound is absent */
    CHECK(ingot_objstore_xml_text(body, body + 40, "Code", out, sizeof(out)) == -1);
    /* repeated elements: find walks them */
    const char *list = "<L><C><K>a</K></C><C><K>b</K></C></L>", *p = list, *after = NULL;
    size_t n = 0;
    int count = 0;
    while (ingot_objstore_xml_find(p, list + strlen(list), "C", &n, &after) != NULL) {
        count++;
        p = after;
    }
    CHECK(count == 2);
}

static void test_backoff(void)
{
    uint64_t rng = 42, base = 50 * INGOT_NSEC_PER_MSEC, max = 2 * INGOT_NSEC_PER_SEC;
    for (unsigned n = 0; n < 12; n++) {
        uint64_t ceil = base << n < max ? base << n : max, hi = 0, sum = 0;
        for (int i = 0; i < 2000; i++) {
            uint64_t d = ingot_objstore_backoff_ns(base, max, n, &rng);
            CHECK(d <= ceil);
            if (d > hi) hi = d;
            sum += d;
        }
        /* full jitter: spread over [0, ceil], mean near ceil / 2 */
        CHECK(hi > ceil * 9 / 10);
        CHECK(sum / 2000 > ceil * 4 / 10 && sum / 2000 < ceil * 6 / 10);
    }
    CHECK(ingot_objstore_backoff_ns(base, max, 200, &rng) <= max); /* no overflow */
}

static void test_budget(void)
{
    ingot_objstore_budget_t b;
    ingot_objstore_budget_init(&b, 12);
    CHECK(ingot_objstore_budget_take(&b, INGOT_OBJSTORE_RETRY_COST));
    CHECK(ingot_objstore_budget_take(&b, INGOT_OBJSTORE_RETRY_COST));
    CHECK(!ingot_objstore_budget_take(&b, INGOT_OBJSTORE_RETRY_COST)); /* 2 left */
    for (int i = 0; i < 3; i++) ingot_objstore_budget_refund(&b);
    CHECK(ingot_objstore_budget_take(&b, INGOT_OBJSTORE_RETRY_COST));
    for (int i = 0; i < 100; i++) ingot_objstore_budget_refund(&b);
    CHECK(b.tokens == 12); /* capped */
    ingot_objstore_budget_init(&b, 0);
    CHECK(!ingot_objstore_budget_take(&b, 0)); /* 0: never retry */
}

static void test_aimd(void)
{
    ingot_objstore_throttle_t t;
    uint64_t wake = UINT64_MAX, now = 1000;
    int held = 0;
    ingot_objstore_throttle_init(&t, 8, 0);
    for (int i = 0; i < 8; i++) {
        CHECK(ingot_objstore_throttle_may_start(&t, now, &wake, &held));
        ingot_objstore_throttle_started(&t);
    }
    CHECK(!ingot_objstore_throttle_may_start(&t, now, &wake, &held) && !held);
    /* eight SlowDowns of transfers started before the cut: one halving */
    CHECK(ingot_objstore_throttle_slowdown(&t, now, now + 10));
    for (int i = 1; i < 8; i++) CHECK(!ingot_objstore_throttle_slowdown(&t, now, now + 10));
    CHECK(t.window == 4);
    for (int i = 0; i < 8; i++) ingot_objstore_throttle_finished(&t, 0);
    /* a transfer started after the cut halves again; the floor is 1 */
    for (int i = 0; i < 5; i++) ingot_objstore_throttle_slowdown(&t, now + 20 + i, now + 21 + i);
    CHECK(t.window == 1);
    /* additive increase: about one per window of successes, back to the cap */
    int successes = 0;
    while (t.window < 8 && successes < 1000) {
        ingot_objstore_throttle_started(&t);
        ingot_objstore_throttle_finished(&t, 1);
        successes++;
    }
    CHECK(t.window == 8 && successes > 20 && successes < 40);
}

static void test_rate_cap(void)
{
    ingot_objstore_throttle_t t;
    uint64_t now = 5 * INGOT_NSEC_PER_SEC, wake = UINT64_MAX;
    int held = 0, started = 0;
    ingot_objstore_throttle_init(&t, 1000, 100); /* 100 requests/s, burst 10 */
    /* one simulated second in 1 ms steps, starting whatever may start */
    for (int ms = 0; ms < 1000; ms++, now += INGOT_NSEC_PER_MSEC) {
        while (ingot_objstore_throttle_may_start(&t, now, &wake, &held)) {
            ingot_objstore_throttle_started(&t);
            ingot_objstore_throttle_finished(&t, 1);
            started++;
        }
    }
    CHECK(started >= 95 && started <= 111);
    CHECK(held && wake != UINT64_MAX);
}

static void test_histogram(void)
{
    ingot_objstore_counters_t c;
    ingot_objstore_stats_t s;
    memset(&c, 0, sizeof(c));
    for (unsigned us = 0; us < 100000; us++) {
        CHECK(ingot_objstore_latency_bucket(us) < INGOT_OBJSTORE_HIST_BUCKETS);
        uint64_t mid = ingot_objstore_latency_bucket_mid_us(ingot_objstore_latency_bucket(us));
        CHECK(mid + mid / 8 + 1 >= us && mid <= us + us / 8 + 1); /* 12.5% resolution */
    }
    /* 98 fast (1 ms) and 2 slow (100 ms): p50 1 ms, p99 100 ms */
    for (int i = 0; i < 98; i++) ingot_objstore_latency_add(&c, INGOT_NSEC_PER_MSEC);
    for (int i = 0; i < 2; i++) ingot_objstore_latency_add(&c, 100 * INGOT_NSEC_PER_MSEC);
    ingot_objstore_counters_snapshot(&c, &s);
    CHECK(s.latency_count == 100);
    CHECK(s.latency_p50_ns > 900000 && s.latency_p50_ns < 1100000);
    CHECK(s.latency_p99_ns > 90000000 && s.latency_p99_ns < 110000000);
    ingot_objstore_latency_add(&c, UINT64_MAX); /* clamps into the last bucket */
}

static const char *lookup(const char *name, void *arg)
{
    const char *const *kv = arg;
    for (; kv[0] != NULL; kv += 2) {
        if (strcmp(kv[0], name) == 0) return kv[1];
    }
    return NULL;
}

static void test_config(void)
{
    ingot_objstore_config_t cfg;
    char err[512];
    const char *good[] = {"INGOT_S3_PART_SIZE",
                          "4MiB",
                          "INGOT_S3_CONNECTIONS",
                          "32",
                          "INGOT_S3_BACKOFF_BASE",
                          "10ms",
                          NULL};
    CHECK_OK(ingot_config_table_read(&ingot_objstore_config_table, &cfg, lookup, good, err,
                                     sizeof(err)));
    CHECK(cfg.part_size == 4u << 20 && cfg.connections == 32);
    CHECK(cfg.backoff_base_ns == 10 * INGOT_NSEC_PER_MSEC);
    CHECK(cfg.max_retries == 0 && cfg.stall_timeout_ns == 5 * INGOT_NSEC_PER_SEC); /* defaults */
    ingot_config_table_release(&ingot_objstore_config_table, &cfg);

    const char *bad[][2] = {{"INGOT_S3_CONNECTIONS", "0"},   {"INGOT_S3_CONNECTIONS", "8x"},
                            {"INGOT_S3_PART_SIZE", "1KiB"},  {"INGOT_S3_STALL_TIMEOUT", "10ms"},
                            {"INGOT_S3_RETRY_BUDGET", "-1"}, {"INGOT_S3_RATE_LIMIT", "lots"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *kv[] = {bad[i][0], bad[i][1], NULL};
        CHECK_STATUS(ingot_config_table_read(&ingot_objstore_config_table, &cfg, lookup, kv, err,
                                             sizeof(err)),
                     INGOT_ERR_CONFIG);
        CHECK_CONTAINS(err, bad[i][0]);
        CHECK_CONTAINS(err, bad[i][1]);
    }
    /* the table is registered: the registry finds its variables */
    const ingot_config_table_t *table = NULL;
    CHECK(ingot_config_find("INGOT_S3_PART_SIZE", &table) != NULL);
    CHECK(table == &ingot_objstore_config_table);
}

/* Hedge after factor x p95 of the size class's recent durations, within the floor and ceiling;
 * the ceiling until a class has seen enough; never with factor 0; tokens: 10 to start, one per
 * ten successes, none taken when there is none. */
static void test_hedge(void)
{
    const uint64_t ms = 1000000;
    ingot_objstore_hedge_t h;
    ingot_objstore_hedge_init(&h, 3, 100 * ms, 2000 * ms);
    CHECK(ingot_objstore_hedge_after_ns(&h, 8 << 20) == 2000 * ms); /* nothing seen: ceiling */
    for (int i = 0; i < 20; i++) { /* 8 MiB GETs of 50 ms, two of 90 ms in twenty (10%) */
        ingot_objstore_hedge_record(&h, 8 << 20, (i == 7 || i == 13 ? 90 : 50) * ms);
    }
    CHECK(ingot_objstore_hedge_after_ns(&h, 8 << 20) == 270 * ms);          /* 3 x p95 */
    CHECK(ingot_objstore_hedge_after_ns(&h, (8 << 20) + 4096) == 270 * ms); /* same class */
    /* another class, not seen yet: its bytes at the client's median rate (8 MiB in 50 ms), x3;
     * at least the floor */
    uint64_t cold = ingot_objstore_hedge_after_ns(&h, 16 << 20);
    CHECK(cold + 1000 >= 300 * ms && cold <= 300 * ms + 1000);
    CHECK(ingot_objstore_hedge_after_ns(&h, 1 << 20) == 100 * ms);
    for (int i = 0; i < 32; i++) { /* fast small GETs: the floor */
        ingot_objstore_hedge_record(&h, 110 << 10, 2 * ms);
    }
    CHECK(ingot_objstore_hedge_after_ns(&h, 110 << 10) == 100 * ms);
    for (int i = 0; i < 32; i++) { /* a slow store: the ceiling */
        ingot_objstore_hedge_record(&h, 8 << 20, 1500 * ms);
    }
    CHECK(ingot_objstore_hedge_after_ns(&h, 8 << 20) == 2000 * ms);
    int taken = 0;
    while (ingot_objstore_hedge_take(&h)) {
        taken++;
    }
    CHECK(taken == INGOT_OBJSTORE_HEDGE_TOKENS);
    for (int i = 0; i < 9; i++) {
        ingot_objstore_hedge_earn(&h);
    }
    CHECK(!ingot_objstore_hedge_take(&h)); /* nine successes: not yet */
    ingot_objstore_hedge_earn(&h);
    CHECK(ingot_objstore_hedge_take(&h) && !ingot_objstore_hedge_take(&h));
    ingot_objstore_hedge_init(&h, 0, 100 * ms, 2000 * ms);
    CHECK(ingot_objstore_hedge_after_ns(&h, 8 << 20) == UINT64_MAX); /* off */
}

int main(void)
{
    test_xml();
    test_backoff();
    test_budget();
    test_aimd();
    test_rate_cap();
    test_hedge();
    test_histogram();
    test_config();
    printf("objstore policy: ok\n");
    return 0;
}
