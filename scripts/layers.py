#!/usr/bin/env python3
"""The layer check: calls go downward only, and functions stay short.

tests/layers.txt lists, for each folder, its layers from the top down:

    userspace/engine: api = obj.c qp.c
    userspace/engine: core = engine.c

From `nm` of the built objects (OBJ/FOLDER/FILE.o) this finds, for every
file of a listed folder, the global functions it uses that another file of
the same folder defines, and fails when

  - a file calls a function of a file in a higher layer;
  - the file-to-file calls inside a folder form a cycle (files of one
    layer may call each other, but not round in a circle);
  - a .c file of a listed folder is in no layer, or a listed one is missing.

Separately it fails on any function in userspace/, tools/ or bpf/ longer
than MAX_LINES (150) lines, counted from the line that names it to its
closing brace, except the ones a `long:` line of the same file names
(`long: FILE:FUNCTION  why`).

Usage: layers.py [--layers FILE] [--obj DIR] [--root DIR] [--max-lines N]
Exit 0 when everything holds, 1 with one line per fault otherwise.
"""

import argparse
import os
import re
import subprocess
import sys

LONG_DIRS = ("userspace", "tools", "bpf")
LAYER_RE = re.compile(r"^(\S+):\s*(\S+)\s*=\s*(.*)$")
LONG_RE = re.compile(r"^long:\s*(\S+):(\w+)\b")
IDENT_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")


def read_layers(path):
    """{folder: [(layer, [files])]} top first, and the allowed long functions."""
    folders, long_ok, faults = {}, set(), []
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = LONG_RE.match(line)
            if m:
                long_ok.add((m.group(1), m.group(2)))
                continue
            m = LAYER_RE.match(line)
            if not m:
                faults.append(f"{path}:{n}: not 'FOLDER: LAYER = FILE.c ...': {line}")
                continue
            folder, layer, files = m.group(1).rstrip("/"), m.group(2), m.group(3).split()
            folders.setdefault(folder, []).append((layer, files))
    return folders, long_ok, faults


def nm_symbols(obj):
    """(defined global functions, undefined symbols) of one object."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("T", "W"):
            defined.add(name)
        elif kind == "U":
            used.add(name)
    return defined, used


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycle_path(graph, comp):
    """One cycle through a component, as 'a.c -> b.c -> a.c'."""
    members, start = set(comp), comp[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w in seen]
        if back:
            i = path.index(back[0])
            return " -> ".join(path[i:] + [back[0]])
        nxt = [w for w in nxt if w not in seen]
        path.append(nxt[0])
        seen.add(nxt[0])


def check_folder(folder, layers, root, obj_root):
    faults = []
    rank, seen = {}, set()
    for i, (layer, files) in enumerate(layers):
        for f in files:
            if f in rank:
                faults.append(f"{folder}: {f} is listed twice")
            rank[f] = (i, layer)
    src = os.path.join(root, folder)
    present = {f for f in os.listdir(src) if f.endswith(".c")} if os.path.isdir(src) else set()
    for f in sorted(present - set(rank)):
        faults.append(f"{folder}: {f} is in no layer (tests/layers.txt)")
    for f in sorted(set(rank) - present):
        faults.append(f"{folder}: {f} is listed but does not exist")

    owner, uses = {}, {}
    for f in sorted(set(rank) & present):
        obj = os.path.join(obj_root, folder, f[:-2] + ".o")
        if not os.path.exists(obj):
            faults.append(f"{folder}: {obj} is not built (run make first)")
            continue
        defined, used = nm_symbols(obj)
        for s in defined:
            owner[s] = f
        uses[f] = used
        seen.add(f)

    graph = {f: set() for f in seen}
    for f in sorted(seen):
        up = {}
        for s in uses[f]:
            g = owner.get(s)
            if g is None or g == f:
                continue
            graph[f].add(g)
            if rank[g][0] < rank[f][0]:
                up.setdefault(g, []).append(s)
        for g, syms in sorted(up.items()):
            faults.append(
                f"{folder}: {f} ({rank[f][1]}) calls up into {g} ({rank[g][1]}): "
                + " ".join(sorted(syms))
            )
    for comp in cycles(graph):
        faults.append(f"{folder}: files call each other in a cycle: {cycle_path(graph, comp)}")
    return faults


def functions(path):
    """(name, first line, length) of each function of a kernel-style C file:
    the body's braces in column 0, the line naming it the first of its
    signature that starts in column 0."""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("{"):
            j = i - 1
            while j >= 0 and lines[j][:1] in (" ", "\t"):
                j -= 1
            if j < 0:
                i += 1
                continue
            sig = " ".join(lines[j:i])
            m = IDENT_RE.search(sig)
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and not sig.lstrip().startswith("#"):
                out.append((m.group(1), j + 1, k - j + 1))
            i = k
        i += 1
    return out


def check_long(root, max_lines, long_ok):
    faults, found = [], set()
    for top in LONG_DIRS:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                for fn, line, n in functions(path):
                    if n <= max_lines:
                        continue
                    if (rel, fn) in long_ok:
                        found.add((rel, fn))
                        continue
                    faults.append(f"{rel}:{line}: {fn}() is {n} lines (at most {max_lines})")
    for rel, fn in sorted(long_ok - found):
        faults.append(f"long: {rel}:{fn} is no longer over {max_lines} lines: drop its line")
    return faults


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", default="tests/layers.txt")
    ap.add_argument("--obj", default=os.path.join(os.environ.get("BUILD", "build"), "obj"))
    ap.add_argument("--root", default=".")
    ap.add_argument("--max-lines", type=int, default=150)
    a = ap.parse_args()

    folders, long_ok, faults = read_layers(a.layers)
    for folder, layers in folders.items():
        faults += check_folder(folder, layers, a.root, a.obj)
    faults += check_long(a.root, a.max_lines, long_ok)
    for f in faults:
        print(f)
    if faults:
        print(f"layers: {len(faults)} fault(s)")
        return 1
    print(f"layers: {len(folders)} folder(s) hold their layers; no function over {a.max_lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
