#!/usr/bin/env python3
"""Differential numeric check of pb-fuse, independent of pb-run.

usage: numcheck.py [--rtol=X] [--atol=X] ORIG.mlir FUSED.mlir

Runs the tensor-level @main of ORIG (reference: upstream one-shot
bufferization and convert-linalg-to-loops) and the fuse-stage @main of
FUSED (pb.output out-parameters) with mlir-runner on the same
deterministic inputs, and compares every output (rtol 1e-4, atol 1e-5
unless given; f16 and bf16 outputs are printed widened to f32).
Out-parameters start filled with other values than the inputs, so an
output that pb-fuse's code never writes is caught. Prints "OK: ..." or
exits with "FAIL: ..."."""
import re, subprocess, sys, tempfile, os

LLVM = os.environ.get("LLVM", "/usr/lib/llvm-22")
OPT = LLVM + "/bin/mlir-opt"
RUNNER = LLVM + "/bin/mlir-runner"
LIBS = ",".join(LLVM + "/lib/" + l for l in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
LOWER = ("expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-llvm,"
         "convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts")

def balanced(s, i, o="(", c=")"):
    d = 0
    for j in range(i, len(s)):
        if s[j] == o: d += 1
        elif s[j] == c:
            d -= 1
            if d == 0: return j
    raise ValueError("unbalanced")

def signature(text):
    i = text.index("func.func @main(")
    a = i + len("func.func @main")
    e = balanced(text, a)
    args = text[a + 1:e]
    rest = text[e + 1:e + 400000]
    res = ""
    m = re.match(r"\s*->\s*", rest)
    if m:
        r = rest[m.end():]
        if r.startswith("("):
            res = r[:balanced(r, 0) + 1]
        else:
            res = re.match(r"(tensor|memref)<[^>]*>", r).group(0)
    ty = r"(tensor|memref)<([^>]*)>"
    argl = []
    for part in split_top(args):
        t = re.search(ty, part)
        argl.append((t.group(1), t.group(2), "pb.output" in part))
    resl = [(m.group(1), m.group(2)) for m in re.finditer(ty, res)]
    return argl, resl

def split_top(s):
    out, d, cur = [], 0, ""
    for ch in s:
        if ch in "([{<": d += 1
        if ch in ")]}>": d -= 1
        if ch == "," and d == 0:
            out.append(cur); cur = ""
        else:
            cur += ch
    if cur.strip(): out.append(cur)
    return out

def shape(body):
    p = body.split("x")
    return [int(x) for x in p[:-1]], p[-1]

def fill(k, body, n):
    dims, et = shape(body)
    mt = "memref<%s>" % body
    N = 1
    for d in dims: N *= d
    L = ["    %%m%d = memref.alloc() : %s" % (k, mt)]
    if len(dims) == 0:
        flat = None
    elif len(dims) == 1:
        flat = "%%m%d" % k
    else:
        flat = "%%f%d" % k
        L.append("    %s = memref.collapse_shape %%m%d [[%s]] : %s into memref<%dx%s>" % (flat, k, ", ".join(map(str, range(len(dims)))), mt, N, et))
    L.append("    %%cN%d = arith.constant %d : index" % (k, N))
    L.append("    scf.for %%j%d = %%c0 to %%cN%d step %%c1 {" % (k, k))
    L.append("      %%a%d = arith.index_cast %%j%d : index to i64" % (k, k))
    L.append("      %%b%d = arith.muli %%a%d, %%c7 : i64" % (k, k))
    L.append("      %%s%d = arith.constant %d : i64" % (k, 13 * k + 5))
    L.append("      %%d%d = arith.addi %%b%d, %%s%d : i64" % (k, k, k))
    L.append("      %%e%d = arith.remsi %%d%d, %%c17 : i64" % (k, k))
    if et.startswith("f") or et == "bf16":
        L.append("      %%g%d = arith.sitofp %%e%d : i64 to %s" % (k, k, et))
        L.append("      %%h%d = arith.constant %s : %s" % (k, "8.0" if n else "100.0", et))
        L.append("      %%v%d = arith.subf %%g%d, %%h%d : %s" % (k, k, k, et))
        L.append("      %%q%d = arith.constant 0.125 : %s" % (k, et))
        L.append("      %%w%d = arith.mulf %%v%d, %%q%d : %s" % (k, k, k, et))
    else:
        L.append("      %%w%d = arith.trunci %%e%d : i64 to %s" % (k, k, et) if et != "i64" else "      %%w%d = arith.addi %%e%d, %%z64 : i64" % (k, k))
    if flat is None:
        L.append("      memref.store %%w%d, %%m%d[] : %s" % (k, k, mt))
    else:
        L.append("      memref.store %%w%d, %s[%%j%d] : memref<%dx%s>" % (k, flat, k, N, et))
    L.append("    }")
    return L

PRINT = {"f32": "printMemrefF32", "i64": "printMemrefI64", "i32": "printMemrefI32", "f64": "printMemrefF64"}

def driver(argl, resl):
    L = ["  func.func @entry() {",
         "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index",
         "    %c7 = arith.constant 7 : i64", "    %c17 = arith.constant 17 : i64", "    %z64 = arith.constant 0 : i64"]
    vals, outs = [], []
    for k, (kind, body, isout) in enumerate(argl):
        L += fill(k, body, not isout)
        if kind == "tensor":
            L.append("    %%t%d = bufferization.to_tensor %%m%d restrict : memref<%s> to tensor<%s>" % (k, k, body, body))
            vals.append(("%%t%d" % k, "tensor<%s>" % body))
        else:
            vals.append(("%%m%d" % k, "memref<%s>" % body))
        if isout:
            outs.append(("%%m%d" % k, body))
    call = "call @main(%s) : (%s) -> (%s)" % (", ".join(v for v, _ in vals), ", ".join(t for _, t in vals), ", ".join("tensor<%s>" % b for _, b in resl))
    if resl:
        L.append("    %%r:%d = %s" % (len(resl), call))
        for i, (_, b) in enumerate(resl):
            L.append("    %%o%d = bufferization.to_buffer %%r#%d : tensor<%s> to memref<%s>" % (i, i, b, b))
            outs.append(("%%o%d" % i, b))
    else:
        L.append("    " + call)
    used = set()
    for i, (v, b) in enumerate(outs):
        dims, et = shape(b)
        if et in ("f16", "bf16"):
            # widen into an f32 copy to print it
            N = 1
            for d in dims: N *= d
            src = v
            if len(dims) != 1:
                src = "%%x%d" % i
                if dims:
                    L.append("    %s = memref.collapse_shape %s [[%s]] : memref<%s> into memref<%dx%s>" % (src, v, ", ".join(map(str, range(len(dims)))), b, N, et))
                else:
                    L.append("    %s = memref.expand_shape %s [] output_shape [1] : memref<%s> into memref<1x%s>" % (src, v, b, et))
            L.append("    %%y%d = memref.alloc() : memref<%dxf32>" % (i, N))
            L.append("    %%n%d = arith.constant %d : index" % (i, N))
            L.append("    scf.for %%k%d = %%c0 to %%n%d step %%c1 {" % (i, i))
            L.append("      %%l%d = memref.load %s[%%k%d] : memref<%dx%s>" % (i, src, i, N, et))
            L.append("      %%e%d = arith.extf %%l%d : %s to f32" % (i, i, et))
            L.append("      memref.store %%e%d, %%y%d[%%k%d] : memref<%dxf32>" % (i, i, i, N))
            L.append("    }")
            v, b, et = "%%y%d" % i, "%dxf32" % N, "f32"
        L.append("    %%u%s = memref.cast %s : memref<%s> to memref<*x%s>" % (v[1:], v, b, et))
        L.append("    call @%s(%%u%s) : (memref<*x%s>) -> ()" % (PRINT[et], v[1:], et))
        used.add(et)
    L.append("    return")
    L.append("  }")
    for et in sorted(used):
        L.append("  func.func private @%s(memref<*x%s>) attributes {llvm.emit_c_interface}" % (PRINT[et], et))
    return L

def strip_locs(text):
    r = subprocess.run([OPT], input=text, capture_output=True, text=True)
    if r.returncode:
        sys.exit("mlir-opt cannot read the input:\n" + r.stderr[:3000])
    return r.stdout

def run(text, pipeline):
    text = strip_locs(text)
    argl, resl = signature(text)
    body = text.rstrip()
    assert body.endswith("}")
    full = body[:-1] + "\n".join(driver(argl, resl)) + "\n}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(full)
    low = subprocess.run([OPT, "--pass-pipeline=builtin.module(%s)" % pipeline, f.name], capture_output=True, text=True)
    if low.returncode:
        sys.exit("lowering failed (%s):\n%s" % (f.name, low.stderr[:3000]))
    r = subprocess.run([RUNNER, "-e", "entry", "-entry-point-result=void", "-shared-libs=" + LIBS], input=low.stdout, capture_output=True, text=True)
    if r.returncode:
        sys.exit("run failed (%s):\n%s" % (f.name, r.stderr[:3000]))
    os.unlink(f.name)
    outs = []
    for chunk in r.stdout.split("Unranked Memref")[1:]:
        data = chunk.split("data =", 1)[1]
        outs.append([float(x) for x in re.findall(r"-?(?:nan|inf|[0-9.]+(?:e[-+]?[0-9]+)?)", data)])
    return outs

def main():
    rtol, atol, files = 1e-4, 1e-5, []
    for a in sys.argv[1:]:
        if a.startswith("--rtol="): rtol = float(a[7:])
        elif a.startswith("--atol="): atol = float(a[7:])
        else: files.append(a)
    orig, fused = open(files[0]).read(), open(files[1]).read()
    ref = run(orig, "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(convert-linalg-to-loops)," + LOWER)
    got = run(fused, LOWER)
    if len(ref) != len(got):
        sys.exit("FAIL: %d outputs, expected %d" % (len(got), len(ref)))
    worst = 0.0
    for i, (a, b) in enumerate(zip(ref, got)):
        if len(a) != len(b):
            sys.exit("FAIL: output %d has %d values, expected %d" % (i, len(b), len(a)))
        for x, y in zip(a, b):
            err = abs(x - y) / (atol + rtol * abs(x))
            if not err <= 1.0:
                sys.exit("FAIL: output %d: %g vs %g" % (i, y, x))
            worst = max(worst, abs(x - y))
    print("OK: %d outputs, %d values, max abs diff %g" % (len(ref), sum(map(len, ref)), worst))

main()
