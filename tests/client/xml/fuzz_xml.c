/*
 * Fuzz target: the client's XML reading (client/xml.h) over arbitrary bodies, as a server could
 * answer: every <Contents> block of a listing walked, and the elements S3's answers carry read
 * into a small and a large buffer. Whatever it finds lies inside the body, and every text copied
 * is NUL-terminated within its buffer.
 */
#include "client/xml.h"
#include "common/fuzz.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_BODY_MAX (64u << 10)

static void read_elements(const char *begin, const char *end)
{
    static const char *const tags[] = {"Code",       "Message", "Region", "Endpoint",
                                       "Key",        "Size",    "ETag",   "NextContinuationToken",
                                       "IsTruncated"};
    char small[8], large[1100];
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        int a = ingot_objstore_xml_text(begin, end, tags[i], small, sizeof(small));
        int b = ingot_objstore_xml_text(begin, end, tags[i], large, sizeof(large));
        if (a != b || memchr(small, '\0', sizeof(small)) == NULL ||
            memchr(large, '\0', sizeof(large)) == NULL || (a != 0 && (small[0] || large[0]))) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_BODY_MAX) return 0;
    char *body = fuzz_cstr(data, size); /* the client's bodies are NUL-terminated */
    if (body == NULL) return 0;
    const char *end = body + size, *p = body, *after, *text;
    size_t len;
    read_elements(body, end);
    while ((text = ingot_objstore_xml_find(p, end, "Contents", &len, &after)) != NULL) {
        if (text < p || text + len > end || after > end || after <= p) abort();
        read_elements(text, text + len);
        p = after;
    }
    free(body);
    return 0;
}
