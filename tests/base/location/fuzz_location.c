/*
 * Fuzz target: the one parser of paths and URLs (base/location.h). Input: one byte of flags, the
 * rest the text. A parsed location must hold together: its key is its text's tail, its folder
 * and a name joined under it parse again to the same scheme and key; the endpoint check and the
 * copy must not crash, overflow or leak on anything.
 */
#include "base/location.h"
#include "common/fuzz.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_TEXT_MAX 2048

/* The folder of @p loc and a name under it: parsed again, the same scheme and key. */
static void check_join(const ingot_location_t *loc)
{
    ingot_location_t dir, child, again;
    if (ingot_location_dir(loc, &dir) != INGOT_OK) abort();
    if (ingot_location_join(&dir, "s p+%\xc3\xa9.tar", &child) == INGOT_OK) {
        if (ingot_location_parse(child.text, 0, &again) != INGOT_OK) abort();
        if (again.scheme != child.scheme ||
            (child.key != NULL && strcmp(again.key, child.key) != 0)) {
            abort();
        }
        ingot_location_release(&again);
        ingot_location_release(&child);
    } else if (loc->scheme != INGOT_LOCATION_S3) {
        abort(); /* only an s3 key can grow too long */
    }
    ingot_location_release(&dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > FUZZ_TEXT_MAX) return 0;
    char text[FUZZ_TEXT_MAX + 1];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    unsigned flags = data[0] & (INGOT_LOCATION_URL | INGOT_LOCATION_OBJECT);
    char *base = NULL;
    if (ingot_location_endpoint_check(text, "fuzz", &base) == INGOT_OK) free(base);
    ingot_location_t loc, copy;
    if (ingot_location_parse(text, flags, &loc) != INGOT_OK) {
        if (!ingot_location_is_url(text) && !(flags & INGOT_LOCATION_URL)) abort();
        return 0;
    }
    if (strcmp(loc.text, text) != 0 ||
        ingot_location_is_remote(&loc) != ingot_location_is_url(text)) {
        abort();
    }
    size_t tl = strlen(loc.text), kl = loc.key != NULL ? strlen(loc.key) : 0;
    if (loc.key != NULL && (kl > tl || strcmp(loc.text + tl - kl, loc.key) != 0)) abort();
    if (ingot_location_identify(&loc, "e", "r", "c") != INGOT_OK ||
        ingot_location_copy(&loc, &copy) != INGOT_OK) {
        abort();
    }
    check_join(&copy);
    ingot_location_release(&copy);
    ingot_location_release(&loc);
    return 0;
}
