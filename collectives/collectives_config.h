/*
 * The collectives' INGOT_* variables (collectives_config.c): backend, bucket caps, the MPI ring's
 * threshold and message size (the pacing of ingest while reductions run is the loader's:
 * INGOT_INGEST_PACING).
 */
#ifndef INGOT_COLLECTIVES_CONFIG_H
#define INGOT_COLLECTIVES_CONFIG_H

#include <ingot/collectives.h>
#include "base/config.h"

typedef struct ingot_collectives_config {
    ingot_comm_backend_t backend;
    uint64_t bucket_bytes;
    uint64_t first_bucket_bytes;
    uint64_t ring_min; /* MPI: reductions from this size run the ring */
    uint64_t segment;  /* MPI ring message size */
} ingot_collectives_config_t;

_Static_assert(sizeof(ingot_comm_backend_t) == sizeof(int), "enum variables are stored as int");

extern ingot_config_table_t ingot_collectives_config_table;

/** Names of ingot_comm_backend_t, indexed by it, NULL-terminated (INGOT_COMM_BACKEND's). */
extern const char *const ingot_collectives_backend_names[];

/** The collectives' process-wide values. */
ingot_status_t ingot_collectives_config(const ingot_collectives_config_t **cfg_p);

#endif
