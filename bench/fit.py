#!/usr/bin/env python3
"""Fit the cost model's constants of a target description to measured
kernel times (bench/README.md, "fit.py").

    fit.py MEASURED.json [MORE.json ...] [--build DIR] [--write | --out FILE]
           [--jobs N] [--params a,b,...] [--prior W] [--quiet]

MEASURED.json is a "pb-measured 1" file (bench/measured/h200-*.json, or
the measured.json that bench/gpu-check.sh writes on a device): the target
description the times are for, how pb's stages rebuild the measured
kernels ("stages": extra options of pb-fuse and pb-tile, e.g. pb-tile's
--sizes of the run, so that the mapping is the measured one whatever the
constants), and per case its ONNX model, its total time and the times of
some of its kernels (by function and nest, as pb-tile's --report names
them).

The predictions come from pb's own tools: each case is imported and fused
once (pb-import | pb-fuse), then for every candidate set of constants
pb-tile runs with --report and --target-file a copy of the description
with those constants, on all the cases merged into one module (checked
once against a run per case): the script never computes a prediction
itself. One data point per measured kernel, and one per case for the
kernels not measured one by one (the case's total less the measured
kernels, against the sum of the others' predictions).

The fit minimises the sum over data points of log(predicted / measured)^2,
plus a weak pull (weight PRIOR, --prior) of every constant towards the
description's value in log space, so that a constant the data do not
constrain stays where it was. It searches one constant at a time (a
coarse scan of factors, then a golden-section refinement, in log space
within the range the constant can take on these GPUs, PARAMS), sweeping
until no constant moves. It reports the error before and after: the median of the ratios
predicted / measured and the worst ratio (the largest of ratio and
1/ratio), per point and overall, and which constants the data do not
constrain (no prediction changes when the constant is halved or doubled).

--write puts the fitted constants into targets/<target>.json ("model"
object and launch_s), with a "source" that says where they came from;
--out FILE writes that description to FILE instead.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The constants fitted, their defaults (lib/target/target.h,
# PB_TARGET_MODEL_DEFAULTS) and the range the fit searches: narrower than
# what the target reader accepts (lib/target/target.c), the values each
# can take on NVIDIA GPUs of sm_80 to sm_90 (L2 is 1.5 to 5 times DRAM's
# bandwidth, a streaming kernel reaches half of DRAM's peak or more, a
# global access issues as 1 to 32 FFMA slots, ...), so that a constant
# does not stand in for an effect the model lacks: one that ends at an
# edge of its range is reported. "model." ones are in the description's
# "model" object. The order is the order of the search.
PARAMS = {
    "model.mem_cycles": (1.0, 1, 32),
    "model.dram_efficiency": (1.0, 0.5, 1),
    "launch_s": (3e-6, 1e-6, 2e-5),
    "model.l2_over_dram": (2.5, 1.5, 5),
    "model.chain_cycles": (4.0, 2, 64),
    "model.hiding_occupancy": (0.25, 0.1, 1),
    "model.tree_step_cycles": (40.0, 10, 400),
}
PRIOR = 0.02


def die(msg):
    print("fit: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, stdin=None, cwd=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, cwd=cwd)
    if p.returncode:
        die("%s: %s" % (" ".join(cmd[:2]),
                        p.stderr.decode(errors="replace").strip()[:300]))
    return p.stdout


def onnx_of(case, tmp):
    """The ONNX file of a measured case: "from" is "ops" (bench/gen_cases.py),
    "tile" (bench/tile_cases.py), "models" (../shared/models), "node" (the
    ONNX node tests) or a path."""
    src, name = case.get("from", "ops"), case["case"]
    if src == "node":
        p = os.path.join(os.environ.get("PB_ONNXDATA", "/usr/share/libonnx-testdata/data/node"),
                         name, "model.onnx")
    elif src == "models":
        p = os.path.join(os.environ.get("PB_MODELS", os.path.join(ROOT, "..", "shared", "models")),
                         name + ".onnx")
    elif src in ("ops", "tile"):
        d = os.path.join(tmp, "gen-" + src)
        if not os.path.isdir(d):
            py = os.environ.get("PYTHON", "/usr/bin/python3")
            args = [os.path.join(HERE, "gen_cases.py"), d] if src == "ops" \
                else [os.path.join(HERE, "tile_cases.py"), "gen", d]
            run([py] + args)
        p = os.path.join(d, name, "model.onnx")
    else:
        p = src
    if not os.path.exists(p):
        die("%s: no model %s" % (name, p))
    return p


class Model:
    """The cost model as pb's tools compute it, for the cases of the
    measured files (their fused MLIR made once)."""

    def __init__(self, files, build, jobs, tmp):
        self.bin = os.path.join(build, "bin")
        self.jobs, self.tmp = jobs, tmp
        self.target = files[0]["target"]
        self.base = json.loads(open(target_path(self.target)).read())
        self.cases, self.calls = [], 0
        for f in files:
            if f["target"] != self.target:
                die("the files are for different targets (%s, %s)" % (
                    self.target, f["target"]))
            st = f.get("stages", {})
            for c in f["cases"]:
                sizes = c.get("sizes")
                tile = list(st.get("pb-tile", []))
                if sizes:
                    tile.append("--sizes=" + sizes)
                fuse = os.path.join(tmp, "%d-%s.mlir" % (len(self.cases), c["case"]))
                imp = run([os.path.join(self.bin, "pb-import"), onnx_of(c, tmp)]
                          + (["--cast=" + c["cast"]] if c.get("cast") else []))
                open(fuse, "wb").write(run(
                    [os.path.join(self.bin, "pb-fuse"), "--arch=" + f.get("arch", "sm_90")]
                    + st.get("pb-fuse", []), imp))
                self.cases.append((f, c, fuse, tile))

        self.merged = self.merge()

    def merge(self):
        """All cases' fused modules as one module (their symbols prefixed
        by the case's number, their --sizes renumbered), so that an
        evaluation is one pb-tile run: (path, pb-tile options, the first
        kernel number of each case) or None when the cases cannot be
        merged (different pb-tile options besides --sizes)."""
        other = {tuple(a for a in tile if not a.startswith("--sizes="))
                 for _, _, _, tile in self.cases}
        if len(other) != 1:
            return None
        bodies, maps, first, head, n, aliases_text = [], [], [], None, 0, []
        for i, (f, c, fuse, tile) in enumerate(self.cases):
            text = open(fuse).read()
            # attribute aliases (#map = ...) before the module: renamed too
            aliases = re.findall(r"^#([A-Za-z_][\w$.]*) = ", text, re.M)
            for a in sorted(set(aliases), key=len, reverse=True):
                text = re.sub(r"#%s\b" % re.escape(a), "#c%d_%s" % (i, a), text)
            m = re.match(r"((?:#[^\n]*\n)*)\s*(module(?: attributes \{.*?\})? \{)\n(.*)\}\s*$",
                         text, re.S)
            if not m:
                return None
            aliases_text.append(m.group(1))
            head = head or m.group(2)
            body = m.group(3)
            syms = re.findall(r"^\s*(?:func\.func|memref\.global)\s+(?:private\s+|public\s+)?"
                              r"@([A-Za-z_][\w$.]*)", body, re.M)
            for sym in sorted(set(syms), key=len, reverse=True):
                body = re.sub(r"@%s\b" % re.escape(sym), "@c%d_%s" % (i, sym), body)
            first.append(n)
            for a in tile:
                if a.startswith("--sizes="):
                    inner = a[len("--sizes="):].strip().strip("{}").strip()
                    maps.append(re.sub(r"kernel\[(\d+)", lambda x: "kernel[%d" % (
                        int(x.group(1)) + n), inner) if "kernel[i]" not in inner else inner)
            n += len(re.findall(r"^\s*func\.func[^\n]*\bpb\.kernel\b", body, re.M))
            bodies.append(body)
        path = os.path.join(self.tmp, "merged.mlir")
        open(path, "w").write("".join(aliases_text) + head + "\n" + "".join(bodies) + "}\n")
        opts = list(next(iter(other)))
        if maps:
            opts.append("--sizes={ %s }" % "; ".join(sorted(set(maps))))
        return path, opts, first

    def description(self, p):
        d = json.loads(json.dumps(self.base))
        m = d.setdefault("model", {})
        for k, v in p.items():
            if k.startswith("model."):
                m[k[6:]] = v
            else:
                d[k] = v
        return d

    def predict_each(self, tf):
        def one(i):
            f, c, fuse, tile = self.cases[i]
            rep = os.path.join(self.tmp, "report-%d.json" % i)
            run([os.path.join(self.bin, "pb-tile"), "--target-file", tf,
                 "--report", rep, "-o", "/dev/null"] + tile,
                open(fuse, "rb").read())
            ks = json.load(open(rep))["kernels"]
            return {(k["kernel"], k["nest"]): k["predicted_s"] for k in ks}
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            return dict(enumerate(ex.map(one, range(len(self.cases)))))

    def predict_merged(self, tf):
        path, opts, first = self.merged
        rep = os.path.join(self.tmp, "report-merged.json")
        run([os.path.join(self.bin, "pb-tile"), "--target-file", tf, "--report",
             rep, "-o", "/dev/null"] + opts, open(path, "rb").read())
        out = {i: {} for i in range(len(self.cases))}
        for k in json.load(open(rep))["kernels"]:
            m = re.match(r"c(\d+)_(.*)", k["kernel"])
            out[int(m.group(1))][(m.group(2), k["nest"])] = k["predicted_s"]
        return out

    def predict(self, p):
        """{case index: {(function, nest): predicted seconds}} for the
        constants "p": one pb-tile run on the merged module, checked on
        the first call against a run per case."""
        self.calls += 1
        tf = os.path.join(self.tmp, "target-%d.json" % self.calls)
        json.dump(self.description(p), open(tf, "w"))
        if self.merged and self.calls == 1:
            each, merged = self.predict_each(tf), None
            try:
                merged = self.predict_merged(tf)
            except SystemExit:
                pass
            if merged != each and (merged is None or any(
                    set(merged[i]) != set(each[i]) or any(
                        abs(merged[i][k] - v) > 1e-9 * v for k, v in each[i].items())
                    for i in each)):
                print("fit: the merged module predicts otherwise than the cases "
                      "one by one: one pb-tile run per case", flush=True)
                self.merged = None
            out = each
        elif self.merged:
            out = self.predict_merged(tf)
        else:
            out = self.predict_each(tf)
        os.unlink(tf)
        return out


def target_path(name):
    p = os.path.join(ROOT, "targets", name + ".json")
    if not os.path.exists(p):
        die("no description targets/%s.json" % name)
    return p


def points(model, pred):
    """(label, predicted s, measured s) for every data point."""
    out = []
    for i, (f, c, fuse, tile) in enumerate(model.cases):
        pr = pred[i]
        want = c.get("nests", c.get("kernels"))
        if want is not None and len(pr) != want:
            die("%s: pb-tile reports %d nests, the measured run had %d: "
                "the stages do not rebuild its kernels" % (c["case"], len(pr), want))
        given = 0.0
        seen = set()
        for k in c.get("measured", []):
            # a launch is one nest, or all the nests of its function
            keys = [(k["origin"], k["nest"])] if "nest" in k else \
                sorted(x for x in pr if x[0] == k["origin"])
            if not keys or any(x not in pr for x in keys):
                die("%s: no nest of %s in pb-tile's report" % (c["case"], k["origin"]))
            seen.update(keys)
            given += k["ms"] * 1e-3
            out.append(("%s%s %s" % (c["case"], " " + c["cast"] if c.get("cast") else "",
                                     k["origin"]),
                        sum(pr[x] for x in keys), k["ms"] * 1e-3))
        rest = [v for key, v in pr.items() if key not in seen]
        left = c.get("total_ms", 0) * 1e-3 - given
        if rest and left > 0:
            what = "rest" if seen else "total"
            out.append(("%s (%s, %d kernels)" % (c["case"], what, len(rest)),
                        sum(rest), left))
    return out


def loss(pts, p, p0):
    e = sum(math.log(a / b) ** 2 for _, a, b in pts)
    return e + PRIOR * sum(math.log(p[k] / p0[k]) ** 2 for k in p)


def set_prior(w):
    global PRIOR
    PRIOR = w


def summary(pts):
    r = sorted(a / b for _, a, b in pts)
    n = len(r)
    med = r[n // 2] if n % 2 else math.sqrt(r[n // 2 - 1] * r[n // 2])
    worst = max(pts, key=lambda x: abs(math.log(x[1] / x[2])))
    w = worst[1] / worst[2]
    return med, max(w, 1 / w), worst[0], math.exp(
        math.sqrt(sum(math.log(a / b) ** 2 for _, a, b in pts) / n))


def fit(model, p0, names, quiet):
    p = dict(p0)
    cache = {}

    def f(q):
        key = tuple(sorted(q.items()))
        if key not in cache:
            cache[key] = loss(points(model, model.predict(q)), q, p0)
        return cache[key]
    best = f(p)
    # constants that move no prediction
    base = points(model, model.predict(p))
    free = []
    for k in names:
        moved = False
        for s in (0.5, 2.0):
            q = dict(p)
            q[k] = min(max(p[k] * s, PARAMS[k][1]), PARAMS[k][2])
            if q[k] == p[k]:
                continue
            if any(abs(a - b) > 1e-12 * max(a, 1e-30) for (_, a, _), (_, b, _) in
                   zip(points(model, model.predict(q)), base)):
                moved = True
        (free if moved else []).append(k)
        if not moved and not quiet:
            print("fit: %s moves no prediction of these data: left at %g" % (k, p[k]), flush=True)
    gr = (math.sqrt(5) - 1) / 2
    for sweep in range(4):
        moved = False
        for k in free:
            lo, hi = math.log(PARAMS[k][1]), math.log(PARAMS[k][2])
            x0 = math.log(p[k])

            def g(x):
                q = dict(p)
                q[k] = math.exp(min(max(x, lo), hi))
                return f(q)
            # the first sweep scans factors 1/16 .. 16 of the value,
            # later ones 1/2 .. 2; then a golden-section search between
            # the best point's neighbours
            span = 4 if sweep == 0 else 1
            xs = sorted({min(max(x0 + math.log(2) * s, lo), hi)
                         for s in range(-span, span + 1)})
            ys = [g(x) for x in xs]
            j = min(range(len(xs)), key=lambda i: ys[i])
            a = xs[max(j - 1, 0)]
            b = xs[min(j + 1, len(xs) - 1)]
            c, d = b - gr * (b - a), a + gr * (b - a)
            gc, gd = g(c), g(d)
            for _ in range(6):
                if gc < gd:
                    b, d, gd = d, c, gc
                    c = b - gr * (b - a)
                    gc = g(c)
                else:
                    a, c, gc = c, d, gd
                    d = a + gr * (b - a)
                    gd = g(d)
            x = min([(ys[j], xs[j]), (gc, c), (gd, d)])[1]
            if g(x) < best - 1e-9:
                moved |= abs(x - x0) > 0.01
                p[k] = math.exp(min(max(x, lo), hi))
                best = g(x)
        if not quiet:
            print("fit: sweep %d: loss %.4f (%d evaluations)" % (
                sweep + 1, best, model.calls), flush=True)
        if not moved:
            break
    return p, free


def table(before, after):
    print("%-56s %12s %12s %8s %12s %8s" % ("point", "measured us", "before us",
                                            "ratio", "after us", "ratio"))
    for (l, a, m), (_, b, _) in zip(before, after):
        print("%-56s %12.2f %12.2f %8.2f %12.2f %8.2f" % (
            l[:56], m * 1e6, a * 1e6, a / m, b * 1e6, b / m))


def fmt(v):
    return "%.4g" % v


def write(name, p, src, out=None):
    """Put "p" into targets/<name>.json (or a copy of it, "out"): launch_s
    in place, the "model" object (with "source") before the closing
    brace."""
    path = target_path(name)
    text = open(path).read()
    text = re.sub(r'("launch_s":\s*)[^,\n]+', lambda m: m.group(1) + fmt(p["launch_s"]), text)
    text = re.sub(r',\n\t"model": \{.*?\n\t\}', "", text, flags=re.S)
    body = ",\n".join(['\t\t"source": %s' % json.dumps(src)] +
                      ['\t\t"%s": %s' % (k[6:], fmt(p[k])) for k in PARAMS if k.startswith("model.")])
    text = re.sub(r'\n\}\s*$', ',\n\t"model": {\n%s\n\t}\n}\n' % body, text)
    json.loads(text)
    path = out or path
    open(path, "w").write(text)
    print("fit: wrote %s" % (out or os.path.relpath(path, ROOT)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--build", default=os.environ.get("PB_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--out", default=None,
                    help="write the fitted description to this file instead")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--params", default=",".join(PARAMS))
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--prior", type=float, default=PRIOR,
                    help="weight of the pull towards the description's values "
                    "(default %g)" % PRIOR)
    a = ap.parse_args()
    files = [json.load(open(x)) for x in a.files]
    for x, f in zip(a.files, files):
        if f.get("format") != "pb-measured 1":
            die("%s: not a pb-measured 1 file" % x)
    set_prior(a.prior)
    names = [k for k in a.params.split(",") if k]
    for k in names:
        if k not in PARAMS:
            die("unknown constant '%s' (expected %s)" % (k, ", ".join(PARAMS)))
    with tempfile.TemporaryDirectory(prefix="pb-fit-") as tmp:
        model = Model(files, a.build, a.jobs, tmp)
        d = model.base
        p0 = {k: (d.get("model", {}).get(k[6:], PARAMS[k][0]) if k.startswith("model.")
                  else d[k]) for k in PARAMS}
        before = points(model, model.predict(p0))
        p, free = fit(model, p0, names, a.quiet)
        after = points(model, model.predict(p))
    table(before, after)
    mb, wb, lb, gb = summary(before)
    ma, wa, la, ga = summary(after)
    print("fit: %d points; predicted/measured before: median %.2f, worst %.1fx (%s), "
          "geometric spread %.2fx" % (len(before), mb, wb, lb, gb))
    print("fit: after: median %.2f, worst %.1fx (%s), geometric spread %.2fx" % (
        ma, wa, la, ga))
    edge = [k for k in free if min(abs(math.log(p[k] / PARAMS[k][1])),
                                   abs(math.log(p[k] / PARAMS[k][2]))) < 0.01]
    for k in PARAMS:
        print("fit:   %-24s %10s -> %-10s%s" % (
            k, fmt(p0[k]), fmt(p[k]), "  (at an edge of its range [%g, %g]: the data "
            "want an effect the model lacks)" % PARAMS[k][1:] if k in edge else
            "" if k in free else
            "  (not fitted: --params)" if k not in names else "  (not constrained)"))
    if a.write or a.out:
        src = ("fitted by bench/fit.py to %s (%d points: %s; measured on %s): "
               "predicted/measured median %.2f -> %.2f, worst %.1fx -> %.1fx; "
               "at an edge of the fitting range: %s; "
               "not constrained by these data, left as they were: %s; "
               "not fitted (--params): %s" % (
                   ", ".join(os.path.relpath(os.path.abspath(x), ROOT) for x in a.files),
                   len(before), ", ".join(sorted({c["case"] for _, c, _, _ in model.cases})),
                   files[0].get("device", "?"), mb, ma, wb, wa, ", ".join(edge) or "none",
                   ", ".join(k for k in PARAMS if k in names and k not in free) or "none",
                   ", ".join(k for k in PARAMS if k not in names) or "none"))
        write(model.target, p, src, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
