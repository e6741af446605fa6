/* A barrier that names who never came (arrival.h). */
#include "base/arrival.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "base/watchdog.h"
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ARRIVAL_TAG       0x1a77                  /* ingot's own communicators only */
#define ARRIVAL_POLL_NS   (1000ull * 1000)        /* between tests of the barrier */
#define ARRIVAL_SETTLE_NS (100ull * 1000 * 1000)  /* before rank 0 asks about anyone */
#define ARRIVAL_GRACE_NS  (2000ull * 1000 * 1000) /* past the bound, for rank 0 to speak first */

typedef struct arrival_state {
    const ingot_arrival_t *a;
    MPI_Comm comm;
    int rank, size;
    uint64_t start, deadline, next_check;
    MPI_Request barrier;
    MPI_Request *tokens; /* rank 0: one receive per rank; others: the send of theirs */
    int *arrived, *missing, *silent;
    int token;
} arrival_state_t;

static const char *arrival_host(const arrival_state_t *s, int rank)
{
    const char *h = s->a->host != NULL ? s->a->host(rank, s->a->arg) : NULL;
    return h != NULL ? h : "?";
}

/* The rank that names a missing one (@p how: "never arrived", or one that arrived and then
 * stalled the barrier): one line, then the job ends (the collective cannot). */
static _Noreturn void arrival_fail(const arrival_state_t *s, int who, const char *how,
                                   const char *why)
{
    int named = who;
    if (s->a->job_comm != NULL) { /* the rank as the job numbers it */
        MPI_Group mine, job;
        MPI_Comm_group(s->comm, &mine);
        MPI_Comm_group(*(const MPI_Comm *)s->a->job_comm, &job);
        if (MPI_Group_translate_ranks(mine, 1, &who, job, &named) != MPI_SUCCESS ||
            named == MPI_UNDEFINED) {
            named = who;
        }
        MPI_Group_free(&mine);
        MPI_Group_free(&job);
    }
    ingot_error("%s: rank %d (host %s) %s: %s; it stopped, died or hangs, and no rank can free "
                "what the ranks share without it: ending the job",
                s->a->what, named, arrival_host(s, who), how, why);
    ingot_job_end(71, 1);
}

static void arrival_silence(const arrival_state_t *s, char *why, size_t len)
{
    snprintf(why, len, "it did not answer for %.1f s (INGOT_PEER_TIMEOUT)",
             (double)s->a->silence_ns / 1e9);
}

/* Rank 0, every token in but the barrier not done: a rank stopped after it arrived, and the
 * barrier needs it. Ask every other rank; name one silent while the barrier still waits. */
static void arrival_check_stalled(arrival_state_t *s, uint64_t now)
{
    int n = 0;
    for (int r = 1; r < s->size; r++) {
        s->missing[n++] = r;
    }
    uint64_t until = now + s->a->silence_ns;
    s->a->alive(s->missing, n, until < s->deadline ? until : s->deadline, s->silent, s->a->arg);
    int done = 0;
    MPI_Test(&s->barrier, &done, MPI_STATUS_IGNORE); /* done: the handle is MPI_REQUEST_NULL */
    for (int i = 0; !done && i < n; i++) {
        if (s->silent[i]) {
            char why[160];
            arrival_silence(s, why, sizeof(why));
            arrival_fail(s, s->missing[i], "arrived, then stalled the ranks leaving together", why);
        }
    }
}

/* Rank 0: mark the ranks whose token came in; returns how many are still missing. */
static int arrival_count(arrival_state_t *s)
{
    int n = 0;
    for (int r = 1; r < s->size; r++) {
        int done = s->arrived[r];
        if (!done) {
            MPI_Test(&s->tokens[r], &done, MPI_STATUS_IGNORE);
            s->arrived[r] = done;
        }
        if (!done) {
            s->missing[n++] = r;
        }
    }
    return n;
}

/* Rank 0: ask the missing ranks whether they are alive; name one that is silent. */
static void arrival_check_missing(arrival_state_t *s, uint64_t now)
{
    int n = arrival_count(s);
    if (s->a->alive == NULL || now < s->next_check) {
        return;
    }
    if (n == 0) {
        arrival_check_stalled(s, now);
        s->next_check = ingot_time_ns() + s->a->silence_ns / 4;
        return;
    }
    uint64_t until = now + s->a->silence_ns;
    s->a->alive(s->missing, n, until < s->deadline ? until : s->deadline, s->silent, s->a->arg);
    (void)arrival_count(s); /* arrivals while it asked: those are here after all */
    for (int i = 0; i < n; i++) {
        if (s->silent[i] && !s->arrived[s->missing[i]]) {
            char why[160];
            arrival_silence(s, why, sizeof(why));
            arrival_fail(s, s->missing[i], "never arrived", why);
        }
    }
    s->next_check = ingot_time_ns() + s->a->silence_ns / 4;
}

