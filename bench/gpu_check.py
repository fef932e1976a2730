#!/usr/bin/env python3
"""The GPU check's driver (bench/gpu-check.sh runs it; see bench/README.md).

Runs every prepared case of a bench/gpu folder on the GPU with pb-run-lite
(correctness against the reference) and pb-prof-lite (time per run, CUDA
events), then the same computation in PyTorch (a small ONNX interpreter
over torch ops, eager, fp32 with TF32 off or fp16, timed with CUDA
events), torch.compile of it, and a library kernel (Triton's tutorial
matmul for the GEMMs, scaled_dot_product_attention for attention), and
prints one table; RESULTS/measured.json puts each kernel's time next to
the cost model's prediction for bench/fit.py.

    gpu_check.py DIR [--dry-run] [--out DIR] [--only SUBSTR] [--repeat N]
                 [--baselines eager,compile,lib]

Cases: DIR/models/<name> (model.onnx, in.npy, out.npy: the shared models),
DIR/ops/<name> (model.onnx only: inputs are made here with a fixed seed,
references by the interpreter in float64, on the GPU when torch has one),
DIR/tile/<name> (bench/tile_cases.py: as ops, plus meta.json with the
case's tolerances, flops and bytes, so that the table gives achieved
GFLOP/s or GB/s), DIR/node/<name> (ONNX node tests: model.onnx,
test_data_set_0). A folder NAME@f16 is NAME compiled with pb-import
--cast=f16 (meta.json: "cast": "f16"): its inputs are rounded to float16
here, and torch runs it in float16.
"""
import argparse
import contextlib
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np

RTOL, ATOL = 1e-3, 1e-4


# --- a small ONNX interpreter over torch ops ------------------------------

def _attrs(node):
    from onnx import helper, numpy_helper
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if hasattr(v, "dims") and hasattr(v, "data_type"):
            v = numpy_helper.to_array(v)
        if isinstance(v, bytes):
            v = v.decode()
        out[a.name] = v
    return out


class Unsupported(Exception):
    pass


def _pads2(p, n):
    """ONNX pads [b0, b1, ..., e0, e1, ...] as torch's F.pad list."""
    out = []
    for i in reversed(range(n)):
        out += [p[i], p[i + n]]
    return out


