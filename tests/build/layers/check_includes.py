#!/usr/bin/env python3
"""Layering check: every #include of the library and the apps points down, never up or sideways.

The layers (DESIGN.md, docs/architecture.md), lowest first, each with the layers below it:
    base  <-  topology, shard  <-  transport (base, topology)  <-  source (+ shard, transport,
    client);  client (base; beside the transport)  <-  source, runtime;
    collectives (base)  <-  runtime (all)  <-  apps (the public API)
A file in a layer may include its own layer's headers ("shard/tar.h" from shard/), the headers of
the layers below it (BELOW, as cmake/layers.cmake links them), public headers (<ingot/...>) and
system headers. Public headers (include/ingot) may
include only public and system headers; apps only public, system and their own (apps/...) ones.
Inside base, modules (a .c and its .h) must not include each other in a cycle.

usage: check_includes.py ROOT      exit 0 when clean; 1 with one line per violation, file:line
"""
import os
import re
import sys

# Each layer and the layers below it (the BELOW lists of the layers' CMakeLists.txt).
BELOW = {
    "base": set(),
    "topology": {"base"},
    "shard": {"base"},
    "transport": {"base", "topology"},
    "client": {"base"},
    "source": {"base", "topology", "shard", "transport", "client"},
    "collectives": {"base"},
    "runtime": {"base", "topology", "shard", "transport", "client", "source", "collectives"},
    "apps": set(),
}
LAYERS = set(BELOW)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield lineno, m.group(1), m.group(2)


def allowed(layer, quote, target):
    """None when `target` may be included from `layer`, else why not."""
    top = target.split("/", 1)[0]
    if quote == "<":
        return None if top not in LAYERS else "a layer header included as a system header"
    if layer == "include":
        return "a public header includes an internal header"
    if layer == "apps":
        return None if top == "apps" or top not in LAYERS else "apps use the public API only"
    if top not in LAYERS:
        return "not under a layer folder (write it as \"<layer>/<file>.h\")"
    if top == layer or top in BELOW[layer]:
        return None
    return "%s is %s %s" % (top, "above" if layer in BELOW[top] else "beside", layer)


def sources(root, folder):
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(dirpath, name)


def base_cycles(root, edges):
    """Cycles between base modules (config.c + config.h = module 'config')."""
    found, state = [], {}

    def visit(node, stack):
        state[node] = 1
        for nxt, where in sorted(edges.get(node, {}).items()):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                found.append((where, " -> ".join(cycle)))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return found


def main(root):
    bad = []
    base_edges = {}
    for layer in list(LAYERS) + ["include"]:
        for path in sources(root, layer):
            rel = os.path.relpath(path, root)
            for lineno, quote, target in includes(path):
                why = allowed(layer, quote, target)
                if why:
                    bad.append("%s:%d: #include %s%s%s: %s" % (
                        rel, lineno, quote, target, '"' if quote == '"' else ">", why))
                if layer == "base" and quote == '"' and target.startswith("base/"):
                    src = os.path.splitext(os.path.basename(path))[0]
                    dst = os.path.splitext(os.path.basename(target))[0]
                    if src != dst:
                        base_edges.setdefault(src, {}).setdefault(dst, "%s:%d" % (rel, lineno))
    for where, cycle in base_cycles(root, base_edges):
        bad.append("%s: include cycle between base modules: %s" % (where, cycle))
    for line in bad:
        print(line)
    print("%d layering violation(s)" % len(bad) if bad else "layering: clean")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
