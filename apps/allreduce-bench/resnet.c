/*
 * ResNet-50's parameter tensors (He et al. 2016; torchvision's resnet50), built from the
 * architecture in PyTorch's parameter order: the 7x7 stem conv and its batch norm, four layers
 * of 3, 4, 6 and 3 bottleneck blocks (1x1 reduce, 3x3, 1x1 expand by 4, each followed by a batch
 * norm; the first block of each layer with a 1x1 projection and its batch norm), the 1000-way fc.
 * Convs have no bias; a batch norm has a weight and a bias tensor (its running statistics are
 * buffers, not parameters). 161 tensors, 25,557,032 parameters.
 *
 * Each tensor also carries its layer's multiply-adds for a 224x224 image (a conv: k*k*in*out at
 * its output resolution; a batch norm: one per element, for the weight and for the bias; the fc:
 * in*out), so that an emulated backward can make gradients ready as a real one does: the stages
 * cost about the same, while the parameters sit mostly in the last ones (layer4 and the fc hold
 * 60% of them for about a quarter of the compute), which backward reaches first.
 */
#include "allreduce-bench/arb.h"

#define RESNET_IN_CHANNELS 3
#define RESNET_STEM_WIDTH  64
#define RESNET_STEM_KERNEL 7
#define RESNET_KERNEL      3
#define RESNET_EXPANSION   4
#define RESNET_LAYERS      4
#define RESNET_CLASSES     1000
#define RESNET_STEM_RES    112 /* 224x224 input, stride-2 stem */
#define RESNET_LAYER1_RES  56  /* after the stride-2 max pool */

static void add(arb_model_t *m, size_t count, double macs)
{
    if (m->n < ARB_RESNET50_TENSORS) { /* a wrong architecture shows in the totals' check */
        m->counts[m->n] = count;
        m->macs[m->n] = macs;
    }
    m->n++;
    m->params += count;
    m->total_macs += macs;
}

/* A conv whose output is @p res x @p res. */
static void add_conv(arb_model_t *m, size_t in, size_t out, size_t kernel, size_t res)
{
    size_t weights = out * in * kernel * kernel;
    add(m, weights, (double)weights * (double)(res * res));
}

static void add_bn(arb_model_t *m, size_t channels, size_t res)
{
    add(m, channels, (double)(channels * res * res)); /* weight */
    add(m, channels, (double)(channels * res * res)); /* bias */
}

/* One bottleneck block from @p in channels at @p res_in; the first block of layers 2-4 halves
 * the resolution in its 3x3 conv (torchvision's ResNet v1.5). Returns its output channels. */
static size_t add_bottleneck(arb_model_t *m, size_t in, size_t width, size_t res_in, int first,
                             int stride)
{
    size_t out = width * RESNET_EXPANSION, res = res_in / (size_t)stride;
    add_conv(m, in, width, 1, res_in);
    add_bn(m, width, res_in);
    add_conv(m, width, width, RESNET_KERNEL, res);
    add_bn(m, width, res);
    add_conv(m, width, out, 1, res);
    add_bn(m, out, res);
    if (first) {
        add_conv(m, in, out, 1, res);
        add_bn(m, out, res);
    }
    return out;
}

void arb_resnet50(arb_model_t *m)
{
    static const int blocks[RESNET_LAYERS] = {3, 4, 6, 3};
    static const size_t widths[RESNET_LAYERS] = {64, 128, 256, 512};
    size_t channels = RESNET_STEM_WIDTH, res = RESNET_LAYER1_RES;
    m->n = 0;
    m->params = 0;
    m->total_macs = 0;
    add_conv(m, RESNET_IN_CHANNELS, RESNET_STEM_WIDTH, RESNET_STEM_KERNEL, RESNET_STEM_RES);
    add_bn(m, RESNET_STEM_WIDTH, RESNET_STEM_RES);
    for (int l = 0; l < RESNET_LAYERS; l++) {
        for (int b = 0; b < blocks[l]; b++) {
            int stride = (b == 0 && l > 0) ? 2 : 1;
            channels = add_bottleneck(m, channels, widths[l], res, b == 0, stride);
            res /= (size_t)stride;
        }
    }
    add(m, channels * RESNET_CLASSES, (double)(channels * RESNET_CLASSES)); /* fc weight */
    add(m, RESNET_CLASSES, RESNET_CLASSES);                                 /* fc bias */
}
