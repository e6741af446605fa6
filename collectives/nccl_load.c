/* NCCL loaded at run time (see nccl.h). */
#include "collectives/nccl_load.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int ingot_nccl_probe_version(char *why, size_t whylen)
{
    void *lib = dlopen(INGOT_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(why, whylen, "%s", dlerror());
        return 0;
    }
    int (*get_version)(int *) = (int (*)(int *))dlsym(lib, "ncclGetVersion");
    int version = 0;
    if (get_version == NULL || get_version(&version) != 0) {
        snprintf(why, whylen, "%s has no working ncclGetVersion", INGOT_NCCL_LIBRARY);
        version = 0;
    }
    dlclose(lib);
    return version;
}

#if INGOT_BUILD_NCCL
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static ingot_nccl_api_t nccl_api;
static ingot_status_t nccl_status = INGOT_ERR_NOT_FOUND;
static char nccl_why[256];

#    define NCCL_SYM(_lib, _field, _name) (*(void **)&nccl_api._field = dlsym(_lib, _name)) != NULL

static void nccl_load_once(void)
{
    void *lib = dlopen(INGOT_NCCL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(nccl_why, sizeof(nccl_why), "%s", dlerror());
        return;
    }
    ncclResult_t (*get_version)(int *) = NULL;
    *(void **)&get_version = dlsym(lib, "ncclGetVersion");
    if (get_version == NULL || get_version(&nccl_api.version) != ncclSuccess) {
        snprintf(nccl_why, sizeof(nccl_why), "%s has no working ncclGetVersion",
                 INGOT_NCCL_LIBRARY);
        dlclose(lib);
        return;
    }
    const char *missing = NULL;
    if (!(NCCL_SYM(lib, get_unique_id, "ncclGetUniqueId"))) {
        missing = "ncclGetUniqueId";
    } else if (!(NCCL_SYM(lib, comm_init_rank_config, "ncclCommInitRankConfig"))) {
        missing = "ncclCommInitRankConfig";
    } else if (!(NCCL_SYM(lib, comm_get_async_error, "ncclCommGetAsyncError"))) {
        missing = "ncclCommGetAsyncError";
    } else if (!(NCCL_SYM(lib, comm_abort, "ncclCommAbort"))) {
        missing = "ncclCommAbort";
    } else if (!(NCCL_SYM(lib, comm_finalize, "ncclCommFinalize"))) {
        missing = "ncclCommFinalize";
    } else if (!(NCCL_SYM(lib, comm_destroy, "ncclCommDestroy"))) {
        missing = "ncclCommDestroy";
    } else if (!(NCCL_SYM(lib, all_reduce, "ncclAllReduce"))) {
        missing = "ncclAllReduce";
    } else if (!(NCCL_SYM(lib, get_error_string, "ncclGetErrorString"))) {
        missing = "ncclGetErrorString";
    } else if (!(NCCL_SYM(lib, get_last_error, "ncclGetLastError"))) {
        missing = "ncclGetLastError";
    }
    if (missing != NULL) {
        snprintf(nccl_why, sizeof(nccl_why), "%s (version %d) lacks %s (NCCL 2.14 or later needed)",
                 INGOT_NCCL_LIBRARY, nccl_api.version, missing);
        nccl_status = INGOT_ERR_UNSUPPORTED;
        dlclose(lib);
        return;
    }
    nccl_status = INGOT_OK; /* the library stays loaded for the life of the process */
}
#endif

ingot_status_t ingot_nccl_load(const ingot_nccl_api_t **api_p, char *why, size_t whylen)
{
#if INGOT_BUILD_NCCL
    pthread_once(&nccl_once, nccl_load_once);
    if (nccl_status != INGOT_OK) {
        snprintf(why, whylen, "%s", nccl_why);
        return nccl_status;
    }
    *api_p = &nccl_api;
    return INGOT_OK;
#else
    (void)api_p;
    snprintf(why, whylen, "this ingot was built without NCCL (no nccl.h at build time)");
    return INGOT_ERR_UNSUPPORTED;
#endif
}
