/*
 * The object store's part cache table (INGOT_S3_CACHE): its user is the byte source's part
 * cache, not the client. Parsed once into its type: "auto", "off", a size of each loader's own
 * part cache, or a size per node ("SIZE/node": the part cache the node's ranks share).
 */
#include "source/objstore/objstore_source.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_parts_config_t, _field)

/* The size part of INGOT_S3_CACHE, parsed as every INGOT_* size. */
static const ingot_config_field_t parts_size_field = {
    .name = "S3_CACHE", .dfl = "0", .type = INGOT_CONFIG_SIZE, .max = INT64_MAX};

static int parts_parse(const char *spec, void *value, char *err, size_t errlen)
{
    ingot_parts_budget_t *b = value;
    *b = (ingot_parts_budget_t){0};
    snprintf(b->given, sizeof(b->given), "%s", spec);
    if (strcmp(spec, "auto") == 0 || strcmp(spec, "off") == 0) {
        b->is_auto = spec[0] == 'a';
        return 0;
    }
    if (ingot_config_parse_size_per(&parts_size_field, "/node", spec, &b->bytes, &b->per_node) !=
        0) {
        snprintf(err, errlen, "neither auto, off, a size nor a size per node");
        return -1;
    }
    return 0;
}

static void parts_format(const void *value, char *buf, size_t len)
{
    const ingot_parts_budget_t *b = value;
    if (b->is_auto || b->bytes == 0)
        snprintf(buf, len, "%s", b->is_auto ? "auto" : "off");
    else
        ingot_config_format_size_per(&parts_size_field, "/node", b->bytes, b->per_node, buf, len);
}

static const ingot_config_codec_t parts_codec = {
    .parse = parts_parse,
    .format = parts_format,
    .syntax = "auto, off, a size per loader (e.g. 512MiB) or per node (e.g. 2GiB/node)",
    .size = sizeof(ingot_parts_budget_t)};

/* clang-format off */
static const ingot_config_field_t parts_fields[] = {
    {"S3_CACHE", "auto",
     "The loader's part cache over an object store: parts of INGOT_S3_PART_SIZE fetched once "
     "and kept while the samples they hold are read over many steps. 'auto': under the locality "
     "order (INGOT_ORDER=window:N), one part cache per node shared by its ranks, room for N + 2 "
     "of the largest shards (at most 2GiB) for each canonical node the node reads; under the "
     "global order none (its samples are scattered: each read is its own ranged GET, whose "
     "bytes go straight into the batch). A size per node ('2GiB/node'): that cache, shared by "
     "the node's ranks (refused when it cannot hold one window's parts). 'off', or a size: each "
     "loader's own part cache. Pre-faulted at create.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_TYPED, F(budget), 0, 0, NULL, NULL, &parts_codec, NULL},
};
/* clang-format on */

/* Just after the client's table, where INGOT_S3_CACHE stood in ingot-info -c. */
INGOT_CONFIG_MODULE(ingot_parts, "parts", INGOT_CONFIG_ORDER_RUNTIME - 4, parts_fields,
                    ingot_parts_config_t, NULL)
