/*
 * The resume cursor's bytes (cursor.c): encoded for ingot_cursor_write() and checked and decoded
 * for ingot_cursor_read(), without the file around them; also the fuzz target's entry points.
 */
#ifndef INGOT_SHARD_CURSOR_H
#define INGOT_SHARD_CURSOR_H

#include <ingot/order.h>
#include <stddef.h>
#include <stdint.h>

/**
 * The bytes of a cursor file (format INGOT_CURSOR_VERSION) holding @p c, into *@p buf_p
 * (malloc'd, *@p len_p bytes). @p c is not checked (ingot_cursor_write() checks it).
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY (logged).
 */
ingot_status_t ingot_cursor_encode(const ingot_cursor_t *c, uint8_t **buf_p, size_t *len_p);

/**
 * Check @p len bytes at @p buf as the cursor file @p path (named in messages) and, unless
 * @p expect is NULL, against the resuming job; decode them into *@p cursor_p (written only on
 * success; release it with ingot_cursor_release()).
 * @return the errors of ingot_cursor_read() but INGOT_ERR_NOT_FOUND and INGOT_ERR_IO, logged.
 */
ingot_status_t ingot_cursor_decode(const char *path, const uint8_t *buf, size_t len,
                                   const ingot_cursor_expect_t *expect, ingot_cursor_t *cursor_p);

#endif