def make_ops(torch):
    F = torch.nn.functional

    def sym_pads(x, pads, n, value, ks=None):
        if not pads or all(p == 0 for p in pads):
            return x, [0] * n
        if list(pads[:n]) == list(pads[n:]) and (
                ks is None or all(p <= k // 2 for p, k in zip(pads, ks))):
            return x, list(pads[:n])
        return F.pad(x, _pads2(pads, n), value=value), [0] * n

    def conv(n, x, w, b=None, **a):
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            raise Unsupported("Conv auto_pad")
        k = w.dim() - 2
        x, p = sym_pads(x, a.get("pads"), k, 0.0)
        f = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[k]
        return f(x, w, b, stride=a.get("strides", 1), padding=p,
                 dilation=a.get("dilations", 1), groups=a.get("group", 1))

    def maxpool(n, x, **a):
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            raise Unsupported("MaxPool auto_pad")
        ks = a["kernel_shape"]
        x, p = sym_pads(x, a.get("pads"), len(ks), float("-inf"), ks)
        f = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[len(ks)]
        return f(x, ks, a.get("strides", [1] * len(ks)), p,
                 a.get("dilations", 1), bool(a.get("ceil_mode", 0)))

    def avgpool(n, x, **a):
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            raise Unsupported("AveragePool auto_pad")
        ks = a["kernel_shape"]
        cip = bool(a.get("count_include_pad", 0))
        pads = a.get("pads")
        if cip:
            x, p = sym_pads(x, pads, len(ks), 0.0, ks)
        elif pads and (list(pads[:len(ks)]) != list(pads[len(ks):]) or
                       any(q > k // 2 for q, k in zip(pads, ks))):
            raise Unsupported("AveragePool pads")
        else:
            p = list(pads[:len(ks)]) if pads else 0
        f = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[len(ks)]
        return f(x, ks, a.get("strides", [1] * len(ks)), p,
                 bool(a.get("ceil_mode", 0)), cip)

    def gemm(n, A, B, C=None, **a):
        if a.get("transA", 0):
            A = A.t()
        if a.get("transB", 0):
            B = B.t()
        y = a.get("alpha", 1.0) * (A @ B)
        return y + a.get("beta", 1.0) * C if C is not None else y

    def softmax(n, x, **a):
        if n.opset >= 13:
            return torch.softmax(x, a.get("axis", -1))
        ax = a.get("axis", 1) % x.dim()
        s = x.shape
        return torch.softmax(x.reshape(int(np.prod(s[:ax])), -1), 1).reshape(s)

    def reshape(n, x, s, **a):
        s = [int(v) for v in s.tolist()]
        if not a.get("allowzero", 0):
            s = [x.shape[i] if v == 0 else v for i, v in enumerate(s)]
        return x.reshape(s)

    def axes_of(n, a, rest):
        if rest and rest[0] is not None:
            return [int(v) for v in rest[0].tolist()]
        return a.get("axes")

    def reduce(f):
        def r(n, x, *rest, **a):
            axes = axes_of(n, a, rest)
            keep = bool(a.get("keepdims", 1))
            if not axes:
                if a.get("noop_with_empty_axes", 0):
                    return x
                axes = list(range(x.dim()))
            return f(x, dim=tuple(axes), keepdim=keep)
        return r

    def rmax(x, dim, keepdim):
        for d in sorted((d % x.dim() for d in dim), reverse=True):
            x = x.amax(dim=d, keepdim=keepdim)
        return x

    def slice_(n, x, starts, ends, axes=None, steps=None, **a):
        st, en = starts.tolist(), ends.tolist()
        ax = axes.tolist() if axes is not None else list(range(len(st)))
        sp = steps.tolist() if steps is not None else [1] * len(st)
        idx = [slice(None)] * x.dim()
        for s, e, d, k in zip(st, en, ax, sp):
            if k < 0:
                raise Unsupported("Slice with a negative step")
            idx[d] = slice(int(s), int(min(e, 2**62)), int(k))
        return x[tuple(idx)]

    def unsqueeze(n, x, *rest, **a):
        for d in sorted(axes_of(n, a, rest)):
            x = x.unsqueeze(d if d >= 0 else d + x.dim() + 1)
        return x

    def squeeze(n, x, *rest, **a):
        axes = axes_of(n, a, rest)
        if not axes:
            return x.squeeze()
        for d in sorted((d % x.dim() for d in axes), reverse=True):
            x = x.squeeze(d)
        return x

    def batchnorm(n, x, s, b, m, v, **a):
        sh = [1, -1] + [1] * (x.dim() - 2)
        return ((x - m.reshape(sh)) / torch.sqrt(v.reshape(sh) + a.get("epsilon", 1e-5))
                * s.reshape(sh) + b.reshape(sh))

    def div(n, x, y, **a):
        if x.dtype.is_floating_point:
            return x / y
        return torch.div(x, y, rounding_mode="trunc")

    def gather(n, x, i, **a):
        ax = a.get("axis", 0) % x.dim()
        return x[(slice(None),) * ax + (i,)]

    def flatten(n, x, **a):
        ax = a.get("axis", 1) % (x.dim() + 1) if x.dim() else 0
        return x.reshape(int(np.prod(x.shape[:ax])), -1)

    def transpose(n, x, **a):
        return x.permute(a.get("perm", list(reversed(range(x.dim())))))

    def layernorm(n, x, s, b=None, **a):
        ax = a.get("axis", -1) % x.dim()
        return F.layer_norm(x, x.shape[ax:], s, b, a.get("epsilon", 1e-5))

    def constant(n, **a):
        return n.const(a["value"])

    return {
        "Add": lambda n, x, y, **a: x + y,
        "Sub": lambda n, x, y, **a: x - y,
        "Mul": lambda n, x, y, **a: x * y,
        "Div": div,
        "Pow": lambda n, x, y, **a: torch.pow(x, y),
        "Sqrt": lambda n, x, **a: torch.sqrt(x),
        "Exp": lambda n, x, **a: torch.exp(x),
        "Log": lambda n, x, **a: torch.log(x),
        "Erf": lambda n, x, **a: torch.erf(x),
        "Tanh": lambda n, x, **a: torch.tanh(x),
        "Sigmoid": lambda n, x, **a: torch.sigmoid(x),
        "Relu": lambda n, x, **a: torch.relu(x),
        "Neg": lambda n, x, **a: -x,
        "Abs": lambda n, x, **a: torch.abs(x),
        "Identity": lambda n, x, **a: x,
        "MatMul": lambda n, x, y, **a: torch.matmul(x, y),
        "Gemm": gemm,
        "Conv": conv,
        "MaxPool": maxpool,
        "AveragePool": avgpool,
        "GlobalAveragePool": lambda n, x, **a: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
        "Softmax": softmax,
        "Transpose": transpose,
        "Concat": lambda n, *xs, **a: torch.cat(xs, a["axis"]),
        "Flatten": flatten,
        "Reshape": reshape,
        "Shape": lambda n, x, **a: n.const(np.array(x.shape, np.int64)),
        "Gather": gather,
        "Slice": slice_,
        "Unsqueeze": unsqueeze,
        "Squeeze": squeeze,
        "Constant": constant,
        "ReduceMean": reduce(torch.mean),
        "ReduceSum": reduce(torch.sum),
        "ReduceMax": reduce(rmax),
        "BatchNormalization": batchnorm,
        "LayerNormalization": layernorm,
    }


class Interp:
    """Run an ONNX graph with torch ops on "device" in "dtype" (floats)."""

    def __init__(self, model, torch, device, dtype):
        from onnx import numpy_helper
        self.torch, self.device, self.dtype = torch, device, dtype
        self.opset = max([o.version for o in model.opset_import
                          if o.domain in ("", "ai.onnx")] or [13])
        self.ops = make_ops(torch)
        g = model.graph
        self.nodes = [(n, _attrs(n)) for n in g.node]
        for n, _ in self.nodes:
            if n.op_type not in self.ops:
                raise Unsupported(n.op_type)
        self.inits = {i.name: self.const(numpy_helper.to_array(i))
                      for i in g.initializer}
        self.inputs = [i.name for i in g.input if i.name not in self.inits]
        self.outputs = [o.name for o in g.output]

    def const(self, a):
        t = self.torch.from_numpy(np.array(a)).to(self.device)
        return t.to(self.dtype) if t.dtype.is_floating_point else t

    def __call__(self, feeds):
        env = dict(self.inits)
        env.update(feeds)
        for n, a in self.nodes:
            args = [env[i] if i else None for i in n.input]
            while args and args[-1] is None:
                args.pop()
            env[n.output[0]] = self.ops[n.op_type](self, *args, **a)
        return [env[o] for o in self.outputs]


# --- cases ----------------------------------------------------------------

def load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return numpy_helper.to_array(t)


def case_list(root, only):
    cases = []
    for kind in ("models", "ops", "tile", "node"):
        for d in sorted(glob.glob(os.path.join(root, kind, "*"))):
            if os.path.exists(os.path.join(d, "k.ptx")) and (not only or only in d):
                cases.append((kind, os.path.basename(d), d))
    return cases


def numbered(ds, what):
    """The files DIR/<what>_<k>.pb of an ONNX test data set, in k order."""
    return sorted(glob.glob(os.path.join(ds, what + "_*.pb")),
                  key=lambda p: int(p.split("_")[-1][:-3]))


def inputs_of(kind, d, model, tmp, dt=np.float32):
    """Input arrays (in graph order), the pb-run options that give the
    inputs, the options that also check the outputs, and the references
    (list of arrays, or None when they are still to be computed). "dt":
    the element type of the inputs (float16 for a case compiled with
    pb-import --cast=f16: the arrays are rounded to it here, so that pb
    and torch read the same values)."""
    os.makedirs(tmp, exist_ok=True)
    if kind == "models":
        x = os.path.join(d, "in.npy")
        a = np.load(x)
        if dt != np.float32 and a.dtype == np.float32:
            a = a.astype(dt)
            x = os.path.join(tmp, "in.npy")
            np.save(x, a)
        return ([a], ["--input", x],
                ["--input", x, "--check", os.path.join(d, "out.npy")],
                [np.load(os.path.join(d, "out.npy"))])
    if kind == "node":
        ds = os.path.join(d, "test_data_set_0")
        ins = numbered(ds, "input")
        opts = [o for p in ins for o in ("--input", p)]
        return ([load_pb(p) for p in ins], opts, ["--data", ds],
                [load_pb(p) for p in numbered(ds, "output")])
    rng = np.random.default_rng(zlib.crc32(os.path.basename(d).split("@")[0].encode()))
    inits = {i.name for i in model.graph.initializer}
    xs, opts = [], []
    for i in model.graph.input:
        if i.name in inits:
            continue
        shape = [x.dim_value for x in i.type.tensor_type.shape.dim]
        a = (rng.standard_normal(shape) * 0.5).astype(np.float32).astype(dt)
        p = os.path.join(tmp, i.name + ".npy")
        np.save(p, a)
        xs.append(a)
        opts += ["--input", p]
    return xs, opts, list(opts), None


def first_error(err):
    """The first error line of a tool's stderr without its file name."""
    line = (err.strip().splitlines() or ["?"])[0]
    return line.split("error: ", 1)[-1]


def run(cmd, timeout=120):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", "error: timed out after %d s" % timeout
    return p.returncode, p.stdout, p.stderr


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def torch_time(torch, fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return median(ts)


def max_rel(got, ref, rtol=RTOL, atol=ATOL):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        got = got.reshape(ref.shape)
    fin = np.isfinite(ref) & np.isfinite(got)
    ok = bool(np.allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True))
    err = float(np.max(np.abs(got - ref)[fin] / (atol / rtol + np.abs(ref[fin])))) if fin.any() else 0.0
    return ok, err


def triton_matmul(torch, a, b, dt):
    """A function running Triton's tutorial matmul kernel (the kernel of
    bench/static_triton.py, its configuration for the type) on "a" @ "b"."""
    import triton
    from static_triton import CONFIGS, matmul_kernel
    ty, prec, blocks, warps, stages = CONFIGS["fp16" if dt == torch.float16 else "fp32"]
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, blocks["BLOCK_SIZE_M"]) * triton.cdiv(N, blocks["BLOCK_SIZE_N"]),)

    def run():
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1),
                            b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                            PRECISION=prec, num_warps=warps, num_stages=stages,
                            **blocks)
        return [c]
    return run


