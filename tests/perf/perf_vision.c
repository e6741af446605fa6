/*
 * Benchmark helper of the image transform (run by hand through vision_bench.sh; not a test):
 *   perf_vision decode DIR THREADS REPS [N]
 *       the ceiling: libjpeg-turbo's own full-size decode of every JPEG below DIR (RGB,
 *       accurate integer DCT, fancy upsampling: tjbench's and Pillow's defaults), held in
 *       memory, on THREADS threads; images/s
 *   perf_vision transform DIR THREADS REPS [N] [dct=fast|any|off] [out=f32|u8] [crop=random|center]
 *       ingot_transform_image_decode on the same images (224 x 224, RandomResizedCrop + flip +
 *       normalise by default) called directly; images/s, and the transform's counters
 *   perf_vision loader MANIFEST WORKERS EPOCHS BATCH STEP_MS
 *       the loader with the transform (MPI singleton, one rank, host batches) and a trainer that
 *       "computes" STEP_MS per step (a sleep, as DLIO's emulated accelerator): images/s, stall
 *       and AU = compute / wall (first step excluded)
 * Every line: "RESULT name value unit" (median of REPS with min and max where there are reps).
 */
#include <ingot/ingot.h>
#include "base/time.h"

#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <jpeglib.h>

#define MAX_REPS   32
#define MAX_FILES  200000
#define MAX_THREAD 64
#define OUT_SIDE   224
/** A decoded image of up to 16 megapixels (decode mode), an output (transform mode). */
#define DECODE_BUF (48u << 20)

typedef struct blob {
    uint8_t *p;
    size_t len;
} blob_t;

static blob_t files[MAX_FILES];
static size_t nfiles, nbytes;

static int collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    const char *dot = strrchr(path, '.');
    if (flag != FTW_F || dot == NULL ||
        (strcasecmp(dot, ".jpeg") != 0 && strcasecmp(dot, ".jpg") != 0) || nfiles == MAX_FILES) {
        return 0;
    }
    FILE *f = fopen(path, "rb");
    uint8_t *p = malloc((size_t)sb->st_size);
    if (f == NULL || p == NULL || fread(p, 1, (size_t)sb->st_size, f) != (size_t)sb->st_size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    files[nfiles++] = (blob_t){p, (size_t)sb->st_size};
    nbytes += (size_t)sb->st_size;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void result(const char *name, double *v, int reps, const char *unit)
{
    qsort(v, (size_t)reps, sizeof(*v), cmp_d);
    printf("RESULT %s %.1f %.1f %.1f %s\n", name, v[reps / 2], v[0], v[reps - 1], unit);
}

typedef struct job {
    int id, nthreads, mode; /* 0 decode, 1 transform */
    size_t n;
    ingot_vision_h v;
    int bad;
    double cpu_s; /* the thread's CPU time (a figure other processes' load barely moves) */
} job_t;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void decode_one(const blob_t *b, uint8_t *buf)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr e;
    d.err = jpeg_std_error(&e);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, b->p, (unsigned long)b->len);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = buf + (size_t)d.output_scanline * d.output_width * 3;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
}

static void *run_job(void *arg)
{
    job_t *j = arg;
    uint8_t *buf = malloc(DECODE_BUF); /* once per thread, before the clock matters */
    if (buf == NULL) {
        exit(1);
    }
    double c0 = thread_cpu_s();
    for (size_t i = (size_t)j->id; i < j->n; i += (size_t)j->nthreads) {
        if (j->mode == 0) {
            decode_one(&files[i], buf);
            continue;
        }
        ingot_field_view_t f = {.name = "jpg", .data = files[i].p, .len = files[i].len};
        ingot_sample_view_t s = {.index = i, .key = "k", .field_count = 1, .fields = &f};
        j->bad += ingot_transform_image_decode(&s, buf, ingot_vision_out_size(j->v), j->v) !=
                  INGOT_OK;
    }
    j->cpu_s = thread_cpu_s() - c0;
    free(buf);
    return NULL;
}

static double cpu_us_per_image;

static double run_threads(int mode, int nthreads, size_t n, ingot_vision_h v)
{
    double cpu = 0;
    pthread_t t[MAX_THREAD];
    job_t jobs[MAX_THREAD];
    uint64_t t0 = ingot_time_ns();
    for (int k = 0; k < nthreads; k++) {
        jobs[k] = (job_t){k, nthreads, mode, n, v, 0, 0.0};
        pthread_create(&t[k], NULL, run_job, &jobs[k]);
    }
    for (int k = 0; k < nthreads; k++) {
        pthread_join(t[k], NULL);
        if (jobs[k].bad) {
            fprintf(stderr, "%d images failed: %s\n", jobs[k].bad, ingot_last_error());
            exit(1);
        }
        cpu += jobs[k].cpu_s;
    }
    cpu_us_per_image = cpu * 1e6 / (double)n;
    return (double)n / ((double)(ingot_time_ns() - t0) / 1e9);
}

static ingot_vision_h make_vision(int argc, char **argv)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_NORMALIZE |
                      INGOT_VISION_PARAM_FIELD_DCT | INGOT_VISION_PARAM_FIELD_DTYPE |
                      INGOT_VISION_PARAM_FIELD_CROP,
        .height = OUT_SIDE,
        .width = OUT_SIDE,
        .mean = {0.485f, 0.456f, 0.406f},
        .std = {0.229f, 0.224f, 0.225f}};
    for (int i = 0; i < argc; i++) {
        p.dct = strcmp(argv[i], "dct=any") == 0   ? INGOT_IMAGE_DCT_ANY
                : strcmp(argv[i], "dct=off") == 0 ? INGOT_IMAGE_DCT_OFF
                                                  : p.dct;
        p.dtype = strcmp(argv[i], "out=u8") == 0 ? INGOT_IMAGE_UINT8 : p.dtype;
        p.crop = strcmp(argv[i], "crop=center") == 0 ? INGOT_IMAGE_CROP_CENTER : p.crop;
    }
    ingot_vision_h v;
    if (ingot_vision_create(&p, &v) != INGOT_OK) {
        exit(1);
    }
    return v;
}

