/* Element text out of S3's XML answers (see xml.h). */
#include "client/xml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *find_in(const char *begin, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = begin; p + n <= end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (p == NULL || p + n > end) return NULL;
        if (memcmp(p, needle, n) == 0) return p;
    }
    return NULL;
}

const char *ingot_objstore_xml_find(const char *begin, const char *end, const char *tag,
                                    size_t *len_p, const char **after_p)
{
    char open[80], close[80];
    if (snprintf(open, sizeof(open), "<%s>", tag) >= (int)sizeof(open)) return NULL;
    snprintf(close, sizeof(close), "</%s>", tag);
    const char *text = find_in(begin, end, open);
    if (text == NULL) return NULL;
    text += strlen(open);
    const char *stop = find_in(text, end, close);
    if (stop == NULL) return NULL;
    *len_p = (size_t)(stop - text);
    if (after_p != NULL) *after_p = stop + strlen(close);
    return text;
}

/* Decode the entity at @p p (after '&'); returns its character and sets *skip_p, or -1. */
static int entity(const char *p, const char *end, size_t *skip_p)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        size_t n = strlen(named[i].name);
        if ((size_t)(end - p) >= n && memcmp(p, named[i].name, n) == 0) {
            *skip_p = n;
            return named[i].c;
        }
    }
    if (p < end && *p == '#') {
        char *stop = NULL;
        int hex = (p + 1 < end && (p[1] == 'x' || p[1] == 'X'));
        long v = strtol(p + 1 + hex, &stop, hex ? 16 : 10);
        if (stop < end && *stop == ';' && v > 0 && v < 128) {
            *skip_p = (size_t)(stop + 1 - p);
            return (int)v;
        }
    }
    return -1;
}

int ingot_objstore_xml_text(const char *begin, const char *end, const char *tag, char *out,
                            size_t outlen)
{
    size_t len = 0, n = 0;
    const char *text = ingot_objstore_xml_find(begin, end, tag, &len, NULL);
    if (outlen > 0) out[0] = '\0';
    if (text == NULL) return -1;
    for (const char *p = text; p < text + len && n + 1 < outlen; p++) {
        size_t skip = 0;
        int c = (*p == '&') ? entity(p + 1, text + len, &skip) : -1;
        out[n++] = c >= 0 ? (char)c : *p;
        p += skip;
    }
    if (outlen > 0) out[n] = '\0';
    return 0;
}