def baselines(args, torch, row, model, meta, xs, refs, rtol, atol, repeat, dt):
    """Time the case's baselines on the GPU into "row": torch eager (the
    ONNX interpreter over torch ops: cuBLAS, cuDNN), torch.compile of the
    same (Inductor), and for the tiling cases a library kernel: Triton's
    tutorial matmul for the GEMMs, scaled_dot_product_attention for
    attention. Each output is checked against the reference (a note when
    it differs)."""
    def note(what, e):
        row.setdefault("torch_note", "%s failed: %s" % (what, str(e).splitlines()[0][:60]
                                                          if str(e) else type(e).__name__))
    try:
        g = Interp(model, torch, "cuda", dt)
    except Unsupported as e:
        row["torch_note"] = "no torch op for " + str(e)
        return
    feeds = {n: g.const(x) for n, x in zip(g.inputs, xs)}

    def timed(key, fn):
        try:
            ys = fn()
            if refs is not None and not all(
                    max_rel(y.float().cpu().numpy(), r, rtol, atol)[0] for y, r in zip(ys, refs)):
                row.setdefault("torch_note", key + " differs")
            row[key + "_ms"] = torch_time(torch, fn, 3, repeat)
        except Exception as e:  # noqa: BLE001 - report, do not stop
            note(key, e)
    timed("torch", lambda: g(feeds))
    group = meta.get("group")
    if "compile" in args.baselines and row["kind"] in ("tile", "model"):
        try:
            # each case from a clean cache: dynamo compiles a code object
            # (this lambda, Interp.__call__) at most cache_size_limit
            # times before it falls back to eager without a word
            torch._dynamo.reset()
            cf = torch.compile(lambda f: g(f))
            timed("compile", lambda: cf(feeds))
        except Exception as e:  # noqa: BLE001
            note("compile", e)
    if "lib" in args.baselines and group == "gemm" and \
            meta.get("precision") not in ("fp16", "bf16"):
        try:
            a, b = (feeds[n] for n in g.inputs)
            timed("lib", triton_matmul(torch, a, b, dt))
            row["lib"] = "triton"
        except Exception as e:  # noqa: BLE001
            note("triton", e)
    if "lib" in args.baselines and group == "attention":
        q, k, v = (feeds[n] for n in g.inputs)
        F = torch.nn.functional
        causal = bool(meta.get("causal"))
        # a key padding mask: the first "keep" keys take part
        am = None if meta.get("keep") is None else (
            torch.arange(k.shape[-2], device=k.device) <
            meta["keep"]).view(1, 1, 1, -1)
        if am is not None and causal:
            # both (GPT-2's Where and attention mask): one boolean mask,
            # as SDPA takes either attn_mask or is_causal
            am = am & torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool,
                                 device=k.device).tril()
            causal = False
        # grouped-query attention (repeat_kv's): fewer K/V heads
        gqa = {"enable_gqa": True} if k.shape[-3] != q.shape[-3] else {}
        timed("lib", lambda: [F.scaled_dot_product_attention(
            q, k, v, attn_mask=am, is_causal=causal, **gqa)])
        row["lib"] = "sdpa"
    del g, feeds
    torch.cuda.empty_cache()


