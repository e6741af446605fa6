/* Status codes: strings and the errno boundary. */
#include "base/status.h"
#include <errno.h>

/* Two lookup tables, aligned by hand. */
/* clang-format off */
const char *ingot_status_string(ingot_status_t status)
{
    switch (status) {
    case INGOT_OK:                return "Success";
    case INGOT_INPROGRESS:        return "Operation in progress";
    case INGOT_END_OF_DATA:       return "End of data";
    case INGOT_ERR_INVALID_PARAM: return "Invalid parameter";
    case INGOT_ERR_NO_MEMORY:     return "Out of memory";
    case INGOT_ERR_IO:            return "Input/output error";
    case INGOT_ERR_NOT_FOUND:     return "No such file, key, device or symbol";
    case INGOT_ERR_TIMED_OUT:     return "Timed out";
    case INGOT_ERR_CANCELED:      return "Operation aborted";
    case INGOT_ERR_UNSUPPORTED:   return "Not supported by this build or machine";
    case INGOT_ERR_NO_DEVICE:     return "Required device absent or unusable";
    case INGOT_ERR_CONFIG:        return "Invalid or inconsistent INGOT_* configuration";
    case INGOT_ERR_MPI:           return "MPI error";
    case INGOT_ERR_UCX:           return "UCX error";
    case INGOT_ERR_CUDA:          return "CUDA error";
    case INGOT_ERR_NCCL:          return "NCCL error";
    case INGOT_ERR_CORRUPT:       return "Data corruption detected";
    case INGOT_ERR_FORMAT:        return "Malformed input";
    case INGOT_ERR_BUSY:          return "Resource busy";
    case INGOT_ERR_NO_RESOURCE:   return "Resource exhausted";
    case INGOT_ERR_EXISTS:        return "Already exists";
    case INGOT_ERR_PERMISSION:    return "Permission denied";
    case INGOT_ERR_OUT_OF_RANGE:  return "Out of range";
    case INGOT_ERR_MISMATCH:      return "Mismatch";
    case INGOT_ERR_ZSTD:          return "zstd error";
    case INGOT_ERR_INTERNAL:      return "Internal error";
    case INGOT_ERR_LAST:          break;
    }
    return "Unknown ingot status";
}

ingot_status_t ingot_status_from_errno(int err)
{
    switch (err) {
    case 0:         return INGOT_OK;
    case ENOMEM:    return INGOT_ERR_NO_MEMORY;
    case ENOENT:
    case ENODEV:
    case ENXIO:     return INGOT_ERR_NOT_FOUND;
    case EACCES:
    case EPERM:     return INGOT_ERR_PERMISSION;
    case ETIMEDOUT: return INGOT_ERR_TIMED_OUT;
    case ECANCELED: return INGOT_ERR_CANCELED;
    case EINVAL:    return INGOT_ERR_INVALID_PARAM;
    case EEXIST:    return INGOT_ERR_EXISTS;
    case EBUSY:     return INGOT_ERR_BUSY;
    case EAGAIN:
    case EMFILE:
    case ENFILE:
    case ENOSPC:    return INGOT_ERR_NO_RESOURCE;
    case ERANGE:
    case EOVERFLOW: return INGOT_ERR_OUT_OF_RANGE;
    case ENOTSUP:   return INGOT_ERR_UNSUPPORTED;
    default:        return INGOT_ERR_IO;
    }
}
/* clang-format on */
