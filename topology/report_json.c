/* The node summary and the plan as one JSON object (ingot-topo --json). */
#include "topology/topo.h"
#include "topology/topo_util.h"

#define JSON_CTRL_LIMIT 0x20

static void json_str(FILE *out, const char *key, const char *s, const char *sep)
{
    fprintf(out, "\"%s\": \"", key);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < JSON_CTRL_LIMIT) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fprintf(out, "\"%s", sep);
}

static void json_int(FILE *out, const char *key, long v, const char *sep)
{
    fprintf(out, "\"%s\": %ld%s", key, v, sep);
}

static void json_devices(FILE *out, const ingot_topo_t *topo, ingot_topology_device_kind_t kind,
                         const char *key)
{
    ingot_topology_device_t d;
    fprintf(out, "    \"%s\": [", key);
    for (int i = 0; ingot_topo_device_fill(topo, kind, i, &d) == INGOT_OK; i++) {
        fprintf(out, "%s\n      {", i == 0 ? "" : ",");
        json_int(out, "index", d.index, ", ");
        json_str(out, "name", d.name, ", ");
        json_str(out, "pci_busid", d.pci_busid, ", ");
        json_int(out, "numa", d.numa_node, ", ");
        json_int(out, "package", d.package, ", ");
        if (kind == INGOT_TOPOLOGY_DEVICE_NIC) {
            json_int(out, "port", d.port, ", ");
        }
        json_str(out, "locality", d.locality, "}");
    }
    fprintf(out, "]");
}

static void json_node(FILE *out, const ingot_topo_t *topo)
{
    ingot_topology_summary_t s;
    ingot_topo_summary_fill(topo, &s);
    fprintf(out, "  \"node\": {\n    ");
    json_str(out, "hostname", s.hostname, ", ");
    json_str(out, "source", s.source, ", ");
    json_int(out, "packages", s.packages, ", ");
    json_int(out, "numa_nodes", s.numa_nodes, ", ");
    json_int(out, "cores", s.cores, ", ");
    json_int(out, "pus", s.pus, ",\n    ");
    json_str(out, "allowed_cpuset", s.allowed_cpuset, ", ");
    json_str(out, "nic_kind",
             s.nics == 0          ? "none"
             : s.nics_openfabrics ? "openfabrics"
                                  : "network",
             ",\n");
    json_devices(out, topo, INGOT_TOPOLOGY_DEVICE_GPU, "gpus");
    fprintf(out, ",\n");
    json_devices(out, topo, INGOT_TOPOLOGY_DEVICE_NIC, "nics");
    fprintf(out, ",\n");
    json_devices(out, topo, INGOT_TOPOLOGY_DEVICE_STORAGE, "storage");
    fprintf(out, "\n  }");
}

static void json_flags(FILE *out, uint64_t flags)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {
        {INGOT_PLACEMENT_FLAG_GPU_SHARED, "gpu_shared"},
        {INGOT_PLACEMENT_FLAG_CPUS_SHARED, "cpus_shared"},
        {INGOT_PLACEMENT_FLAG_INGEST_SHARED, "ingest_shared"},
        {INGOT_PLACEMENT_FLAG_LAUNCHER_CONFLICT, "launcher_conflict"},
        {INGOT_PLACEMENT_FLAG_BOUND, "bound"},
    };
    const char *sep = "";
    fprintf(out, "\"flags\": [");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (flags & names[i].bit) {
            fprintf(out, "%s\"%s\"", sep, names[i].name);
            sep = ", ";
        }
    }
    fprintf(out, "]");
}

static void json_rank(FILE *out, const ingot_placement_t *p)
{
    fprintf(out, "      {");
    json_int(out, "local_rank", p->local_rank, ", ");
    json_int(out, "gpu", p->gpu_index, ", ");
    json_int(out, "cuda_device", p->cuda_device, ", ");
    json_str(out, "pci_busid", p->gpu_pci_busid, ", ");
    json_int(out, "gpu_ranks", p->gpu_ranks, ",\n       ");
    json_str(out, "nic", p->nic_name, ", ");
    json_int(out, "nic_port", p->nic_port, ", ");
    json_str(out, "distance", p->nic_name[0] ? ingot_topology_distance_name(p->nic_distance) : "",
             ", ");
    json_int(out, "numa", p->numa_node, ",\n       ");
    json_str(out, "cpuset", p->cpuset, ", ");
    json_str(out, "ingest_cpuset", p->ingest_cpuset, ", ");
    json_str(out, "trainer_cpuset", p->trainer_cpuset, ",\n       ");
    json_str(out, "cuda_visible_devices", p->cuda_visible_devices, ", ");
    json_str(out, "ucx_net_devices", p->ucx_net_devices, ", ");
    json_str(out, "nccl_ib_hca", p->nccl_ib_hca, ",\n       ");
    json_flags(out, p->flags);
    fprintf(out, ", ");
    json_str(out, "conflict", p->conflict, "}");
}

void ingot_topo_print_json(FILE *out, const ingot_topo_t *topo, const ingot_plan_t *plan,
                           const ingot_placement_t *pl)
{
    fprintf(out, "{\n");
    json_node(out, topo);
    fprintf(out, ",\n  \"plan\": {");
    json_str(out, "mode", plan->gpu_plan ? "gpu" : "cpu", ", ");
    json_int(out, "local_size", plan->local_size, ", ");
    json_int(out, "gpus_used", plan->gpus_used, ", ");
    json_int(out, "node_id", pl[0].node_id, ", ");
    json_str(out, "hostname", pl[0].hostname, ",\n    \"ranks\": [\n");
    for (int r = 0; r < plan->local_size; r++) {
        json_rank(out, &pl[r]);
        fprintf(out, "%s\n", r + 1 < plan->local_size ? "," : "");
    }
    fprintf(out, "    ]\n  }\n}\n");
}
