/*
 * Copies out of a file's read-only shared mapping that survive the file shrinking under them.
 * A page of a mapping past its file's end raises SIGBUS on access; a copy made here turns that
 * into an error instead: a process-wide SIGBUS handler (installed at the first copy, chaining to
 * the handler it replaced for faults anywhere else) jumps back out of the copy of the thread
 * that faulted. Thread-safe; no allocation; one sigsetjmp per copy (no system call).
 */
#ifndef INGOT_BASE_MAPPED_H
#define INGOT_BASE_MAPPED_H

#include <stddef.h>

/**
 * Copy @p len bytes from @p src, inside a file mapping, to @p dst.
 * @return 0; -1 when a page of @p src lies past its file's end (the file shrank after it was
 *         mapped): @p dst holds what was copied before it, nothing is logged.
 */
int ingot_mapped_copy(void *dst, const void *src, size_t len);

#endif
