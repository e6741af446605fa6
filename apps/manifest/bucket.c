/*
 * ingot-manifest build s3://BUCKET/PREFIX/: a manifest over the shards in a bucket, through the
 * public ingot_store_manifest_build() (one LIST, a GET per shard, the manifest PUT beside them).
 */
#include "manifest/cli.h"
#include "common/cli.h"
#include <ingot/store.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cli_build_bucket(const cli_args_t *a)
{
    if (a->npos != 1 || a->dict_file != NULL) {
        return cli_usage("%s", a->npos != 1 ? "build over a bucket takes one s3:// prefix"
                                            : "build over a bucket takes no --dict");
    }
    ingot_store_build_params_t p = {
        .field_mask = INGOT_STORE_BUILD_PARAM_FIELD_PREFIX | INGOT_STORE_BUILD_PARAM_FIELD_SPECIAL,
        .prefix = a->pos[0],
        .special = a->reject_special ? INGOT_TAR_SPECIAL_REJECT : INGOT_TAR_SPECIAL_SKIP};
    if (a->out != NULL) {
        p.field_mask |= INGOT_STORE_BUILD_PARAM_FIELD_MANIFEST;
        p.manifest = a->out;
    }
    if (a->labels != NULL) {
        p.field_mask |= INGOT_STORE_BUILD_PARAM_FIELD_LABELS;
        p.label_path = a->labels;
    }
    ingot_store_build_report_t r;
    if (ingot_store_manifest_build(&p, &r) != INGOT_OK) {
        return CLI_EXIT_FAIL;
    }
    printf("%s%s%s: %" PRIu64 " shards (%" PRIu64 " bytes), %" PRIu64 " samples; %" PRIu64
           " objects left out; %" PRIu64 " LIST, %" PRIu64 " GET requests; manifest %" PRIu64
           " bytes\n",
           a->out ? a->out : a->pos[0],
           a->out ? "" : (a->pos[0][strlen(a->pos[0]) - 1] == '/' ? "" : "/"),
           a->out ? "" : "manifest.ingot", r.shards, r.bytes, r.samples, r.skipped, r.list_requests,
           r.get_requests, r.manifest_bytes);
    return 0;
}
