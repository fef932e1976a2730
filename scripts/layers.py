#!/usr/bin/env python3
"""The layers of lib/ (docs/design.md), checked from the sources and the
objects: which directory may use which, and no circle of calls.

  scripts/layers.py [BUILD]      (make layers; part of make check)

1. Includes: a file of lib/D includes only headers of D and of the
   directories below D in LAYERS, and never another directory's
   internal.h (nor, outside lib/poly, lib/poly/internal.h).
2. Calls (nm over BUILD/obj/lib): no two directories call each other and
   no circle of calls runs through several files: the graph of files, by
   defined and undefined symbols, has no cycle but a file's calls to
   itself.
Prints one line per violation and "layers: N violations"; exits 1 when
there is any.
"""
import os
import re
import subprocess
import sys

# Each directory of lib/ with its level: a directory may use only those
# of lower levels (so siblings such as tile, mma, smem and codegen never
# use each other).
LAYERS = {
    "core": 0, "plan": 0,
    "sass": 1,
    "target": 1, "ir": 1,
    "driver": 2, "poly": 2, "onnx": 2,
    "kernel": 3, "fuse": 3, "tileir": 3,
    "tile": 4, "mma": 4, "smem": 4, "codegen": 4,
    "pipeline": 5,
    "runtime": 6,
}

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
lib = os.path.join(root, "lib")
bad = []


def allowed(src, dst):
    return src == dst or LAYERS.get(dst, 99) < LAYERS.get(src, -1)


for d in sorted(os.listdir(lib)):
    if d not in LAYERS:
        bad.append(f"lib/{d}: a directory with no layer (scripts/layers.py)")
        continue
    for f in sorted(os.listdir(os.path.join(lib, d))):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join("lib", d, f)
        for n, line in enumerate(open(os.path.join(root, path)), 1):
            m = re.match(r'\s*#\s*include\s+"(\w+)/([\w.]+)"', line)
            if not m or m.group(1) == "mlir-c":
                continue
            dst, hdr = m.groups()
            if dst not in LAYERS:
                continue
            if not allowed(d, dst):
                bad.append(f"{path}:{n}: lib/{d} (layer {LAYERS[d]}) "
                           f"includes lib/{dst} (layer {LAYERS[dst]})")
            elif dst != d and hdr == "internal.h":
                bad.append(f"{path}:{n}: includes lib/{dst}'s internal.h")

# The call graph of files from the objects.
defs, uses = {}, {}
objdir = os.path.join(build, "obj", "lib")
for d in sorted(os.listdir(objdir)) if os.path.isdir(objdir) else []:
    for f in sorted(os.listdir(os.path.join(objdir, d))):
        if not f.endswith(".o"):
            continue
        name = f"lib/{d}/{f[:-2]}.c"
        if not os.path.exists(os.path.join(root, name)):
            continue  # a stale object of a removed source
        out = subprocess.run(["nm", os.path.join(objdir, d, f)],
                             capture_output=True, text=True).stdout
        uses[name] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defs[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                uses[name].add(parts[1])
if not uses:
    bad.append(f"{objdir}: no objects (build first)")
edges = {f: {defs[s] for s in syms if s in defs and defs[s] != f}
         for f, syms in uses.items()}
for f, tos in edges.items():
    d = f.split("/")[1]
    for t in tos:
        e = t.split("/")[1]
        if not allowed(d, e):
            bad.append(f"{f}: lib/{d} (layer {LAYERS.get(d)}) calls "
                       f"{t} (lib/{e}, layer {LAYERS.get(e)})")

# Circles of files (Tarjan's strongly connected components).
index, low, stack, on, comps = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(edges.get(v, ())):
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
            comps.append(sorted(comp))


sys.setrecursionlimit(10000)
for v in sorted(edges):
    if v not in index:
        visit(v)
for c in comps:
    bad.append("a circle of calls between " + ", ".join(c))

for b in bad:
    print(b)
print(f"layers: {len(bad)} violations")
sys.exit(1 if bad else 0)
