/*
 * Run-time CUDA detection. A CUDA build must still run its host paths on a node without a GPU or
 * driver: these calls answer "is a device usable here" without leaving a sticky CUDA error for a
 * framework (PyTorch) sharing the process.
 */
#ifndef INGOT_BASE_CUDA_H
#define INGOT_BASE_CUDA_H

#include <stddef.h>

typedef struct ingot_cuda_probe {
    int device_count;    /* usable devices (0 when none, no driver, or not built with CUDA) */
    int driver_version;  /* e.g. 13000, 0 without a driver */
    int runtime_version; /* runtime linked into ingot, 0 without CUDA */
    char reason[160];    /* why no device is usable */
} ingot_cuda_probe_t;

/** Probe once per process (thread-safe) and return the cached result. */
const ingot_cuda_probe_t *ingot_cuda_probe(void);

/** 1 when at least one CUDA device is usable by this process. */
int ingot_cuda_usable(void);

#endif
