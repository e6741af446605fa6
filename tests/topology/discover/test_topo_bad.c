/*
 * Bad input to the topology module: each gives its status AND a logged message that names what
 * was expected and what was found. Odd topologies (no NUMA information, no PCI bridges, GPUs
 * without locality) must plan, not crash.
 */
#include "topology/topo.h"
#include "base/config.h"
#include "base/fault.h"
#include "base/mem.h"
#include "common/test.h"
#include "common/topo_lsan.h"
#include <sys/stat.h>

#define FIXTURES INGOT_TEST_SRCDIR "/tests/fixtures/topology"
#define DGX      FIXTURES "/dgx-h100.xml"
#define CPU2S    FIXTURES "/cpu-2s.xml"
#define ODD      FIXTURES "/odd.xml"

static char log_path[4096];
static size_t log_seen;

/* What was logged since the previous call. */
static char *log_new(void)
{
    size_t len;
    char *all = test_read_file(log_path, &len);
    char *out = strdup(all + (log_seen <= len ? log_seen : len));
    log_seen = len;
    free(all);
    return out;
}

#define CHECK_LOGGED(...) \
    do { \
        char *logged_ = log_new(); \
        const char *wanted_[] = {__VA_ARGS__}; \
        for (size_t i_ = 0; i_ < sizeof(wanted_) / sizeof(wanted_[0]); i_++) \
            CHECK_CONTAINS(logged_, wanted_[i_]); \
        free(logged_); \
    } while (0)

static char *write_tmp(const char *name, const char *text, size_t len)
{
    static char path[8192];
    snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(text, 1, len, f) == len);
    fclose(f);
    return path;
}

static void check_bad_files(void)
{
    ingot_topo_t *topo = NULL;
    CHECK_STATUS(ingot_topo_load("/nonexistent/node.xml", &topo), INGOT_ERR_NOT_FOUND);
    CHECK_LOGGED("'/nonexistent/node.xml'", "cannot open", "No such file",
                 "expected a readable hwloc XML export");
    CHECK_STATUS(ingot_topo_load(test_tmpdir(), &topo), INGOT_ERR_IO);
    CHECK_LOGGED("cannot read", "Is a directory");

    const char *text = "hello, not xml\n";
    CHECK_STATUS(ingot_topo_load(write_tmp("text.xml", text, strlen(text)), &topo),
                 INGOT_ERR_FORMAT);
    CHECK_LOGGED("not an hwloc XML export", "expected a <topology> element", "found none");
    CHECK_STATUS(ingot_topo_load(write_tmp("empty.xml", "", 0), &topo), INGOT_ERR_FORMAT);
    CHECK_LOGGED("found an empty file");

    size_t len;
    char *dgx = test_read_file(DGX, &len);
    CHECK_STATUS(ingot_topo_load(write_tmp("cut.xml", dgx, len / 2), &topo), INGOT_ERR_FORMAT);
    CHECK_LOGGED("cut.xml", "invalid hwloc XML", "expected an export of hwloc");
    free(dgx);
    const char *alien = "<topology version=\"9.0\"><object type=\"Spaceship\"/></topology>";
    CHECK_STATUS(ingot_topo_load(write_tmp("alien.xml", alien, strlen(alien)), &topo),
                 INGOT_ERR_FORMAT);
    CHECK_LOGGED("alien.xml", "invalid hwloc XML");
    CHECK(topo == NULL);
}

