/*
 * The image transform's draws do not depend on the world size (run by vision_mpi.sh on 1 and
 * on 4 ranks): each rank writes "epoch index label hash" for every sample it was handed over
 * two epochs of an ImageFolder of JPEGs (rank 0 makes and packs it when DIR has none).
 *   test_vision_mpi DIR OUT_PREFIX    -> OUT_PREFIX.<rank>
 */
#include "vision_data.h"
#include <mpi.h>

#define N     48
#define BATCH 8
#define SEED  11

int main(int argc, char **argv)
{
    char root[1024], out[1024], path[2048];
    int rank;
    CHECK(argc == 3);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(root, sizeof(root), "%s/folder", argv[1]);
    snprintf(out, sizeof(out), "%s/packed", argv[1]);
    snprintf(path, sizeof(path), "%s/%s", out, INGOT_PACK_MANIFEST_NAME);
    if (rank == 0 && access(path, R_OK) != 0) {
        vd_folder(root, N);
        vd_pack(root, out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ingot_ctx_h ctx;
    ingot_init_params_t ip = {.field_mask = INGOT_INIT_PARAM_FIELD_COMM, .comm = MPI_COMM_WORLD};
    CHECK_OK(ingot_init(&ip, &ctx));
    ingot_vision_h v = vd_vision();
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_DEVICE | INGOT_LOADER_PARAM_FIELD_TRANSFORM,
        .manifest_path = path,
        .global_batch = BATCH,
        .seed = SEED,
        .epochs = 2,
        .device = INGOT_DEVICE_HOST,
        .transform = ingot_transform_image_decode,
        .transform_arg = v,
        .sample_out_size = ingot_vision_out_size(v)};
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    char file[2048];
    snprintf(file, sizeof(file), "%s.%d", argv[2], rank);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    ingot_batch_t b;
    ingot_status_t st;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        for (uint32_t i = 0; i < b.count; i++) {
            fprintf(f, "%llu %llu %d %016llx\n", (unsigned long long)b.epoch,
                    (unsigned long long)b.indices[i], b.labels[i],
                    (unsigned long long)vd_hash((const uint8_t *)b.data + b.offsets[i],
                                                b.lengths[i]));
        }
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK_STATUS(st, INGOT_END_OF_DATA);
    fclose(f);
    ingot_loader_destroy(l);
    ingot_vision_destroy(v);
    ingot_finalize(ctx);
    MPI_Finalize();
    return 0;
}
