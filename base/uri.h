/*
 * Percent-encoding (RFC 3986) of URI paths and query values: what an S3 request signs, and how a
 * name with a space, '+', '=', '%' or UTF-8 is written into an http(s) URL (the manifest's shard
 * names beside a manifest at a URL, the object store's keys).
 */
#ifndef INGOT_BASE_URI_H
#define INGOT_BASE_URI_H

#include <stddef.h>

/**
 * Percent-encode @p len bytes of @p in as S3 does for SigV4: RFC 3986 unreserved characters
 * (A-Z a-z 0-9 - _ . ~) kept, '/' kept when @p keep_slash (keys) and encoded otherwise (query
 * values), every other byte as %XX (upper-case hex): space, '+', '=', '%', UTF-8 bytes.
 * Writes at most @p outlen bytes including the NUL (truncating like snprintf).
 * @return the length the encoding needs, without the NUL.
 */
size_t ingot_uri_encode(const char *in, size_t len, int keep_slash, char *out, size_t outlen);

/**
 * Decode %XX escapes of @p in (and '+' as a space when @p plus_is_space: S3's encoding-type=url
 * listings) into @p out (room for strlen(in) + 1).
 * @return 0, or -1 for a malformed escape.
 */
int ingot_uri_decode(const char *in, int plus_is_space, char *out);

#endif
