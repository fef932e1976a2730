"""The loops of a cubin's SASS and what runs in them: for `bench/tileir.sh`.

Usage: tileir_sass.py NVDISASM CUBIN LABEL

Disassembles CUBIN (nvdisasm -c), finds its loops (a branch back to an
earlier label), and prints one Markdown table row per kernel for the loop
with the most tensor-core instructions (or the largest loop when none
has any): its instructions, HGMMA/HMMA, TMA loads (UTMALDG), asynchronous
copies (LDGSTS), ldmatrix (LDSM), plain global loads (LDG) and shared
loads (LDS), and the same counts over the whole kernel."""
import re
import subprocess
import sys

KINDS = [("HGMMA", r"\bHGMMA\."), ("HMMA", r"\bHMMA\."),
         ("UTMALDG", r"\bUTMALDG\b"), ("LDGSTS", r"\bLDGSTS\b"),
         ("LDSM", r"\bLDSM\b"), ("LDG", r"\bLDG\b"), ("LDS", r"\bLDS\b")]

tool, cubin, label = sys.argv[1:4]
text = subprocess.run([tool, "-c", cubin], check=True, capture_output=True,
                      text=True).stdout
kernels = {}
cur = None
for line in text.split("\n"):
    m = re.match(r"\s*\.text\.(\S+):", line)
    if m:
        cur = m.group(1)
        kernels[cur] = []
        continue
    if cur is None:
        continue
    lab = re.match(r"\s*(\.L_x_\d+):", line)
    if lab:
        kernels[cur].append(("label", lab.group(1)))
        continue
    ins = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
    if ins:
        kernels[cur].append(("ins", ins.group(1)))


def counts(ins):
    return [sum(1 for i in ins if re.search(p, i)) for _, p in KINDS]


for name, items in kernels.items():
    pos = {}
    ins = []
    for kind, v in items:
        if kind == "label":
            pos[v] = len(ins)
        else:
            ins.append(v)
    loops = []
    for k, i in enumerate(ins):
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", i)
        if m and m.group(1) in pos and pos[m.group(1)] <= k:
            loops.append(ins[pos[m.group(1)]:k + 1])
    best = max(loops, key=lambda l: (counts(l)[0] + counts(l)[1], len(l)),
               default=[])
    c, t = counts(best), counts(ins)
    print("| %s | %s | %d | %s | %d | %s |" % (
        label, name[:40], len(best), " | ".join(str(x) for x in c),
        len(ins), " ".join("%s %d" % (k, x) for (k, _), x in zip(KINDS, t) if x)))
