/**
 * @file status.h
 * @brief Status codes returned by every fallible ingot call.
 *
 * Zero is success, positive values are non-error conditions, negative values are errors. The
 * function that detects an error logs it once, with context (file, sample, rank, errno text);
 * callers only propagate the code. Outputs of a call are written only when it returns INGOT_OK.
 */
#ifndef INGOT_STATUS_H
#define INGOT_STATUS_H

#include <ingot/def.h>

INGOT_BEGIN_DECLS

/** Result of an ingot call. Values are stable across releases; new codes are only appended. */
typedef enum ingot_status {
    INGOT_OK          = 0, /**< Success. */
    INGOT_INPROGRESS  = 1, /**< Operation started and not yet complete. */
    INGOT_END_OF_DATA = 2, /**< A loader delivered its last batch. */

    INGOT_ERR_INVALID_PARAM = -1,  /**< An argument is invalid (NULL, out of range, unset). */
    INGOT_ERR_NO_MEMORY     = -2,  /**< Memory could not be allocated. */
    INGOT_ERR_IO            = -3,  /**< An I/O call (open, pread, write, fsync) failed. */
    INGOT_ERR_NOT_FOUND     = -4,  /**< A file, key, device or symbol does not exist. */
    INGOT_ERR_TIMED_OUT     = -5,  /**< A wait reached its deadline. */
    INGOT_ERR_CANCELED      = -6,  /**< A wait or operation was aborted. */
    INGOT_ERR_UNSUPPORTED   = -7,  /**< Not supported by this build or this machine. */
    INGOT_ERR_NO_DEVICE     = -8,  /**< A required device (GPU, NIC) is absent or unusable. */
    INGOT_ERR_CONFIG        = -9,  /**< An INGOT_* variable is invalid or differs across ranks. */
    INGOT_ERR_MPI           = -10, /**< An MPI call failed. */
    INGOT_ERR_UCX           = -11, /**< A UCX call failed. */
    INGOT_ERR_CUDA          = -12, /**< A CUDA runtime call failed. */
    INGOT_ERR_NCCL          = -13, /**< An NCCL call failed. */
    INGOT_ERR_CORRUPT       = -14, /**< Data failed an integrity check (hash, checksum, frame). */
    INGOT_ERR_FORMAT        = -15, /**< Input is malformed (tar header, manifest, cursor). */
    INGOT_ERR_BUSY          = -16, /**< The object is in use (e.g. batches still held). */
    INGOT_ERR_NO_RESOURCE   = -17, /**< A bounded resource is exhausted (queue full, budget). */
    INGOT_ERR_EXISTS        = -18, /**< The object already exists. */
    INGOT_ERR_PERMISSION    = -19, /**< Permission denied by the OS or a resource limit. */
    INGOT_ERR_OUT_OF_RANGE  = -20, /**< An offset, length or index lies outside its bounds. */
    INGOT_ERR_MISMATCH      = -21, /**< Two things that must agree do not (digest, seed, size). */
    INGOT_ERR_ZSTD          = -22, /**< zstd reported an error. */
    INGOT_ERR_INTERNAL      = -23, /**< A bug in ingot; please report it. */

    INGOT_ERR_LAST = -24 /**< One past the last error code; not a status. */
} ingot_status_t;

/**
 * @brief Human-readable description of a status code.
 * @return A static string, never NULL; unknown codes give "Unknown ingot status".
 * Thread-safe.
 */
INGOT_API const char *ingot_status_string(ingot_status_t status);

/**
 * @brief The calling thread's last error message: the text ingot logged (whatever the log
 *        level) when it last detected an error on this thread, naming what was wrong (file,
 *        offset, key, rank, variable, value).
 * @return A thread-local string, "" when no error occurred; valid until this thread's next
 *         failing ingot call. An error detected on one of ingot's own threads (a loader reader
 *         or worker) is logged there and reaches the caller as a status; its message is in the
 *         log, not here.
 * Thread-safe.
 */
INGOT_API const char *ingot_last_error(void);

INGOT_END_DECLS

#endif /* INGOT_STATUS_H */
