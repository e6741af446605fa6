/*
 * ingot-info: version, build options, what was found at run time (CUDA devices, NCCL, UCX
 * memory types), the effective INGOT_* configuration with docs, and UCX's transports.
 * Models: ucx_info -c -f, fi_info -e.
 */
#include <ingot/ingot.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

/* Under mpirun or srun: the path the peer cache takes from each rank to every other, each
 * rank's lines in rank order. Alone (a singleton job) there is no peer to report. */
static int print_peer_paths(void)
{
    ingot_ctx_h ctx = NULL;
    ingot_status_t st = ingot_init(NULL, &ctx);
    if (st != INGOT_OK) {
        return 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static char paths[64 << 10];
    if (size > 1) {
        st = ingot_peer_paths(ctx, paths, sizeof(paths));
        for (int r = 0; r < size; r++) {
            if (r == rank) {
                printf("# peer cache paths from rank %d\n%s", rank, paths);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        printf("# peer cache paths: one rank, no peer (launch with mpirun or srun to see them)\n");
    }
    ingot_finalize(ctx);
    return st == INGOT_OK ? 0 : 1;
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [options]\n"
            "  (none)  version, build options and run-time detection\n"
            "  -c      effective configuration, with each variable's doc, syntax and scope\n"
            "  -C      effective configuration, values only\n"
            "  -d      default configuration, values only\n"
            "  -t      UCX transports, devices and memory types; under mpirun or srun also\n"
            "          the peer cache's data path from each rank to every other\n"
            "  -s URL  the object store this process reads URL (s3://BUCKET/..., https://...)\n"
            "          with: endpoint, region and credential source (never a secret); the\n"
            "          summary shows it for s3:// when an AWS_* variable is set\n"
            "  -a      everything\n"
            "  -h      this help\n",
            prog);
}

static const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

/* The backend ingot_comm_create() chooses for this launch (auto unless INGOT_COMM_BACKEND says
 * otherwise), found by creating one: alone this process is a singleton job; under mpirun or
 * srun every rank takes part and rank 0 prints. */
static int print_allreduce(void)
{
    ingot_ctx_h ctx = NULL;
    ingot_comm_h comm = NULL;
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
    ingot_status_t st = ingot_init(NULL, &ctx);
    if (st == INGOT_OK && (st = ingot_comm_create(ctx, NULL, &comm)) == INGOT_OK) {
        st = ingot_comm_stats(comm, &s);
    }
    int rank = 0;
    if (ctx != NULL) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (rank == 0 && st == INGOT_OK) {
        printf("#   gradient all-reduce:        %s on %d rank(s)\n",
               ingot_comm_backend_name(s.backend), s.size);
        printf("#     why:                      %s\n", s.reason);
        printf("#     progress:                 %s%s\n",
               s.progress_thread ? "a thread of its own; its CPUs: " : "inside ingot calls only",
               s.progress_thread ? s.progress_cpuset : "");
    } else if (rank == 0) {
        printf("#   gradient all-reduce:        unavailable: %s (%s)\n", ingot_status_string(st),
               ingot_last_error());
    }
    ingot_comm_destroy(comm);
    ingot_finalize(ctx);
    return st == INGOT_OK ? 0 : 1;
}

/* The object store a process reads @p url (NULL: s3:// in general) from, as whom. */
static int print_store(const char *url)
{
    ingot_store_identity_t id;
    printf("#\n# object store%s%s\n", url ? " for " : " (s3://)", url ? url : "");
    if (ingot_store_identity(url, &id) != INGOT_OK) {
        printf("#   unusable:                   %s\n", ingot_last_error());
        return 1;
    }
    printf("#   endpoint:                   %s\n", id.endpoint);
    printf("#   region:                     %s%s%s%s\n", id.region[0] ? id.region : "-",
           id.region[0] ? " (" : "", id.region_source, id.region[0] ? ")" : "");
    printf("#   credentials:                %s\n", id.credential_source);
    return 0;
}

/* Whether the summary shows the object store: some AWS_* setting says one is meant. */
static int store_configured(void)
{
    static const char *const vars[] = {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                                       "AWS_ACCESS_KEY_ID", "AWS_PROFILE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        if (getenv(vars[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

static int print_summary(void)
{
    ingot_runtime_info_t info = {
        .field_mask = INGOT_RUNTIME_INFO_FIELD_CUDA | INGOT_RUNTIME_INFO_FIELD_NCCL |
                      INGOT_RUNTIME_INFO_FIELD_UCX | INGOT_RUNTIME_INFO_FIELD_LIBS};
    ingot_status_t st = ingot_runtime_info_query(&info);
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpi_version, &len);
    for (int i = 0; i < len; i++) {
        if (mpi_version[i] == '\n' || mpi_version[i] == ',') {
            mpi_version[i] = '\0';
            break;
        }
    }
    printf("# ingot %s (library %s)\n", INGOT_VERSION_STRING, ingot_version_string());
    printf("#\n# build options\n");
    printf("#   CUDA paths compiled:        %s\n", yes_no(info.cuda_compiled));
    printf("#   NCCL backend compiled:      %s\n", yes_no(info.nccl_compiled));
    printf("#   MPI:                        %s\n", mpi_version);
    printf("#   hwloc:                      %s\n", info.version_hwloc);
    printf("#   zstd:                       %s\n", info.version_zstd);
    printf("#   zlib:                       %s\n", info.version_zlib);
    printf("#\n# found at run time\n");
    if (info.cuda_device_count > 0) {
        printf("#   CUDA devices:               %d (driver %d, runtime %d)\n",
               info.cuda_device_count, info.cuda_driver_version, info.cuda_runtime_version);
    } else {
        printf("#   CUDA devices:               0 (%s)\n", info.cuda_reason);
    }
    if (info.nccl_version > 0) {
        printf("#   NCCL:                       %d\n", info.nccl_version);
    } else {
        printf("#   NCCL:                       not loadable (%s)\n", info.nccl_reason);
    }
    printf("#   UCX:                        %u.%u.%u\n", info.ucx_major, info.ucx_minor,
           info.ucx_release);
    printf("#   UCX memory types:           %s\n", info.ucx_memory_types);
    printf("#   UCX CUDA memory:            %s\n",
           info.ucx_cuda_transports[0] ? info.ucx_cuda_transports : "none");
    printf("#\n# data path this node will take\n");
    printf("#   batches delivered to:       %s\n",
           info.cuda_device_count > 0 ? "GPU memory (pinned host staging + cudaMemcpyAsync)"
                                      : "host memory (no usable GPU)");
    printf("#   peer cache fetches into:    host memory, the batch slot or a staging buffer "
           "(%s)\n",
           info.ucx_cuda_memory ? "into GPU memory is not built: measured slower than a host "
                                  "fetch plus the copy, docs/cache.md"
                                : "this UCX has no CUDA memory type");
    int rc = (st == INGOT_OK && print_allreduce() == 0) ? 0 : 1;
    return store_configured() ? rc | print_store(NULL) : rc;
}

int main(int argc, char **argv)
{
    int summary = 1, config = 0, transports = 0, opt;
    const char *store = NULL;
    unsigned flags = INGOT_CONFIG_PRINT_HEADER;
    while ((opt = getopt(argc, argv, "cCdtas:h")) != -1) {
        switch (opt) {
        case 'c':
            config = 1;
            summary = 0;
            flags |= INGOT_CONFIG_PRINT_DOC;
            break;
        case 'C':
            config = 1;
            summary = 0;
            break;
        case 'd':
            config = 1;
            summary = 0;
            flags |= INGOT_CONFIG_PRINT_DEFAULT;
            break;
        case 't':
            transports = 1;
            summary = 0;
            break;
        case 's':
            store = optarg;
            summary = 0;
            break;
        case 'a':
            summary = config = transports = 1;
            flags |= INGOT_CONFIG_PRINT_DOC;
            break;
        case 'h': usage(stdout, argv[0]); return 0;
        default: usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr, argv[0]);
        return 2;
    }
    if (ingot_config_check() != INGOT_OK) {
        return 1; /* the parser named the variable */
    }
    int rc = 0;
    if (summary) {
        rc |= print_summary();
    }
    if (config && ingot_config_print(stdout, flags) != INGOT_OK) {
        rc = 1; /* the invalid variable was reported on stderr */
    }
    if (store != NULL) {
        rc |= print_store(store);
    }
    if (transports) {
        printf("# UCX transports\n");
        rc |= (ingot_ucx_transports_print(stdout) != INGOT_OK);
        rc |= print_peer_paths();
    }
    return rc;
}
