/* ingot-train's command line: every value checked, a bad one named with the option. */
#include "train/train.h"
#include "common/cli.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_TRAIN = 256,
    O_TEST,
    O_MODEL,
    O_HIDDEN,
    O_EPOCHS,
    O_BATCH,
    O_LR,
    O_MOMENTUM,
    O_SEED,
    O_CKPT,
    O_RESUME,
    O_JSON,
    O_BLAS,
    O_DECODE
};

static const struct option options[] = {{"train", 1, 0, O_TRAIN},   {"test", 1, 0, O_TEST},
                                        {"model", 1, 0, O_MODEL},   {"hidden", 1, 0, O_HIDDEN},
                                        {"epochs", 1, 0, O_EPOCHS}, {"batch", 1, 0, O_BATCH},
                                        {"lr", 1, 0, O_LR},         {"momentum", 1, 0, O_MOMENTUM},
                                        {"seed", 1, 0, O_SEED},     {"checkpoint", 1, 0, O_CKPT},
                                        {"resume", 0, 0, O_RESUME}, {"json", 1, 0, O_JSON},
                                        {"blas", 1, 0, O_BLAS},     {"decode", 0, 0, O_DECODE},
                                        {"help", 0, 0, 'h'},        {0, 0, 0, 0}};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " TRAIN_TOOL " --train MANIFEST --test MANIFEST [options]\n"
            "Data-parallel training on Fashion-MNIST (ingot-manifest pack --fashion-mnist\n"
            "--split train|test) through ingot's loader and gradient all-reduce.\n"
            "  --model softmax|mlp   softmax regression or one hidden layer (default mlp)\n"
            "  --hidden N            hidden units of the MLP (default 128)\n"
            "  --epochs N            epochs (default 10)\n"
            "  --batch N             global batch over all ranks (default 256)\n"
            "  --lr X                learning rate (default 0.01 softmax, 0.05 mlp)\n"
            "  --momentum X          SGD momentum (default 0.9)\n"
            "  --seed N              initialisation and shuffle seed (default 1)\n"
            "  --checkpoint DIR      write DIR/model.ckpt and DIR/cursor.{0,1}.ingot each epoch\n"
            "                        and on SIGUSR1/SIGTERM\n"
            "  --resume              start from DIR's checkpoint (any world size dividing the\n"
            "                        batch)\n"
            "  --json FILE           the report as JSON (rank 0)\n"
            "  --blas auto|cpu|cuda  matrix products through CBLAS (cpu) or cuBLAS on the GPU\n"
            "                        of each rank's placement (cuda: an error where a rank\n"
            "                        cannot); auto (default): cuda when every rank can, else cpu\n"
            "  --decode              decode each sample's image (JPEG, PNG or PNM, e.g. an\n"
            "                        ImageFolder packed with --labels-from-dirs) to 28x28 gray\n"
            "                        with the image decode transform, instead of reading the\n"
            "                        28x28 P5 `pgm` member of pack --fashion-mnist\n"
            "Exit status: 0; 1 on an error; 2 for a bad option; 85 after a checkpoint taken\n"
            "on SIGUSR1 or SIGTERM (what Slurm's --signal sends): resume with --resume.\n");
}

static train_blas_t args_blas(const char *s)
{
    if (strcmp(s, "auto") == 0) {
        return TRAIN_BLAS_AUTO;
    }
    if (strcmp(s, "cpu") == 0) {
        return TRAIN_BLAS_CPU;
    }
    if (strcmp(s, "cuda") != 0) {
        cli_bad("--blas", s, "is not auto, cpu or cuda");
    }
    return TRAIN_BLAS_CUDA;
}

void train_args_parse(int argc, char **argv, train_args_t *a)
{
    *a = (train_args_t){.model = TRAIN_MLP,
                        .blas = TRAIN_BLAS_AUTO,
                        .hidden = 128,
                        .epochs = 10,
                        .batch = 256,
                        .seed = 1,
                        .lr = 0, /* per model, below */
                        .momentum = 0.9};
    int o;
    while ((o = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (o) {
        case O_TRAIN: a->train = optarg; break;
        case O_TEST: a->test = optarg; break;
        case O_MODEL:
            if (strcmp(optarg, "softmax") != 0 && strcmp(optarg, "mlp") != 0) {
                cli_bad("--model", optarg, "is not softmax or mlp");
            }
            a->model = strcmp(optarg, "mlp") == 0 ? TRAIN_MLP : TRAIN_SOFTMAX;
            break;
        case O_HIDDEN: a->hidden = (uint32_t)cli_u64("--hidden", optarg, 1, 65536); break;
        case O_EPOCHS: a->epochs = cli_u64("--epochs", optarg, 1, 100000); break;
        case O_BATCH: a->batch = cli_u64("--batch", optarg, 1, 1u << 24); break;
        case O_LR: a->lr = cli_real("--lr", optarg, 1e-9, 100); break;
        case O_MOMENTUM: a->momentum = cli_real("--momentum", optarg, 0, 0.9999); break;
        case O_SEED: a->seed = cli_u64("--seed", optarg, 0, UINT64_MAX); break;
        case O_CKPT: a->checkpoint_dir = optarg; break;
        case O_RESUME: a->resume = true; break;
        case O_JSON: a->json = optarg; break;
        case O_BLAS: a->blas = args_blas(optarg); break;
        case O_DECODE: a->decode = true; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(TRAIN_EXIT_USAGE);
        }
    }
    if (optind != argc || a->train == NULL || a->test == NULL) {
        fprintf(stderr, TRAIN_TOOL ": %s\n",
                optind != argc ? "unexpected argument" : "--train and --test are required");
        usage(stderr);
        exit(TRAIN_EXIT_USAGE);
    }
    if (a->lr == 0) { /* with momentum 0.9: softmax oscillates at 0.05 (79-83%), steady at 0.01 */
        a->lr = a->model == TRAIN_SOFTMAX ? 0.01 : 0.05;
    }
    if (a->resume && a->checkpoint_dir == NULL) {
        fprintf(stderr, TRAIN_TOOL ": --resume needs --checkpoint DIR\n");
        exit(TRAIN_EXIT_USAGE);
    }
}