static void check_bad_policies(void)
{
    ingot_topo_t *dgx, *cpu;
    ingot_plan_t *plan = NULL;
    CHECK_OK(ingot_topo_load(DGX, &dgx));
    CHECK_OK(ingot_topo_load(CPU2S, &cpu));

    ingot_plan_params_t gpu_mode = {.field_mask = INGOT_PLAN_PARAM_FIELD_MODE,
                                    .mode = INGOT_TOPO_MODE_GPU};
    CHECK_STATUS(ingot_topo_plan(cpu, 2, &gpu_mode, &plan), INGOT_ERR_NO_DEVICE);
    CHECK_LOGGED("INGOT_PLACEMENT=gpu", "expected at least one usable GPU", "found 0 GPUs",
                 "cpu-2s.xml");

    ingot_plan_params_t strict = {.field_mask = INGOT_PLAN_PARAM_FIELD_SHARING,
                                  .sharing = INGOT_TOPO_SHARING_ERROR};
    CHECK_STATUS(ingot_topo_plan(dgx, 9, &strict, &plan), INGOT_ERR_NO_DEVICE);
    CHECK_LOGGED("9 local ranks but 8 usable GPUs", "expected at most one rank per GPU",
                 "INGOT_GPU_SHARING=share");
    ingot_plan_params_t two = {.field_mask = INGOT_PLAN_PARAM_FIELD_GPU_MASK |
                                             INGOT_PLAN_PARAM_FIELD_SHARING,
                               .gpu_mask = 0x3,
                               .sharing = INGOT_TOPO_SHARING_ERROR};
    CHECK_STATUS(ingot_topo_plan(dgx, 3, &two, &plan), INGOT_ERR_NO_DEVICE);
    CHECK_LOGGED("3 local ranks but 2 usable GPUs", "8 on the node");

    hwloc_bitmap_t far = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(far, 1000, 1001);
    ingot_plan_params_t narrow = {.field_mask = INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET,
                                  .allowed_cpuset = far};
    CHECK_STATUS(ingot_topo_plan(dgx, 1, &narrow, &plan), INGOT_ERR_NO_RESOURCE);
    CHECK_LOGGED("allowed cpuset '1000-1001' holds none of the CPUs", "expected a subset of 0-223");
    hwloc_bitmap_free(far);

    CHECK_STATUS(ingot_topo_plan(dgx, 0, NULL, &plan), INGOT_ERR_INVALID_PARAM);
    CHECK_LOGGED("0 local ranks", "expected a topology and at least 1 rank");
    CHECK(plan == NULL);

    CHECK_OK(ingot_topo_plan(dgx, 1, NULL, &plan));
    CHECK_STATUS(ingot_topo_bind(dgx, plan, 0, INGOT_TOPO_BIND_CPU), INGOT_ERR_UNSUPPORTED);
    CHECK_LOGGED("INGOT_BIND", "dgx-h100.xml, not from this machine", "expected live discovery");
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(cpu);
    ingot_topo_destroy(dgx);
}

static void check_gpu_lists(void)
{
    ingot_topo_t *dgx;
    uint64_t mask = 0;
    CHECK_OK(ingot_topo_load(DGX, &dgx));
    CHECK_STATUS(ingot_topo_gpu_list_parse(dgx, "0,9", "INGOT_GPUS", &mask), INGOT_ERR_NOT_FOUND);
    CHECK_LOGGED("INGOT_GPUS='0,9'", "'9' names no GPU",
                 "expected an index, a PCI bus id or a GPU UUID", "found 8 GPUs: 0=0000:18:00.0");
    CHECK_STATUS(ingot_topo_gpu_list_parse(dgx, "1b:00.0", "INGOT_GPUS", &mask),
                 INGOT_ERR_NOT_FOUND);
    CHECK_LOGGED("'1b:00.0' names no GPU");
    CHECK_STATUS(ingot_topo_gpu_mask(dgx, "all", "MIG-5a1c", &mask), INGOT_ERR_UNSUPPORTED);
    CHECK_LOGGED("CUDA_VISIBLE_DEVICES='MIG-5a1c'", "MIG instance", "expected whole GPUs");
    CHECK(mask == 0);

    CHECK_OK(ingot_topo_gpu_list_parse(dgx, " 0000:18:00.0 , 5d:00.0,GPU-000000a7", "x", &mask));
    CHECK(mask == ((1u << 0) | (1u << 3) | (1u << 7)));
    CHECK_OK(ingot_topo_gpu_mask(dgx, "all", "1,-1,2", &mask));
    CHECK(mask == (1u << 1));
    CHECK_OK(ingot_topo_gpu_mask(dgx, "4,5,6", "6,2,4", &mask));
    CHECK(mask == ((1u << 4) | (1u << 6)));
    CHECK_OK(ingot_topo_gpu_mask(dgx, "all", "", &mask));
    CHECK(mask == 0);
    CHECK(ingot_topo_gpu_list_position(dgx, "6,2,4", 4) == 2);
    CHECK(ingot_topo_gpu_list_position(dgx, "6,2,4", 5) == -1);
    CHECK(ingot_topo_gpu_list_position(dgx, NULL, 5) == 5);

    /* The launcher hides the planned GPU: reported, not fatal. */
    ingot_plan_t *plan;
    char msg[INGOT_TOPOLOGY_STR_MAX];
    bool conflict = false;
    CHECK_OK(ingot_topo_plan(dgx, 2, NULL, &plan));
    CHECK_OK(ingot_topo_launcher_check(dgx, plan, 1, "0,1", msg, sizeof(msg), &conflict));
    CHECK(conflict);
    CHECK_CONTAINS(msg, "CUDA_VISIBLE_DEVICES='0,1' hides the planned GPU 4 (0000:9a:00.0)");
    CHECK_OK(ingot_topo_launcher_check(dgx, plan, 0, "0,1", msg, sizeof(msg), &conflict));
    CHECK(!conflict && msg[0] == '\0');
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(dgx);
}

/* An hwloc 1.x export without NUMA, package, core or bridge information, a GPU straight under the
 * machine; and GPUs without locality (odd.xml): plans, no crash. */