def check_case(args, torch, kind, name, d):
    import onnx
    row = {"case": name, "kind": {"models": "model", "ops": "op"}.get(kind, kind)}
    model = onnx.load(os.path.join(d, "model.onnx"))
    mp = os.path.join(d, "meta.json")
    meta = json.load(open(mp)) if os.path.exists(mp) else {}
    rtol, atol = meta.get("rtol", RTOL), meta.get("atol", ATOL)
    repeat = meta.get("repeat", args.repeat)
    half = meta.get("cast") == "f16"
    tf32 = meta.get("precision") == "tf32"
    amp = meta.get("precision") in ("fp16", "bf16")
    row["dtype"] = ("f16" if half else "tf32" if tf32 else
                    "f32/" + meta["precision"] if amp else "f32")
    tmp = os.path.join(args.tmp, name)
    xs, opts, checks, refs = inputs_of(kind, d, model, tmp,
                                       np.float16 if half else np.float32)
    ptx = os.path.join(d, "k.ptx")
    interp = None
    try:
        interp = Interp(model, torch, "cpu", torch.float64) if torch else None
    except Unsupported as e:
        row["torch_note"] = "no torch op for " + str(e)
    if refs is None and interp is not None:
        if torch.cuda.is_available():  # float64 on the GPU: the 8192 GEMM
            interp = Interp(model, torch, "cuda", torch.float64)
        feeds = {n: interp.const(x) for n, x in zip(interp.inputs, xs)}
        refs = [y.cpu().numpy() for y in interp(feeds)]
        del interp, feeds
        for k, r in enumerate(refs):
            p = os.path.join(tmp, "ref_%d.npy" % k)
            np.save(p, r.astype(np.float16 if half else np.float32)
                    if r.dtype == np.float64 else r)
            checks += ["--check", p]
    tol = ["--rtol", str(rtol), "--atol", str(atol)]
    rc, out, err = run([args.bin + "/pb-run-lite", ptx] + checks + tol, 300)
    row["check"] = "ok" if rc == 0 and refs is not None else ("run" if rc == 0 else "FAIL")
    errs = [float(l.split("max rel err ")[1].split(" ")[0]) for l in out.splitlines()
            if "max rel err" in l]
    row["max_rel"] = max(errs) if errs else None
    if rc:
        row["error"] = first_error(err)
    js = os.path.join(args.out, name + ".prof.json")
    rc2, out2, err2 = run([args.bin + "/pb-prof-lite", ptx] + opts +
                          ["--warmup", "3", "--repeat", str(repeat), "--json", js], 300)
    if rc2 == 0:
        p = json.load(open(js))
        row["launches"] = len(p["kernels"])
        row["pb_ms"] = p["total_median_ms"]
        top = max(p["kernels"], key=lambda k: k["median_ms"]) if p["kernels"] else None
        if top:
            row["top"] = "%s %.0f%%" % (top["kernel"], 100 * top["share"])
        open(os.path.join(args.out, name + ".prof.txt"), "w").write(out2)
        rec = measured_case(kind, name, d, p)
        if rec:
            row["measured"] = rec
    elif "error" not in row:
        row["error"] = first_error(err2)
    if torch is not None and torch.cuda.is_available():
        # a NAME@tf32 case (pb's --precision=tf32) against torch with TF32
        # allowed, every other against exact fp32 or half
        # a NAME@fp16 case (pb's --precision=fp16) against torch under
        # autocast, which runs a float32 model's products in half too
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        ctx = (torch.autocast("cuda", dtype=getattr(torch, "float16" if meta["precision"] == "fp16"
                                                    else "bfloat16"))
               if amp else contextlib.nullcontext())
        try:
            with ctx:
                baselines(args, torch, row, model, meta, xs, refs, rtol, atol,
                          repeat, torch.float16 if half else torch.float32)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
    # achieved rates: GFLOP/s of the products, GB/s (least traffic) of the rest
    work, unit = (meta.get("flops"), "GF/s") if meta.get("group") in ("gemm", "conv", "attention") \
        else (meta.get("bytes"), "GB/s")
    if work:
        row["unit"] = unit
        for side in ("pb", "torch", "compile", "lib"):
            if row.get(side + "_ms"):
                row[side + "_rate"] = work / (row[side + "_ms"] * 1e-3) / 1e9
    return row


