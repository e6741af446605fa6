/*
 * ResNet-50's parameter tensors (He et al. 2016; torchvision's resnet50), built from the
 * architecture in PyTorch's parameter order: the 7x7 stem conv and its batch norm, four layers
 * of 3, 4, 6 and 3 bottleneck blocks (1x1 reduce, 3x3, 1x1 expand by 4, each followed by a batch
 * norm; the first block of each layer with a 1x1 projection and its batch norm), the 1000-way fc.
 * Convs have no bias; a batch norm has a weight and a bias tensor (its running statistics are
 * buffers, not parameters). 161 tensors, 25,557,032 parameters.
 */
#include "allreduce-bench/arb.h"

#define RESNET_IN_CHANNELS 3
#define RESNET_STEM_WIDTH  64
#define RESNET_STEM_KERNEL 7
#define RESNET_KERNEL      3
#define RESNET_EXPANSION   4
#define RESNET_LAYERS      4
#define RESNET_CLASSES     1000

static void add(arb_model_t *m, size_t count)
{
    if (m->n < ARB_RESNET50_TENSORS) { /* a wrong architecture shows in the totals' check */
        m->counts[m->n] = count;
    }
    m->n++;
    m->params += count;
}

static void add_conv(arb_model_t *m, size_t in, size_t out, size_t kernel)
{
    add(m, out * in * kernel * kernel);
}

static void add_bn(arb_model_t *m, size_t channels)
{
    add(m, channels); /* weight */
    add(m, channels); /* bias */
}

/* One bottleneck block from @p in channels; returns its output channels. */
static size_t add_bottleneck(arb_model_t *m, size_t in, size_t width, int downsample)
{
    size_t out = width * RESNET_EXPANSION;
    add_conv(m, in, width, 1);
    add_bn(m, width);
    add_conv(m, width, width, RESNET_KERNEL);
    add_bn(m, width);
    add_conv(m, width, out, 1);
    add_bn(m, out);
    if (downsample) {
        add_conv(m, in, out, 1);
        add_bn(m, out);
    }
    return out;
}

void ingot_arb_resnet50(arb_model_t *m)
{
    static const int blocks[RESNET_LAYERS] = {3, 4, 6, 3};
    static const size_t widths[RESNET_LAYERS] = {64, 128, 256, 512};
    size_t channels = RESNET_STEM_WIDTH;
    m->n = 0;
    m->params = 0;
    add_conv(m, RESNET_IN_CHANNELS, RESNET_STEM_WIDTH, RESNET_STEM_KERNEL);
    add_bn(m, RESNET_STEM_WIDTH);
    for (int l = 0; l < RESNET_LAYERS; l++) {
        for (int b = 0; b < blocks[l]; b++) {
            channels = add_bottleneck(m, channels, widths[l], b == 0);
        }
    }
    add(m, channels * RESNET_CLASSES); /* fc weight */
    add(m, RESNET_CLASSES);            /* fc bias */
}