static void check_odd_topologies(void)
{
    static const char v1[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology>\n"
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
        "online_cpuset=\"0x0000000f\" allowed_cpuset=\"0x0000000f\">\n"
        "<object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\"/>\n"
        "<object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\"/>\n"
        "<object type=\"PU\" os_index=\"2\" cpuset=\"0x00000004\" complete_cpuset=\"0x00000004\"/>\n"
        "<object type=\"PU\" os_index=\"3\" cpuset=\"0x00000008\" complete_cpuset=\"0x00000008\"/>\n"
        "<object type=\"PCIDev\" pci_busid=\"0000:65:00.0\" pci_type=\"0302 [10de:2330] [10de:16c1] a1\"/>\n"
        "</object>\n</topology>\n";
    const char *shapes[] = {write_tmp("v1-nonuma.xml", v1, strlen(v1)), ODD};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        ingot_topo_t *topo;
        ingot_plan_t *plan;
        ingot_placement_t pl;
        ingot_plan_params_t share = {.field_mask = INGOT_PLAN_PARAM_FIELD_SHARING,
                                     .sharing = INGOT_TOPO_SHARING_SHARE};
        CHECK_OK(ingot_topo_load(shapes[i], &topo));
        CHECK(topo->ngpus >= 1 && topo->nnics == 0);
        for (int n = 1; n <= topo->npus; n++) {
            CHECK_OK(ingot_topo_plan(topo, n, &share, &plan));
            ingot_topo_placement_fill(topo, plan, NULL, n - 1, NULL, &pl);
            CHECK(pl.gpu_index >= 0 && pl.nic_name[0] == '\0' && pl.ucx_net_devices[0] == '\0');
            CHECK(pl.cpuset[0] != '\0');
            ingot_topo_plan_destroy(plan);
        }
        ingot_topo_destroy(topo);
    }
    ingot_topo_t *odd;
    ingot_plan_t *plan;
    CHECK_OK(ingot_topo_load(ODD, &odd));
    CHECK(odd->ngpus == 4 && odd->gpus[2].pci == NULL && odd->gpus[0].numa == -1);
    CHECK_OK(ingot_topo_plan(odd, 4, NULL, &plan));
    CHECK(plan->ranks[3].gpu == 3 && plan->ranks[3].nic < 0);
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(odd);
}

/* This machine: a launcher binding narrower than the plan is reported; staging memory can be
 * bound to the plan's NUMA node. */
static void check_launcher_binding(void)
{
    ingot_topo_t *live;
    ingot_plan_t *plan;
    ingot_mem_t mem;
    char msg[INGOT_TOPOLOGY_STR_MAX];
    bool conflict = true;
    /* One rank per CPU in a CPU-only plan: what is checked here is the binding, and a GPU plan
     * would draw the ranks' CPUs from the GPUs' localities (shared PUs on a small GPU node). */
    ingot_plan_params_t cpu_mode = {.field_mask = INGOT_PLAN_PARAM_FIELD_MODE,
                                    .mode = INGOT_TOPO_MODE_CPU};
    CHECK_OK(ingot_topo_load(NULL, &live));
    CHECK_OK(ingot_topo_plan(live, live->npus, &cpu_mode, &plan));
    int numa = ingot_topo_plan_numa_os_index(live, plan, 0);
    CHECK_OK(ingot_mem_alloc(1 << 20, INGOT_MEM_F_PREFAULT, numa, "staging", &mem));
    CHECK(mem.numa_node == numa);
    ingot_mem_free(&mem);
    if (live->npus < 2) {
        printf("one CPU: launcher conflict not checked\n");
        goto out;
    }
    hwloc_bitmap_t first = hwloc_bitmap_dup(plan->ranks[0].cpuset);
    CHECK(hwloc_set_cpubind(live->hw, first, HWLOC_CPUBIND_PROCESS) == 0);
    CHECK_OK(ingot_topo_launcher_check(live, plan, 0, NULL, msg, sizeof(msg), &conflict));
    CHECK(!conflict);
    CHECK_OK(ingot_topo_launcher_check(live, plan, 1, NULL, msg, sizeof(msg), &conflict));
    CHECK(conflict);
    CHECK_CONTAINS(msg, "the launcher bound this process to CPUs");
    CHECK_CONTAINS(msg, "the plan gives it");
    CHECK(hwloc_set_cpubind(live->hw, hwloc_topology_get_allowed_cpuset(live->hw),
                            HWLOC_CPUBIND_PROCESS) == 0);
    hwloc_bitmap_free(first);
out:
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(live);
}