def measured_case(kind, name, d, prof):
    """The case's record for bench/fit.py ("pb-measured 1", bench/README.md):
    each launch's median time next to the cost model's prediction for it
    (predicted.json: pb-tile's --report on the device's description with
    the sizes of the compiled mapping, sizes.txt, made by gpu-prepare.sh).
    A function's one launch is all its nests; the N-th of as many launches
    as nests is the N-th nest; other launches are left to the total."""
    rp = os.path.join(d, "predicted.json")
    if not os.path.exists(rp):
        return None
    nests = json.load(open(rp))["kernels"]
    by = {}
    for n in nests:
        by.setdefault(n["kernel"], {})[n["nest"]] = n["predicted_s"] * 1e3
    launches = {}
    for k in prof["kernels"]:
        launches.setdefault(k.get("origin") or k["kernel"], []).append(k)
    out = []
    for origin, ls in launches.items():
        pr = by.get(origin)
        if not pr:
            continue
        if len(ls) == 1:
            out.append({"origin": origin, "ms": ls[0]["median_ms"],
                        "predicted_ms": sum(pr.values())})
        elif len(ls) == len(pr):
            for j, k in enumerate(ls):
                out.append({"origin": origin, "nest": j, "ms": k["median_ms"],
                            "predicted_ms": pr.get(j)})
    sp = os.path.join(d, "sizes.txt")
    sizes = open(sp).read().strip() if os.path.exists(sp) else ""
    m = os.path.join(d, "meta.json")
    cast = json.load(open(m)).get("cast") if os.path.exists(m) else None
    rec = {"case": name.split("@")[0], "from": kind,
           "nests": len(nests), "total_ms": prof["total_median_ms"],
           "predicted_total_ms": sum(n["predicted_s"] for n in nests) * 1e3,
           "measured": out}
    if cast:
        rec["cast"] = cast
    if sizes:
        rec["sizes"] = sizes
    return rec


