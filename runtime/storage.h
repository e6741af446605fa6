/*
 * Storage backends behind one small interface: the loader opens each shard once, then issues
 * positioned reads of coalesced byte ranges. Backends: POSIX files (pread on cached
 * descriptors, optional O_DIRECT, fadvise hints) and an emulated remote store that wraps POSIX
 * with a token-bucket bandwidth cap and a per-request latency (INGOT_STORAGE_EMULATE), so cold
 * storage can be tested on one machine. An HTTP/S3 backend would implement the same three calls.
 * Thread safety: open/close from one thread; read from any number of threads concurrently.
 */
#ifndef INGOT_RUNTIME_STORAGE_H
#define INGOT_RUNTIME_STORAGE_H

#include <ingot/status.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/uio.h>

typedef struct ingot_storage ingot_storage_t;

/** Emulated remote store: bandwidth cap (bytes/s, 0 = none) and latency per request. */
typedef struct ingot_storage_emulation {
    uint64_t bandwidth; /* bytes per second */
    uint64_t latency_ns;
} ingot_storage_emulation_t;

typedef struct ingot_storage_params {
    int                       direct;   /* O_DIRECT reads (caller's buffers must be aligned) */
    const ingot_storage_emulation_t *emulate; /* NULL: plain POSIX */
} ingot_storage_params_t;

/** Alignment O_DIRECT needs of offsets, lengths and buffers. */
#define INGOT_STORAGE_DIRECT_ALIGN 4096

ingot_status_t ingot_storage_create(const ingot_storage_params_t *params, uint32_t file_count,
                                    ingot_storage_t **storage_p);
/**
 * Open file @p id at @p path and check that it still has @p expect_size bytes (a shard that
 * shrank or grew after the manifest was built is INGOT_ERR_MISMATCH naming the file and sizes).
 */
ingot_status_t ingot_storage_open(ingot_storage_t *storage, uint32_t id, const char *path,
                                  uint64_t expect_size);
/** Read exactly @p len bytes at @p offset of file @p id (short reads are retried; EOF before
 *  len is INGOT_ERR_IO naming the file, offset and length). */
ingot_status_t ingot_storage_read(ingot_storage_t *storage, uint32_t id, void *buf, size_t len,
                                  uint64_t offset);
/**
 * Scatter read: exactly the sum of @p iov lengths at @p offset (preadv, retried on short reads,
 * split beyond IOV_MAX). @p iov is consumed: its entries are advanced as bytes arrive, so the
 * caller rebuilds it for the next read (no copy, no allocation). Not for O_DIRECT storage.
 */
ingot_status_t ingot_storage_readv(ingot_storage_t *storage, uint32_t id, struct iovec *iov,
                                   int iovcnt, uint64_t offset);
/**
 * O_DIRECT-safe read of [offset, offset + len): reads the enclosing aligned window into @p buf
 * (INGOT_STORAGE_DIRECT_ALIGN aligned, at least len + 2 * align bytes) and sets *shift_p to where
 * the requested bytes start in @p buf. On plain storage it reads exactly and *shift_p = 0.
 */
ingot_status_t ingot_storage_read_window(ingot_storage_t *storage, uint32_t id, void *buf,
                                         size_t len, uint64_t offset, size_t *shift_p);
/** Whether file @p id is open. */
int            ingot_storage_is_open(const ingot_storage_t *storage, uint32_t id);
const char    *ingot_storage_name(const ingot_storage_t *storage);
void           ingot_storage_destroy(ingot_storage_t *storage);

/** Parse "bw=200MiB/s,lat=5ms" (either part optional; "none" = no emulation). Returns 0, or -1
 *  with the reason in @p err. */
int ingot_storage_emulation_parse(const char *spec, ingot_storage_emulation_t *emu, char *err,
                                  size_t errlen);

#endif
