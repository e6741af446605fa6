/*
 * dlpack.h: the DLPack exchange structures (ABI of DLPack 1.x, https://dmlc.github.io/dlpack),
 * written from the specification: the legacy DLManagedTensor that PyTorch 1.13 consumes and the
 * versioned DLManagedTensorVersioned that consumers passing max_version >= (1, 0) receive.
 */
#ifndef PYINGOT_DLPACK_H
#define PYINGOT_DLPACK_H

#include <stdint.h>

#define PYINGOT_DLPACK_MAJOR 1
#define PYINGOT_DLPACK_MINOR 0

/* Capsule names of the protocol; a consumer renames the capsule to the "used_" name. */
#define PYINGOT_DLPACK_CAPSULE          "dltensor"
#define PYINGOT_DLPACK_CAPSULE_USED     "used_dltensor"
#define PYINGOT_DLPACK_CAPSULE_VER      "dltensor_versioned"
#define PYINGOT_DLPACK_CAPSULE_VER_USED "used_dltensor_versioned"

enum { PYINGOT_DL_CPU = 1, PYINGOT_DL_CUDA = 2 };                       /* DLDeviceType */
enum { PYINGOT_DL_INT = 0, PYINGOT_DL_UINT = 1, PYINGOT_DL_FLOAT = 2 }; /* DLDataTypeCode */

/** DLManagedTensorVersioned::flags: the consumer must not write the memory. */
#define PYINGOT_DL_FLAG_READ_ONLY (1ull << 0)

typedef struct {
    int32_t device_type; /* DLDeviceType (a C enum: int-sized) */
    int32_t device_id;
} pyingot_dl_device_t;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} pyingot_dl_dtype_t;

typedef struct {
    void *data;
    pyingot_dl_device_t device;
    int32_t ndim;
    pyingot_dl_dtype_t dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact row-major */
    uint64_t byte_offset;
} pyingot_dl_tensor_t;

typedef struct pyingot_dl_managed {
    pyingot_dl_tensor_t dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct pyingot_dl_managed *self);
} pyingot_dl_managed_t;

typedef struct {
    uint32_t major;
    uint32_t minor;
} pyingot_dl_version_t;

typedef struct pyingot_dl_managed_versioned {
    pyingot_dl_version_t version;
    void *manager_ctx;
    void (*deleter)(struct pyingot_dl_managed_versioned *self);
    uint64_t flags;
    pyingot_dl_tensor_t dl_tensor;
} pyingot_dl_managed_versioned_t;

#endif /* PYINGOT_DLPACK_H */
