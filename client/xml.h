/*
 * Just enough XML for S3's answers (xml.c): the text of an element (entities decoded) inside a
 * bounded, NUL-terminated body. S3 bodies are flat and machine-written: <Error><Code>..</Code>
 * ..</Error>, and ListBucketResult's repeated <Contents> blocks. No attributes are read, no DTD
 * or CDATA is honoured (S3 writes neither).
 */
#ifndef INGOT_CLIENT_XML_H
#define INGOT_CLIENT_XML_H

#include <stddef.h>

/**
 * Find the first <@p tag>...</@p tag> in [@p begin, @p end) and return a pointer to its text,
 * with *len_p its raw length (entities not yet decoded) and *after_p just past the closing tag.
 * Returns NULL when absent.
 */
const char *ingot_objstore_xml_find(const char *begin, const char *end, const char *tag,
                                    size_t *len_p, const char **after_p);

/**
 * Copy the text of the first <@p tag> in [@p begin, @p end) into @p out (room @p outlen,
 * truncated), decoding &amp; &lt; &gt; &quot; &apos; and &#N; / &#xN; (ASCII only).
 * @return 0, or -1 when the element is absent (@p out is then "").
 */
int ingot_objstore_xml_text(const char *begin, const char *end, const char *tag, char *out,
                            size_t outlen);

#endif
