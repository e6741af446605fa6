/*
 * The keeper's claims. Before a rank reads a missed piece whole from below to write it through,
 * it asks the piece's keeper (in its process, or over the transport): the keeper claims the
 * piece for that fill (FILLING) when it is absent and the policy would admit it (room in the
 * budget, counting the claims in flight, or a victim needed later than the piece). So only one
 * rank reads a piece whole, and nobody reads whole a piece the policy would refuse: such a miss
 * reads only its own bytes from below. With INGOT_DISK_CACHE_FILL=parts the claim is for an
 * assembly (assemble.c): every miss on the piece reads its own bytes and hands them over, until
 * the piece is whole. A claim not written within INGOT_TIMEOUT (its rank died,
 * its push was lost) lapses and the piece can be claimed again.
 */
#include "source/disk/disk_impl.h"
#include "base/time.h"
#include <fcntl.h>
#include <unistd.h>

static uint32_t claim_now_s(const disk_keeper_t *k)
{
    return (uint32_t)((ingot_time_ns() - k->t0) / INGOT_NSEC_PER_SEC);
}

static uint64_t claim_size(const ingot_disk_t *d, uint64_t p)
{
    return INGOT_DISK_HEADER_BYTES + ingot_disk_piece_len(d, p);
}

/* Whether this job's piece @p p has an entry in the folder. */
static int claim_on_disk(const ingot_disk_t *d, uint64_t p)
{
    char name[INGOT_DISK_NAME_MAX];
    ingot_disk_key_t key = ingot_disk_key(d, p);
    ingot_disk_entry_name(&key, 0, name, sizeof(name));
    return faccessat(d->folder.fd, name, F_OK, 0) == 0;
}

int ingot_disk_keeper_has_room(const ingot_disk_t *d)
{
    const disk_keeper_t *k = d->keeper;
    uint64_t used = atomic_load(&k->usage) + atomic_load(&k->claimed);
    return ingot_disk_room_fits(d, used + INGOT_DISK_HEADER_BYTES + d->piece_bytes);
}

void ingot_disk_keeper_claim_locked(ingot_disk_t *d, uint64_t p)
{
    disk_keeper_t *k = d->keeper;
    k->claimed_at[p] = claim_now_s(k);
    atomic_fetch_add(&k->claimed, claim_size(d, p));
}

/* The state of @p p as a claim sees it: a lapsed claim is absent (its bytes still counted, and
 * taken over by the next claim), a resident piece whose entry is gone (found bad by a reader,
 * deleted by hand) is absent too. Lock held. */
static int claim_state(ingot_disk_t *d, uint64_t p, int *lapsed_p)
{
    disk_keeper_t *k = d->keeper;
    int state = ingot_disk_policy_state(k->pol, p);
    uint64_t lapse_s = d->p.timeout_ns / INGOT_NSEC_PER_SEC + 1;
    *lapsed_p = state == INGOT_DISK_FILLING && claim_now_s(k) - k->claimed_at[p] > lapse_s;
    if (*lapsed_p || (state == INGOT_DISK_RESIDENT && !claim_on_disk(d, p))) {
        return INGOT_DISK_ABSENT;
    }
    return state;
}

/* The keeper's lock: waited for (@p how DISK_WAIT), or taken only if free (DISK_TRY: the
 * transport's progress thread, which must not wait behind an eviction or an epoch's trace);
 * 0 when busy, counted. */
static int claim_lock(ingot_disk_t *d, int how)
{
    disk_keeper_t *k = d->keeper;
    if (how == DISK_WAIT) {
        pthread_mutex_lock(&k->lock);
        return 1;
    }
    if (pthread_mutex_trylock(&k->lock) == 0) {
        return 1;
    }
    atomic_fetch_add(&d->keeper_busy, 1);
    return 0;
}

int ingot_disk_keeper_want(ingot_disk_t *d, uint64_t p, uint64_t len, int how)
{
    disk_keeper_t *k = d->keeper;
    int lapsed = 0, want = DISK_WANT_THERE;
    if (!claim_lock(d, how)) {
        return DISK_WANT_NO; /* the asker reads only its own bytes from below */
    }
    if (how == DISK_WAIT) {
        (void)ingot_disk_policy_advance(k->pol, atomic_load(&k->now));
    }
    if (ingot_disk_asm_has(d, p)) {
        want = DISK_WANT_PART; /* its claim stands as long as it is assembled */
    } else if (claim_state(d, p, &lapsed) == INGOT_DISK_ABSENT) {
        /* none that could never fit (fills off, a budget in effect below the piece), nor one
         * that reads below more than it saves: the bytes of the piece the miss does not need,
         * none when it is assembled from the misses' own bytes */
        uint64_t plen = ingot_disk_piece_len(d, p), extra = plen - (len < plen ? len : plen);
        int parts = d->parts,
            room = ingot_disk_keeper_has_room(d); /* fills off: room_fits says no */
        /* an assembled piece serves once this epoch's uses of it are over: its victims must be
         * needed after that */
        uint64_t from = parts ? ingot_disk_policy_need_later(k->pol, p)
                              : ingot_disk_policy_need(k->pol, p);
        /* an assembly claimed after the epoch's first misses of the piece (their bytes were not
         * handed over) is whole only in the next epoch, holding its room meanwhile: only with
         * room to spare and a next epoch */
        int whole_soon = !parts || ingot_disk_policy_fresh(k->pol, p) ||
                         (room && from != INGOT_DISK_NEVER);
        want = whole_soon && ingot_disk_room_fits(d, claim_size(d, p)) &&
                       ingot_disk_policy_pays(k->pol, p, room, from, parts ? 0 : extra)
                   ? (parts ? DISK_WANT_PART : DISK_WANT_FILL)
                   : DISK_WANT_NO;
        if (want == DISK_WANT_PART && !ingot_disk_asm_open(d, p, !room, from)) {
            want = DISK_WANT_NO;
        }
        if (want != DISK_WANT_NO) {
            if (lapsed) {
                atomic_fetch_sub(&k->claimed, claim_size(d, p)); /* the old claim's, taken over */
            }
            ingot_disk_policy_set(k->pol, p, INGOT_DISK_FILLING);
            ingot_disk_keeper_claim_locked(d, p);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return want;
}

int ingot_disk_keeper_claimed(ingot_disk_t *d, uint64_t p)
{
    disk_keeper_t *k = d->keeper;
    if (!claim_lock(d, DISK_TRY)) {
        return -1;
    }
    int claimed = ingot_disk_policy_state(k->pol, p) == INGOT_DISK_FILLING;
    pthread_mutex_unlock(&k->lock);
    return claimed;
}

int ingot_disk_keeper_settle_how(ingot_disk_t *d, uint64_t p, int state, int how)
{
    disk_keeper_t *k = d->keeper;
    if (!claim_lock(d, how)) {
        return 0;
    }
    if (ingot_disk_policy_state(k->pol, p) == INGOT_DISK_FILLING) {
        atomic_fetch_sub(&k->claimed, claim_size(d, p));
    }
    ingot_disk_policy_set(k->pol, p, state);
    pthread_mutex_unlock(&k->lock);
    return 1;
}

void ingot_disk_keeper_settle(ingot_disk_t *d, uint64_t p, int state)
{
    (void)ingot_disk_keeper_settle_how(d, p, state, DISK_WAIT);
}