def write_measured(args, dev, rows):
    """DIR's fit.json (gpu-prepare.sh: target, arch, commit, pb-fuse's
    options) with every timed case's record: RESULTS/measured.json, the
    input of bench/fit.py."""
    fp = os.path.join(args.dir, "fit.json")
    cases = [r["measured"] for r in rows if r.get("measured")]
    if not os.path.exists(fp) or not cases:
        return
    head = json.load(open(fp))
    rec = {"format": "pb-measured 1", "device": dev, "target": head["target"],
           "arch": head["arch"], "commit": head["commit"],
           "source": "bench/gpu-check.sh of %s on %s: pb-prof-lite, CUDA events around "
                     "every launch, medians" % (args.dir, time.strftime("%Y-%m-%d")),
           "stages": head["stages"], "cases": cases}
    json.dump(rec, open(os.path.join(args.out, "measured.json"), "w"), indent=1)


def table(rows):
    """The last part of the output: per case pb's time and each baseline's
    time over pb's (above 1: pb is faster)."""
    print("%-34s %-5s %-3s %-5s %8s %4s %9s %9s %7s %7s %7s %15s  %s" % (
        "case", "kind", "dt", "check", "max_rel", "krn", "pb ms", "eager ms",
        "eag/pb", "cmp/pb", "lib/pb", "rate pb / eager", "note"))
    for r in rows:
        f = lambda k, fmt: (fmt % r[k]) if r.get(k) is not None else "-"
        ratio = lambda k: "%.2fx" % (r[k] / r["pb_ms"]) if r.get(k) and r.get("pb_ms") else "-"
        note = r.get("error") or r.get("torch_note") or r.get("top", "")
        lib = (r["lib"][:6] + " " + ratio("lib_ms")) if r.get("lib") else "-"
        rate = "%s / %s %s" % (f("pb_rate", "%.0f"), f("torch_rate", "%.0f"),
                               r["unit"]) if r.get("unit") else ""
        print("%-34s %-5s %-3s %-5s %8s %4s %9s %9s %7s %7s %7s %15s  %s" % (
            r["case"][:34], r["kind"], r.get("dtype", "f32"), r["check"],
            f("max_rel", "%.1e"), f("launches", "%d"), f("pb_ms", "%.4f"),
            f("torch_ms", "%.4f"), ratio("torch_ms"), ratio("compile_ms"), lib,
            rate, note[:50]))
    n = len(rows)
    ok = sum(r["check"] == "ok" for r in rows)
    timed = [r for r in rows if r.get("torch_ms") and r.get("pb_ms")]
    print("== %d cases: %d ok, %d failed; pb faster than torch eager in %d of %d timed" % (
        n, ok, n - ok, sum(1 for r in timed if r["pb_ms"] < r["torch_ms"]), len(timed)))
    for key, what in (("torch_ms", "torch eager"), ("compile_ms", "torch.compile"),
                      ("lib_ms", "the library kernel (Triton matmul, SDPA)")):
        for dt in ("f32", "tf32", "f32/fp16", "f16"):
            rs = [r[key] / r["pb_ms"] for r in rows if r.get(key) and r.get("pb_ms")
                  and r.get("dtype", "f32") == dt and r["kind"] in ("tile", "model")]
            if rs:
                print("== %s %s over pb, tiling cases and models: geometric mean %.2fx "
                      "over %d cases" % (dt, what, math.exp(sum(map(math.log, rs)) / len(rs)),
                                         len(rs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--baselines", default="eager,compile,lib",
                    help="besides torch eager: compile (torch.compile), lib "
                    "(Triton's tutorial matmul, SDPA); comma-separated")
    args = ap.parse_args()
    args.bin = os.path.join(args.dir, "bin")
    args.out = args.out or os.path.join(args.dir, "results")
    args.tmp = os.path.join(args.out, "tmp")
    missing = [p for p in ("bin/pb-run-lite", "bin/pb-prof-lite")
               if not os.access(os.path.join(args.dir, p), os.X_OK)]
    cases = case_list(args.dir, args.only)
    if missing or not cases:
        print("gpu-check: missing in %s: %s" % (args.dir, ", ".join(missing) or "k.ptx cases"))
        return 1
    if args.dry_run:
        import onnx  # noqa: F401 - the check needs it there too
        for kind, name, d in cases:
            if not os.path.exists(os.path.join(d, "model.onnx")):
                print("gpu-check: %s has no model.onnx" % d)
                return 1
            print("would run: %s/pb-run-lite %s/k.ptx ...; pb-prof-lite ...; torch (%s)" % (
                args.bin, d, kind))
        rc, out, _ = run([args.bin + "/pb-run-lite", "--version"])
        print(out.strip() or "gpu-check: pb-run-lite does not start")
        print("gpu-check: dry run: %d cases in %s, everything in place" % (len(cases), args.dir))
        return 0 if rc == 0 else 1
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        dev = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU for torch"
    except ImportError:
        torch, dev = None, "no torch"
    os.makedirs(args.tmp, exist_ok=True)
    print("gpu-check: %d cases, %s, torch %s" % (
        len(cases), dev, torch.__version__ if torch else "-"), flush=True)
    rows = []
    t0 = time.time()
    for kind, name, d in cases:
        t1 = time.time()
        r = check_case(args, torch, kind, name, d)
        rows.append(r)
        print("  %-40s %-4s %5.1f s %s" % (name, r["check"], time.time() - t1,
                                          r.get("error", "")), flush=True)
    shutil.rmtree(args.tmp, ignore_errors=True)
    json.dump(rows, open(os.path.join(args.out, "summary.json"), "w"), indent=1)
    write_measured(args, dev, rows)
    print("gpu-check: %.0f s" % (time.time() - t0))
    table(rows)
    return 0 if all(r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
