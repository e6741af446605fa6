/* ingot-manifest's command line: the usage text and the options every command takes. */
#include "manifest/cli.h"
#include "common/cli.h"
#include <ingot/pack.h>
#include <ingot/shard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Bounds of the integer options. */
#define CLI_JOBS_MAX       4096
#define CLI_ZSTD_LEVEL_MAX 22

const char cli_usage_text[] =
    "usage: ingot-manifest COMMAND [ARGS]\n"
    "\n"
    "  pack SRC... -o DIR [--shard-size SIZE] [--zstd LEVEL] [--dict] [--jobs N]\n"
    "        Pack directories of files (<key>.<field>) or existing tars into tar shards of about\n"
    "        SIZE (default 256MiB) in DIR, zstd-compressing members at LEVEL (with a trained\n"
    "        dictionary when --dict), and write DIR/manifest.ingot. Shards are cut on\n"
    "        uncompressed bytes; N shards (default: online CPUs) are compressed and written\n"
    "        in parallel, each buffered in memory; the output does not depend on N.\n"
    "  pack ROOT -o DIR --labels-from-dirs [--skip-non-images] [--allow-empty-classes] ...\n"
    "        torchvision's ImageFolder (ROOT/<class>/<image>): each image a sample labelled\n"
    "        with its class index, classes sorted by folder name; the names are written to\n"
    "        DIR/" INGOT_PACK_CLASSES_NAME ". Images: .jpg .jpeg .png .ppm .pgm .pnm (any case),\n"
    "        also in nested folders (the top folder's class). Any other file in a class folder\n"
    "        fails the pack (--skip-non-images: left out), as does a class folder without\n"
    "        images (--allow-empty-classes: its index is kept); files in ROOT are ignored.\n"
    "  pack --fashion-mnist [IDX_DIR] -o DIR [--split train|test] [--shard-size SIZE]\n"
    "       [--zstd LEVEL]\n"
    "        Turn the Fashion-MNIST idx files (default " INGOT_IMPORT_FASHION_MNIST_DIR ",\n"
    "        Debian package dataset-fashion-mnist) into shards of <split>-<n>.pgm + .cls:\n"
    "        both splits (train then test), or only --split's, so that training and\n"
    "        evaluation read manifests that share no sample.\n"
    "  build SHARD... -o MANIFEST [--reject-special] [--dict FILE] [--labels FILE]\n"
    "        Index existing tar shards (e.g. made by GNU tar) without rewriting them.\n"
    "        --labels: 'KEY LABEL' lines for samples without a .cls member.\n"
    "  build s3://BUCKET/PREFIX/ [-o s3://BUCKET/PREFIX/NAME] [--reject-special] [--labels FILE]\n"
    "        Index the shards in a bucket: one LIST of the prefix (only keys ending in .tar),\n"
    "        a GET of each shard, its size and ETag recorded; the manifest is written beside\n"
    "        them (default PREFIX/manifest.ingot), shard names relative to it, so a copy of\n"
    "        the prefix reads as well. Credentials, region and endpoint as the AWS CLI's.\n"
    "  inspect MANIFEST\n"
    "        Summary, field names and codecs, histogram of sample sizes.\n"
    "  verify MANIFEST\n"
    "        Re-hash every shard and sample; print every corrupt sample (key, shard, offset);\n"
    "        exit 1 if any.\n"
    "  list MANIFEST\n"
    "        One line per member: shard path, member name (<key>.<field>[.zst]), stored bytes,\n"
    "        offset in the shard, label.\n"
    "  cat MANIFEST KEY [--field NAME] [--shard N]\n"
    "        Write one sample's field (decoded) to stdout.\n"
    "\n"
    "MANIFEST may be a file or a URL: s3://BUCKET/KEY or http(s)://HOST/PATH (one GET).\n"
    "Sizes take the syntax of every INGOT_* size: 64KiB, 256MiB, 1.5GiB (K/KiB/M/MiB... = 1024^n),\n"
    "1GB (KB/MB/GB = 1000^n).\n"
    "Exit status: 0 success, 1 failure (bad input, corrupt data, an invalid INGOT_* variable),\n"
    "2 usage error.\n";

/* The integer options (strictly parsed as every app's, apps/common/cli.h: a bad value exits with
 * the usage status, naming the option); 1 when @p o is none of them. */
static int cli_parse_int(const char *o, const char *arg, cli_args_t *a)
{
    if (strcmp(o, "--jobs") == 0) {
        a->jobs = (int)cli_u64(o, arg, 1, CLI_JOBS_MAX);
    } else if (strcmp(o, "--zstd") == 0) {
        a->zstd_level = (int)cli_u64(o, arg, 0, CLI_ZSTD_LEVEL_MAX);
    } else if (strcmp(o, "--shard") == 0) {
        a->shard = (int64_t)cli_u64(o, arg, 0, INT64_MAX);
    } else {
        return 1;
    }
    return 0;
}

/* @p dict_file: "--dict" takes a file argument (build) instead of being a flag (pack). */
int cli_parse(int argc, char **argv, int dict_file, cli_args_t *a)
{
    *a = (cli_args_t){.shard = -1};
    a->pos = calloc((size_t)argc + 1, sizeof(*a->pos));
    if (a->pos == NULL) {
        fprintf(stderr, "ingot-manifest: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc;
        if (strcmp(o, "-o") == 0 && more) {
            a->out = argv[++i];
        } else if (strcmp(o, "--dict") == 0 && dict_file && more) {
            a->dict_file = argv[++i];
        } else if (strcmp(o, "--dict") == 0 && !dict_file) {
            a->dict = 1;
        } else if (more && cli_parse_int(o, argv[i + 1], a) == 0) {
            i++;
        } else if (strcmp(o, "--labels") == 0 && more) {
            a->labels = argv[++i];
        } else if (strcmp(o, "--field") == 0 && more) {
            a->field = argv[++i];
        } else if (strcmp(o, "--shard-size") == 0 && more) {
            a->shard_size = argv[++i];
        } else if (strcmp(o, "--reject-special") == 0) {
            a->reject_special = 1;
        } else if (strcmp(o, "--fashion-mnist") == 0) {
            a->fashion = 1;
        } else if (strcmp(o, "--split") == 0 && more) {
            a->split = argv[++i];
        } else if (cli_folder_option(o, &a->folder)) {
            continue;
        } else if (o[0] == '-' && o[1] != '\0') {
            free(a->pos); /* the callers return at once: nothing else frees it */
            return cli_usage("unknown or incomplete option '%s'", o);
        } else {
            a->pos[a->npos++] = o;
        }
    }
    return 0;
}