static int bench_images(int argc, char **argv, int mode)
{
    int threads = atoi(argv[3]), reps = atoi(argv[4]);
    if (nftw(argv[2], collect, 64, FTW_PHYS) != 0 || nfiles == 0 || threads < 1 ||
        threads > MAX_THREAD || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "no JPEG below %s, or bad THREADS/REPS\n", argv[2]);
        return 2;
    }
    size_t n = argc > 5 && atol(argv[5]) > 0 && (size_t)atol(argv[5]) < nfiles
                   ? (size_t)atol(argv[5])
                   : nfiles;
    ingot_vision_h v = mode ? make_vision(argc - 5, argv + 5) : NULL;
    double r[MAX_REPS], cpu[MAX_REPS];
    run_threads(mode, threads, n < 256 ? n : 256, v); /* warm: scratch, page cache, clocks */
    for (int k = 0; k < reps; k++) {
        r[k] = run_threads(mode, threads, n, v);
        cpu[k] = cpu_us_per_image;
    }
    char name[64];
    snprintf(name, sizeof(name), "%s_t%d", mode ? "transform" : "decode", threads);
    printf("# %zu JPEGs, mean %.1f KB\n", n, (double)nbytes / nfiles / 1000);
    result(name, r, reps, "images/s");
    snprintf(name, sizeof(name), "%s_cpu_t%d", mode ? "transform" : "decode", threads);
    result(name, cpu, reps, "CPU-us/image");
    if (v != NULL) {
        ingot_vision_stats_t s = {.field_mask = ~0ull};
        ingot_vision_stats(v, &s);
        printf("# decoded %.3f of the declared pixels, %.3f of the JPEGs DCT-scaled, %llu states "
               "holding %.1f MiB\n",
               (double)s.pixels_decoded / (double)s.pixels_declared,
               (double)s.dct_scaled / (double)s.jpeg, (unsigned long long)s.states,
               (double)s.scratch_bytes / 1048576.0);
        ingot_vision_destroy(v);
    }
    return 0;
}

/* CPU time of every thread of the process. */
static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (time_t)(ms / 1000)) * 1e6)};
    nanosleep(&ts, NULL);
}

static int bench_loader(char **argv)
{
    ingot_ctx_h ctx;
    if (ingot_init(NULL, &ctx) != INGOT_OK) {
        return 1;
    }
    ingot_vision_h v = make_vision(0, NULL);
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_EPOCHS | INGOT_LOADER_PARAM_FIELD_DEVICE |
                      INGOT_LOADER_PARAM_FIELD_TRANSFORM | INGOT_LOADER_PARAM_FIELD_THREADS,
        .manifest_path = argv[2],
        .workers = (uint32_t)atoi(argv[3]),
        .epochs = (uint64_t)atoll(argv[4]),
        .global_batch = (uint64_t)atoll(argv[5]),
        .device = INGOT_DEVICE_HOST,
        .transform = ingot_transform_image_decode,
        .transform_arg = v,
        .sample_out_size = ingot_vision_out_size(v)};
    double step_ms = atof(argv[6]);
    ingot_loader_h l;
    if (ingot_loader_create(ctx, &p, &l) != INGOT_OK) {
        return 1;
    }
    ingot_batch_t b;
    uint64_t n = 0, t1 = 0, steps = 0, t0 = ingot_time_ns();
    double c0 = process_cpu_s();
    ingot_status_t st;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        if (steps++ == 0) {
            t1 = ingot_time_ns(); /* the AU leaves the first step (pipeline fill) out */
        }
        n += b.count;
        sleep_ms(step_ms);
        ingot_loader_release(l, &b);
    }
    uint64_t end = ingot_time_ns();
    double wall = (double)(end - t1) / 1e9;
    ingot_loader_stats_t s = {.field_mask = INGOT_LOADER_STATS_FIELD_STALL};
    ingot_loader_stats(l, &s);
    /* images/s over the whole run, the first step's fill included (conservative) */
    printf("RESULT loader_w%s %.1f images/s over %llu steps; stall %.1f%% of the wall after the "
           "first step; AU %.3f (first step excluded, %.0f ms per step)\n",
           argv[3], (double)n / ((double)(end - t0) / 1e9), (unsigned long long)steps,
           100.0 * (double)s.stall_ns / (double)s.wall_ns,
           (double)(steps - 1) * step_ms / 1e3 / wall, step_ms);
    printf("RESULT loader_cpu_w%s %.1f CPU-us/image (every thread of the process)\n", argv[3],
           (process_cpu_s() - c0) * 1e6 / (double)n);
    ingot_loader_destroy(l);
    ingot_vision_destroy(v);
    ingot_finalize(ctx);
    return st == INGOT_END_OF_DATA ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "decode") == 0) {
        return bench_images(argc, argv, 0);
    }
    if (argc >= 5 && strcmp(argv[1], "transform") == 0) {
        return bench_images(argc, argv, 1);
    }
    if (argc == 7 && strcmp(argv[1], "loader") == 0) {
        return bench_loader(argv);
    }
    fprintf(stderr, "usage: see the head of tests/perf/perf_vision.c\n");
    return 2;
}