/* Every allocation of load and plan failing in turn: NO_MEMORY, nothing written, no crash. */
static void check_alloc_failures(void)
{
#ifdef INGOT_FAULT_INJECTION
    char err[256], spec[64];
    int failed = 0;
    for (int nth = 1;; nth++) {
        ingot_topo_t *topo = NULL;
        ingot_plan_t *plan = NULL;
        snprintf(spec, sizeof(spec), "malloc:%d:ENOMEM", nth);
        CHECK_OK(ingot_fault_arm(spec, err, sizeof(err)));
        ingot_status_t st = ingot_topo_load(DGX, &topo);
        if (st == INGOT_OK) {
            ingot_plan_params_t share = {.field_mask = INGOT_PLAN_PARAM_FIELD_SHARING,
                                         .sharing = INGOT_TOPO_SHARING_SHARE};
            st = ingot_topo_plan(topo, 12, &share, &plan);
            CHECK(st == INGOT_OK || plan == NULL);
        } else {
            CHECK(topo == NULL);
        }
        CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
        ingot_topo_plan_destroy(plan);
        ingot_topo_destroy(topo);
        if (st == INGOT_OK) {
            break;
        }
        CHECK_STATUS(st, INGOT_ERR_NO_MEMORY);
        failed++;
    }
    CHECK(failed > 0);
    printf("%d allocation failures handled\n", failed);
    free(log_new());
#endif
}

/* The public summary and device queries of the DGX-like fixture (what the context returns). */
static void check_public_fill(void)
{
    ingot_topo_t *dgx;
    ingot_topology_summary_t s;
    ingot_topology_device_t d;
    CHECK_OK(ingot_topo_load(DGX, &dgx));
    ingot_topo_summary_fill(dgx, &s);
    CHECK(s.packages == 2 && s.numa_nodes == 2 && s.cores == 112 && s.pus == 224);
    CHECK(s.gpus == 8 && s.nics == 12 && s.nics_openfabrics == 1 && s.storage == 4);
    CHECK(strcmp(s.hostname, "dgx-h100-01") == 0 && strcmp(s.allowed_cpuset, "0-223") == 0);
    CHECK_OK(ingot_topo_device_fill(dgx, INGOT_TOPOLOGY_DEVICE_GPU, 7, &d));
    CHECK(strcmp(d.pci_busid, "0000:db:00.0") == 0 && d.numa_node == 1 && d.package == 1);
    CHECK(strcmp(d.name, "cuda7") == 0 && strcmp(d.locality, "56-111,168-223") == 0);
    CHECK_OK(ingot_topo_device_fill(dgx, INGOT_TOPOLOGY_DEVICE_NIC, 0, &d));
    CHECK(strcmp(d.name, "mlx5_0") == 0 && d.port == 1);
    CHECK_STATUS(ingot_topo_device_fill(dgx, INGOT_TOPOLOGY_DEVICE_GPU, 8, &d),
                 INGOT_ERR_OUT_OF_RANGE);
    CHECK_STATUS(ingot_topo_device_fill(dgx, (ingot_topology_device_kind_t)7, 0, &d),
                 INGOT_ERR_INVALID_PARAM);
    CHECK(strcmp(ingot_topology_distance_name(INGOT_TOPOLOGY_DISTANCE_HOSTBRIDGE), "hostbridge") ==
          0);
    CHECK(strcmp(ingot_topology_distance_name((ingot_topology_distance_t)42), "unknown") == 0);
    ingot_topo_destroy(dgx);
}

static void check_config_rows(void)
{
    const ingot_config_field_t *bind = ingot_config_find("BIND", NULL);
    int v = -1;
    char err[512];
    CHECK(bind != NULL);
    CHECK_OK(ingot_config_parse(bind, "cpu+mem", &v, err, sizeof(err)));
    CHECK(v == INGOT_TOPO_BIND_CPUMEM);
    CHECK(ingot_config_parse(bind, "socket", &v, err, sizeof(err)) != INGOT_OK);
    CHECK_CONTAINS(err, "cpu+mem");
    CHECK(ingot_config_find("TOPOLOGY_XML", NULL) != NULL &&
          ingot_config_find("GPUS", NULL) != NULL);
    CHECK(ingot_config_find("GPU_SHARING", NULL) != NULL &&
          ingot_config_find("INGEST_CORES", NULL) != NULL);
    CHECK(ingot_config_find("PLACEMENT", NULL) != NULL);
}

int main(void)
{
    snprintf(log_path, sizeof(log_path), "%s/ingot.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    setenv("INGOT_LOG_LEVEL", "warn", 1);
    CHECK_OK(ingot_config_load());
    fclose(fopen(log_path, "a"));
    check_bad_files();
    check_bad_policies();
    check_gpu_lists();
    check_odd_topologies();
    check_launcher_binding();
    check_public_fill();
    check_alloc_failures();
    check_config_rows();
    return 0;
}
