/* ingot-sim --svg FILE (sim.h): per epoch, the bytes of each tier as stacked bars and the AU as a
 * line over them, in one SVG a browser shows: people would rather look than read. */
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PLOT_W      720
#define PLOT_H      400
#define PLOT_LEFT   80 /* room for the bytes' axis */
#define PLOT_RIGHT  60 /* room for the AU's axis */
#define PLOT_TOP    50
#define PLOT_BOTTOM 60
#define PLOT_TICKS  4

static const struct {
    int from;
    const char *name, *color;
} plot_tiers[] = {{INGOT_SIM_STORAGE, "storage", "#d62728"},
                  {INGOT_SIM_PEER, "peer", "#1f77b4"},
                  {INGOT_SIM_LOCAL, "local", "#2ca02c"},
                  {INGOT_SIM_DISK, "disk", "#9467bd"}};
#define PLOT_NTIERS (sizeof(plot_tiers) / sizeof(plot_tiers[0]))

static double plot_gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

static void plot_axes(FILE *f, double top_gib, uint32_t nodes, uint64_t ranks)
{
    double h = PLOT_H - PLOT_TOP - PLOT_BOTTOM;
    fprintf(f,
            "<text x='%d' y='24' font-size='16'>ingot-sim: %u nodes, %" PRIu64 " ranks: bytes "
            "by tier (bars, GiB) and AU (line) per epoch</text>\n",
            PLOT_LEFT, nodes, ranks);
    for (int t = 0; t <= PLOT_TICKS; t++) {
        double y = PLOT_TOP + h - h * t / PLOT_TICKS;
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>\n", PLOT_LEFT,
                PLOT_W - PLOT_RIGHT, y, y);
        fprintf(f, "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%.3g</text>\n",
                PLOT_LEFT - 6, y + 4, top_gib * t / PLOT_TICKS);
        fprintf(f, "<text x='%d' y='%.1f' font-size='11'>%.2f</text>\n", PLOT_W - PLOT_RIGHT + 6,
                y + 4, (double)t / PLOT_TICKS);
    }
    fprintf(f, "<text x='16' y='%d' font-size='12' transform='rotate(-90 16 %d)'>GiB</text>\n",
            PLOT_H / 2, PLOT_H / 2);
    fprintf(f, "<text x='%d' y='%d' font-size='12'>AU</text>\n", PLOT_W - 30, PLOT_TOP - 8);
    for (size_t k = 0; k < PLOT_NTIERS; k++) {
        int x = PLOT_LEFT + (int)k * 110;
        fprintf(f,
                "<rect x='%d' y='%d' width='12' height='12' fill='%s'/>"
                "<text x='%d' y='%d' font-size='12'>%s</text>\n",
                x, PLOT_H - 22, plot_tiers[k].color, x + 16, PLOT_H - 12, plot_tiers[k].name);
    }
}

int sim_plot(const char *path, const sim_args_t *a, const ingot_sim_result_t *r)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "ingot-sim: --svg %s: %s\n", path, strerror(errno));
        return -1;
    }
    double top = 0;
    for (uint64_t e = 0; e < r->nepochs; e++) {
        double sum = 0;
        for (size_t k = 0; k < PLOT_NTIERS; k++) {
            sum += plot_gib(r->epochs[e].bytes[plot_tiers[k].from]);
        }
        top = sum > top ? sum : top;
    }
    top = top > 0 ? top * 1.1 : 1;
    fprintf(f,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
            PLOT_W, PLOT_H);
    plot_axes(f, top, a->cluster.nodes, r->world);
    double w = PLOT_W - PLOT_LEFT - PLOT_RIGHT, h = PLOT_H - PLOT_TOP - PLOT_BOTTOM;
    double slot = w / (double)(r->nepochs ? r->nepochs : 1);
    fprintf(f, "<polyline fill='none' stroke='black' stroke-width='2' points='");
    for (uint64_t e = 0; e < r->nepochs; e++) {
        fprintf(f, "%.1f,%.1f ", PLOT_LEFT + slot * ((double)e + 0.5),
                PLOT_TOP + h - h * r->epochs[e].au);
    }
    fprintf(f, "'/>\n");
    for (uint64_t e = 0; e < r->nepochs; e++) {
        double x = PLOT_LEFT + slot * (double)e + slot * 0.2, y = PLOT_TOP + h;
        for (size_t k = 0; k < PLOT_NTIERS; k++) {
            double bh = h * plot_gib(r->epochs[e].bytes[plot_tiers[k].from]) / top;
            y -= bh;
            fprintf(f,
                    "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' "
                    "fill-opacity='0.7'/>\n",
                    x, y, slot * 0.6, bh, plot_tiers[k].color);
        }
        fprintf(f,
                "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>epoch %" PRIu64
                " (%.3g s)</text>\n",
                PLOT_LEFT + slot * ((double)e + 0.5), PLOT_TOP + h + 16, e, r->epochs[e].wall_s);
    }
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "ingot-sim: --svg %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}
