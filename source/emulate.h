/*
 * The emulated remote store: a decorator over another byte source that models one link to a
 * remote store (INGOT_STORAGE_EMULATE="bw=200MiB/s,lat=5ms"), so cold storage can be tested on
 * one machine. Requests are serialised on the link at the configured bandwidth (a token bucket
 * with no burst) and each becomes ready a fixed latency after its last byte; a ready request is
 * then passed to the inner source. Concurrent requests hide latency as against a real store.
 */
#ifndef INGOT_SOURCE_EMULATE_H
#define INGOT_SOURCE_EMULATE_H

#include "source/source.h"
#include "base/config.h"

/** Bandwidth cap (bytes/s, 0 = none) and latency per request. */
typedef struct ingot_source_emulation {
    uint64_t bandwidth;
    uint64_t latency_ns;
} ingot_source_emulation_t;

/**
 * Wrap @p inner (owned from now on, destroyed with the decorator, also on failure).
 * @param max_inflight requests that may wait on the link at once (the state for them is
 *                     allocated here); a submit beyond it is refused with INGOT_ERR_NO_RESOURCE.
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_source_emulate_create(const ingot_source_emulation_t *emu,
                                           ingot_source_t *inner, uint32_t max_inflight,
                                           ingot_source_t **src_p);

/** Whether @p emu emulates anything (a bandwidth cap or a latency). */
int ingot_source_emulation_active(const ingot_source_emulation_t *emu);

/**
 * Parse "bw=200MiB/s,lat=5ms" (either part optional; "none" = no emulation). Returns 0, or -1
 * with the reason in @p err. Thread-safe.
 */
int ingot_source_emulation_parse(const char *spec, ingot_source_emulation_t *emu, char *err,
                                 size_t errlen);

/** INGOT_STORAGE_EMULATE's codec (storage.c's table): parsed once into an
 *  ingot_source_emulation_t. */
extern const ingot_config_codec_t ingot_source_emulation_codec;

#endif
