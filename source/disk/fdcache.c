/*
 * The disk tier's open entries, one table per process: a hit on an entry opened lately costs no
 * open, fstat and header read, only the reads of its blocks (as the POSIX source keeps its
 * shards open). DISK_FD_SLOTS slots, direct-mapped by piece; a slot a reader holds is never
 * closed under it (a reference count), and an entry opened while its slot is held is read and
 * closed alone. A kept entry whose name is gone (evicted, found bad by another process, deleted
 * behind the cache's back) is let go at its next use and its piece opened anew: a miss, or the
 * entry written since.
 */
#include "source/disk/disk_impl.h"
#include "base/mem.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

ingot_status_t ingot_disk_fds_init(ingot_disk_t *d)
{
    d->fds = ingot_calloc(DISK_FD_SLOTS, sizeof(*d->fds), "disk open entries");
    if (d->fds == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < DISK_FD_SLOTS; i++) {
        d->fds[i].piece = UINT64_MAX;
        d->fds[i].o.fd = -1;
    }
    pthread_mutex_init(&d->fds_lock, NULL);
    return INGOT_OK;
}

void ingot_disk_fds_fini(ingot_disk_t *d)
{
    for (uint32_t i = 0; d->fds != NULL && i < DISK_FD_SLOTS; i++) {
        ingot_disk_entry_close(&d->fds[i].o);
    }
    if (d->fds != NULL) {
        pthread_mutex_destroy(&d->fds_lock);
    }
    free(d->fds);
    d->fds = NULL;
}

/* Whether the kept entry still has its name: one removed by any process (the keeper's eviction,
 * another rank's bad entry, ingot-cache) is opened anew, so its blocks are freed at once and a
 * deletion behind the cache's back is seen as a miss within the job too. An fstat, no I/O. */
static int fds_linked(const ingot_disk_open_t *o)
{
    struct stat sb;
    return fstat(o->fd, &sb) == 0 && sb.st_nlink > 0;
}

int ingot_disk_fd_linked(const disk_fd_ref_t *ref)
{
    return fds_linked(ref->o);
}

/* Keep @p o (just opened) in @p p's slot when it is free; 1 when kept. Lock held. */
static int fds_keep(disk_fd_slot_t *s, uint64_t p, const ingot_disk_open_t *o)
{
    if (s->refs != 0) {
        return 0; /* a reader holds another entry there */
    }
    ingot_disk_entry_close(&s->o);
    memcpy(&s->o, o, sizeof(*o));
    s->piece = p;
    s->stale = 0;
    s->refs = 1;
    return 1;
}

/* Let go of one more slot, round the table, whose entry was removed: an evicted piece this process
 * does not read again frees its blocks within DISK_FD_SLOTS reads, not at the end of the job. */
static void fds_sweep(ingot_disk_t *d)
{
    disk_fd_slot_t *s = &d->fds[d->fds_sweep++ % DISK_FD_SLOTS]; /* lock held */
    if (s->piece != UINT64_MAX && s->refs == 0 && !fds_linked(&s->o)) {
        ingot_disk_entry_close(&s->o);
        s->piece = UINT64_MAX;
    }
}

ingot_status_t ingot_disk_fd_get(ingot_disk_t *d, uint64_t p, disk_fd_ref_t *ref,
                                 ingot_disk_bad_t *bad)
{
    static _Thread_local ingot_disk_open_t scratch;
    disk_fd_slot_t *s = &d->fds[p % DISK_FD_SLOTS];
    pthread_mutex_lock(&d->fds_lock);
    fds_sweep(d);
    if (s->piece == p && !s->stale) {
        s->refs++;
        pthread_mutex_unlock(&d->fds_lock);
        *ref = (disk_fd_ref_t){&s->o, s};
        if (fds_linked(&s->o)) {
            return INGOT_OK;
        }
        ingot_disk_fd_drop(d, p); /* removed since (evicted, found bad, cleaned by a tool) */
        ingot_disk_fd_put(d, ref);
    } else {
        pthread_mutex_unlock(&d->fds_lock);
    }
    ingot_disk_key_t key = ingot_disk_key(d, p);
    ingot_status_t st = ingot_disk_entry_open(d->folder.fd, &key, ingot_disk_piece_len(d, p),
                                              d->p.direct_io, &scratch, bad);
    if (st != INGOT_OK) {
        return st;
    }
    if (scratch.layout != 0 && scratch.layout != ingot_disk_layout(d, p)) {
        /* assembled for a manifest that lays the piece out otherwise: its zeros between that
         * manifest's records may be bytes of this one's, so not for this job (a miss; checked
         * once, here: a kept entry passed it) */
        ingot_disk_entry_close(&scratch);
        return INGOT_ERR_NOT_FOUND;
    }
    pthread_mutex_lock(&d->fds_lock);
    int kept = fds_keep(s, p, &scratch);
    pthread_mutex_unlock(&d->fds_lock);
    *ref = kept ? (disk_fd_ref_t){&s->o, s} : (disk_fd_ref_t){&scratch, NULL};
    return INGOT_OK;
}

void ingot_disk_fd_put(ingot_disk_t *d, disk_fd_ref_t *ref)
{
    disk_fd_slot_t *s = ref->slot;
    if (s == NULL) { /* read alone */
        ingot_disk_entry_close((ingot_disk_open_t *)ref->o);
        return;
    }
    pthread_mutex_lock(&d->fds_lock);
    if (--s->refs == 0 && s->stale) {
        ingot_disk_entry_close(&s->o);
        s->piece = UINT64_MAX;
    }
    pthread_mutex_unlock(&d->fds_lock);
}

void ingot_disk_fd_drop(ingot_disk_t *d, uint64_t p)
{
    if (d->fds == NULL) {
        return; /* the tier never served */
    }
    disk_fd_slot_t *s = &d->fds[p % DISK_FD_SLOTS];
    pthread_mutex_lock(&d->fds_lock);
    if (s->piece == p) {
        s->stale = 1;
        if (s->refs == 0) {
            ingot_disk_entry_close(&s->o);
            s->piece = UINT64_MAX;
        }
    }
    pthread_mutex_unlock(&d->fds_lock);
}