/* Another rank: ask whether rank 0 is alive; name it when it is silent. */
static void arrival_check_root(arrival_state_t *s, uint64_t now)
{
    if (s->a->alive == NULL || now < s->next_check) {
        return;
    }
    int root = 0, silent = 0;
    s->a->alive(&root, 1, now + s->a->silence_ns, &silent, s->a->arg);
    int done = 0;
    MPI_Test(&s->barrier, &done, MPI_STATUS_IGNORE);
    if (silent && !done) {
        char why[160];
        arrival_silence(s, why, sizeof(why));
        arrival_fail(s, 0, "never arrived", why);
    }
    s->barrier = done ? MPI_REQUEST_NULL : s->barrier;
    s->next_check = ingot_time_ns() + s->a->silence_ns / 2;
}

/* Past the overall bound: rank 0 names the first missing rank; the others, a while later (so
 * rank 0's line comes first), say that the ranks never all arrived. */
static void arrival_timeout(arrival_state_t *s, uint64_t now)
{
    char why[160];
    if (s->rank == 0 && now >= s->deadline) {
        int n = arrival_count(s);
        if (n == 0) { /* every rank arrived: which one stalls the barrier is not known here */
            ingot_error("%s: every rank arrived, but the ranks could not leave together within "
                        "%.1f s (INGOT_TIMEOUT): one stopped, died or hangs since: ending the job",
                        s->a->what, (double)(now - s->start) / 1e9);
            ingot_job_end(71, 1);
        }
        snprintf(why, sizeof(why), "not there after %.1f s (INGOT_TIMEOUT; %d rank(s) missing)",
                 (double)(now - s->start) / 1e9, n);
        arrival_fail(s, s->missing[0], "never arrived", why);
    }
    if (s->rank != 0 && now >= s->deadline + ARRIVAL_GRACE_NS) {
        ingot_error("%s: the ranks did not all arrive within %.1f s (INGOT_TIMEOUT), and rank 0 "
                    "did not end the wait: ending the job",
                    s->a->what, (double)(now - s->start) / 1e9);
        ingot_job_end(71, 1);
    }
}

static ingot_status_t arrival_start(arrival_state_t *s)
{
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    s->start = ingot_time_ns();
    s->deadline = s->start + s->a->timeout_ns;
    s->next_check = s->start + (s->rank == 0 ? ARRIVAL_SETTLE_NS : s->a->silence_ns / 2);
    int n = s->rank == 0 ? s->size : 1;
    s->tokens = ingot_calloc((size_t)n, sizeof(MPI_Request), "arrival requests");
    s->arrived = ingot_calloc((size_t)n, sizeof(int), "arrival flags");
    s->missing = ingot_calloc((size_t)n, sizeof(int), "arrival missing ranks");
    s->silent = ingot_calloc((size_t)n, sizeof(int), "arrival silent ranks");
    if (s->tokens == NULL || s->arrived == NULL || s->missing == NULL || s->silent == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (int r = 1; s->rank == 0 && r < s->size; r++) {
        MPI_Irecv(&s->arrived[0], 0, MPI_INT, r, ARRIVAL_TAG, s->comm, &s->tokens[r]);
    }
    if (s->rank != 0) {
        MPI_Isend(&s->token, 0, MPI_INT, 0, ARRIVAL_TAG, s->comm, &s->tokens[0]);
    }
    s->arrived[0] = 1;
    return MPI_Ibarrier(s->comm, &s->barrier) == MPI_SUCCESS ? INGOT_OK : INGOT_ERR_MPI;
}

static void arrival_free(arrival_state_t *s)
{
    free(s->tokens);
    free(s->arrived);
    free(s->missing);
    free(s->silent);
}

ingot_status_t ingot_mpi_arrive(const ingot_arrival_t *a)
{
    arrival_state_t s = {.a = a, .comm = *(const MPI_Comm *)a->comm};
    ingot_status_t st = arrival_start(&s);
    if (st != INGOT_OK) { /* no memory for the bookkeeping: a plain barrier, the watchdog's */
        arrival_free(&s);
        ingot_watchdog_arm(a->what, "MPI_Barrier");
        return ingot_watchdog_disarm(MPI_Barrier(s.comm)) == MPI_SUCCESS ? INGOT_OK : INGOT_ERR_MPI;
    }
    if (ingot_fault_check(INGOT_FAULT_ARRIVAL) != 0) { /* tests: stopped once it has arrived */
        if (s.rank != 0) {
            MPI_Wait(&s.tokens[0], MPI_STATUS_IGNORE); /* its token is out */
        }
        raise(SIGSTOP);
    }
    for (;;) {
        int done = 0;
        MPI_Test(&s.barrier, &done, MPI_STATUS_IGNORE);
        if (done) {
            break;
        }
        uint64_t now = ingot_time_ns();
        if (s.rank == 0) {
            arrival_check_missing(&s, now);
        } else {
            arrival_check_root(&s, now);
        }
        arrival_timeout(&s, ingot_time_ns());
        struct timespec pause = {0, (long)ARRIVAL_POLL_NS};
        nanosleep(&pause, NULL);
    }
    /* Every rank arrived, so every token was sent and received. */
    int n = s.rank == 0 ? s.size : 1;
    for (int r = s.rank == 0 ? 1 : 0; r < n; r++) {
        MPI_Wait(&s.tokens[r], MPI_STATUS_IGNORE);
    }
    arrival_free(&s);
    return INGOT_OK;
}
