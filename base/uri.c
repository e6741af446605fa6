/* Percent-encoding of URI paths and query values (see uri.h). */
#include "base/uri.h"

static int is_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

size_t ingot_uri_encode(const char *in, size_t len, int keep_slash, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
        int plain = is_unreserved(c) || (keep_slash && c == '/');
        const char *src = plain ? (const char *)&in[i] : esc;
        size_t k = plain ? 1 : 3;
        for (size_t j = 0; j < k; j++, n++) {
            if (n + 1 < outlen) out[n] = src[j];
        }
    }
    if (outlen > 0) out[n < outlen ? n : outlen - 1] = '\0';
    return n;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ingot_uri_decode(const char *in, int plus_is_space, char *out)
{
    size_t n = 0;
    for (const char *p = in; *p != '\0'; p++) {
        if (*p == '%') {
            int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
            if (hi < 0 || lo < 0) return -1;
            out[n++] = (char)(hi * 16 + lo);
            p += 2;
        } else {
            out[n++] = (plus_is_space && *p == '+') ? ' ' : *p;
        }
    }
    out[n] = '\0';
    return 0;
}
