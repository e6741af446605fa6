#!/usr/bin/env python3
"""file_calls.py OBJ_DIR [LABEL]: the file-level call graph of the object files in OBJ_DIR (a file
calls another when it uses a global symbol the other defines, as nm tells) and its cycles. Exit 1
naming every cycle found (a loop of files calling each other: the room has no direction), 0 when
the graph is a DAG, with its edges printed."""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True,
                         check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, used


def cycles(graph):
    found, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return found


def main():
    obj_dir, label = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    objs = sorted(f for f in os.listdir(obj_dir) if f.endswith(".o"))
    if len(objs) < 2:
        print(f"FAIL: fewer than two object files in {obj_dir}")
        return 1
    name = {o: o[:-2] for o in objs}
    syms = {o: symbols(os.path.join(obj_dir, o)) for o in objs}
    owner = {s: o for o in objs for s in syms[o][0]}
    graph = {name[o]: {name[owner[s]] for s in syms[o][1] if s in owner and owner[s] != o}
             for o in objs}
    loops = cycles(graph)
    for a in sorted(graph):
        print(f"{label}: {a} -> {', '.join(sorted(graph[a])) or '(none)'}")
    if loops:
        for c in loops:
            print("FAIL: call loop " + " -> ".join(c))
        return 1
    print(f"{label}: {len(objs)} files, no call loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
