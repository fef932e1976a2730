#!/usr/bin/env python3
"""The table of bench/static.sh from the pb-prof --static reports it left:

  static_table.py DIR ARCHS [--md]

DIR/<case>/static.<arch>.json for every case of bench/tile_cases.py and
DIR/triton/triton_{matmul_fp32,matmul_tf32,matmul_fp16,attention_fp16}_<arch>.static.json. One line per case
and arch: its main kernel (the longest predicted time; without
predictions the one whose hottest loop does the most flops), that
kernel's registers, spill bytes and occupancy, and its hottest inner
loop: instructions, math share of the issue slots (float math and
tensor-core instructions over all), FFMA and tensor-core (HMMA/HGMMA)
instructions, LDG, LDS, LDGSTS and LDSM counts (LDG and LDS as
32/64/128-bit), BAR, integer and FSEL instructions, flops per memory
instruction; the case's predicted time (sum over its kernels) and
kernels."""
import json
import os
import sys

COLS = ["case", "arch", "k", "main kernel", "regs", "spill", "occ", "insts",
        "math", "FFMA", "TC", "LDG 32/64/128", "LDS 32/64/128", "LDGSTS",
        "LDSM", "BAR", "INT", "FSEL", "flops/mem", "pred us"]


def main_kernel(ks):
    def key(k):
        loop = k.get("loop") or {}
        return (k.get("predicted_s") or 0, loop.get("flops", 0))
    return max(ks, key=key) if ks else None


def row(case, arch, path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return [case, arch, "-", "(no report)"] + ["-"] * (len(COLS) - 4)
    ks = d["kernels"]
    k = main_kernel(ks)
    px = k.get("ptxas") or {}
    loop = k.get("loop")
    occ = k.get("occupancy")
    pred = [x["predicted_s"] for x in ks if x.get("predicted_s") is not None]
    r = [case, arch, str(len(ks)), k["kernel"][:28],
         str(px.get("registers", "-")),
         str(px["spill_store_bytes"] + px["spill_load_bytes"]) if px else "-",
         f"{occ:.2f}" if occ is not None else "-"]
    if loop:
        c, w = loop["counts"], loop["widths"]

        def ws(n):
            return "/".join(str(x) for x in w.get(n, [0, 0, 0]))
        r += [str(loop["instructions"]), f"{loop['math_share']:.2f}",
              str(c.get("FFMA", 0)), str(c.get("MMA", 0) + c.get("GMMA", 0)),
              ws("LDG"), ws("LDS"), str(c.get("LDGSTS", 0)), str(c.get("LDSM", 0)),
              str(c.get("BAR", 0)), str(c.get("INT", 0)), str(c.get("FSEL", 0)),
              f"{loop['flops_per_memory']:.2f}"]
    else:
        r += ["(no loop)"] + ["-"] * 11
    r.append(f"{sum(pred) * 1e6:.1f}" if pred else "-")
    return r


def main():
    d, archs = sys.argv[1], sys.argv[2].split(",")
    md = "--md" in sys.argv[3:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tile_cases import CASES
    rows = []
    for arch in archs:
        for case in CASES:
            p = os.path.join(d, case, f"static.{arch}.json")
            if os.path.exists(p):
                rows.append(row(case, arch, p))
        for t in ("matmul_fp32", "matmul_tf32", "matmul_fp16", "attention_fp16"):
            p = os.path.join(d, "triton", f"triton_{t}_{arch}.static.json")
            if os.path.exists(p):
                rows.append(row(f"triton_{t}", arch, p))
    if md:
        print("| " + " | ".join(COLS) + " |")
        print("|" + "---|" * len(COLS))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    w = [max(len(r[i]) for r in rows + [COLS]) for i in range(len(COLS))]
    for r in [COLS] + rows:
        print("  ".join(x.ljust(w[i]) if i < 4 else x.rjust(w[i])
                        for i, x in enumerate(r)))


main()
