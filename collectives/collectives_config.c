/* The collectives' INGOT_* variables; backend names are indexed by ingot_comm_backend_t. */
#include "collectives/collectives_config.h"
#include <stddef.h>
#include <stdint.h>

#define F(_field) offsetof(ingot_collectives_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

const char *const ingot_collectives_backend_names[] = {[INGOT_COMM_BACKEND_AUTO] = "auto",
                                                       [INGOT_COMM_BACKEND_MPI] = "mpi",
                                                       [INGOT_COMM_BACKEND_NCCL] = "nccl",
                                                       [INGOT_COMM_BACKEND_NCCL + 1] = NULL};

static const ingot_config_field_t collectives_fields[] = {
    {"COMM_BACKEND", "auto",
     "Backend of ingot_comm_create(): 'nccl' (one GPU per rank; an error where a rank has none "
     "or NCCL does not load), 'mpi' (host memory; device gradients staged through pinned host "
     "memory), 'auto' (nccl when every rank has a GPU of its own and NCCL loads, else mpi).",
     JOB, INGOT_CONFIG_ENUM, F(backend), 0, 0, ingot_collectives_backend_names, NULL, NULL, NULL},
    {"BUCKET_BYTES", "25MiB",
     "Cap of a gradient bucket (as DDP's bucket_cap_mb); a tensor larger than it gets a bucket of "
     "its own.",
     JOB, INGOT_CONFIG_SIZE, F(bucket_bytes), 4, INT64_MAX, NULL, NULL, NULL, NULL},
    {"FIRST_BUCKET_BYTES", "1MiB",
     "Cap of the first bucket (the last layers' gradients), small so that the first reduction "
     "starts early in backward.",
     JOB, INGOT_CONFIG_SIZE, F(first_bucket_bytes), 4, INT64_MAX, NULL, NULL, NULL, NULL},
    {"COMM_RING_MIN", "64KiB",
     "MPI backend: reductions of at least this many bytes run ingot's ring (reduce-scatter + "
     "all-gather over point-to-point messages); smaller ones MPI_Iallreduce.",
     JOB, INGOT_CONFIG_SIZE, F(ring_min), 0, INT64_MAX, NULL, NULL, NULL, NULL},
    {"COMM_SEGMENT", "1MiB",
     "MPI ring: bytes per message (the reduction of one overlaps the transfer of the next).", JOB,
     INGOT_CONFIG_SIZE, F(segment), 4096, 1LL << 30, NULL, NULL, NULL, NULL},
};

INGOT_CONFIG_MODULE(ingot_collectives, "collectives", INGOT_CONFIG_ORDER_COLLECTIVES,
                    collectives_fields, ingot_collectives_config_t, NULL)
