/* Consumer of an installed ingot: init (ingot brings MPI up), query, finalize. */
#include <ingot/ingot.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    ingot_ctx_h ctx;
    ingot_ctx_attr_t attr = {.field_mask = INGOT_CTX_ATTR_FIELD_RANK | INGOT_CTX_ATTR_FIELD_SIZE};
    if (strcmp(ingot_version_string(), INGOT_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s != library %s\n", INGOT_VERSION_STRING, ingot_version_string());
        return 1;
    }
    if (ingot_init(NULL, &ctx) != INGOT_OK || ingot_ctx_query(ctx, &attr) != INGOT_OK) {
        return 1;
    }
    printf("consumer: ingot %s, rank %d of %d\n", ingot_version_string(), attr.rank, attr.size);
    ingot_finalize(ctx);
    return 0;
}
