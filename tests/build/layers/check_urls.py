#!/usr/bin/env python3
"""URL check: one place in the library decides whether a string is a URL and takes it apart.

That place is base/location.c (ingot_location_parse, ingot_location_is_url). Anywhere else in the
library, a string literal that is a URL's scheme ("s3://", "http://", "https://", "://", any case)
or a comparison against one (strncmp(path, "s3://", 5), strncasecmp(dir, "http", 4),
strstr(path, "://")) is a second decision that can disagree with the first, and is named here
(file:line). Comments are not read. Tests and docs are not scanned; nor are the apps, which see
only the public API (include/ingot) and so cannot call the parser.

usage: check_urls.py ROOT      exit 0 when clean; 1 with one line per place
"""
import os
import re
import sys

FOLDERS = ["base", "topology", "shard", "transport", "client", "source", "collectives", "runtime",
           "include", "python"]
PARSER = os.path.join("base", "location.c")
SCHEME = r'(?:s3|https?)'
LITERAL = re.compile(r'"(?:%s)?://"' % SCHEME, re.IGNORECASE)
COMPARE = re.compile(r'\b(?:strn?cmp|strn?casecmp|memcmp|strstr|strcasestr)\s*\([^;]*?'
                     r'"(?:%s(?::/?/?)?|://)"' % SCHEME, re.IGNORECASE)
COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.DOTALL)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def code_lines(path):
    """The file's lines with its comments blanked (line numbers kept)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    out, pos = [], 0
    # Blank comments, but not "//" or "/*" inside string literals.
    for m in re.finditer(r'%s|%s' % (STRING.pattern, COMMENT.pattern), text, re.DOTALL):
        out.append(text[pos:m.start()])
        piece = m.group(0)
        out.append(piece if piece.startswith('"') else re.sub(r'[^\n]', ' ', piece))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out).split("\n")


def main(root):
    bad = []
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel == PARSER:
                    continue
                for lineno, line in enumerate(code_lines(path), 1):
                    m = COMPARE.search(line) or LITERAL.search(line)
                    if m:
                        bad.append("%s:%d: %s: a URL told apart outside %s (use "
                                   "ingot_location_parse / ingot_location_is_url, or the manifest's "
                                   "location)" % (rel, lineno, m.group(0).strip(), PARSER))
    for line in bad:
        print(line)
    print("%d URL test(s) outside the parser" % len(bad) if bad else "URLs: one parser")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
