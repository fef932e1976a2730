#!/usr/bin/env python3
"""Run pb-codegen's PTX on a GPU by following its launch plan, and compare
the outputs with reference arrays. A reference runner of the plan format
(docs/pb-codegen.md), over the CUDA driver API (libcuda.so.1, ctypes) and
NumPy only; not run by lit (no GPU there).

    plan_run.py ROOT

ROOT holds one directory per case with k.sm_90.ptx and/or k.sm_80.ptx and
manifest.json: {"inputs": {name: file.npy}, "params": {initializer name:
file.npy}, "outputs": {name: reference.npy}}. Every root buffer is
allocated and zeroed, inputs and params are copied in, the launches run in
order (once to check, then timed), and outputs are compared with
rtol=1e-3, atol=1e-4.
"""
import ctypes, json, os, sys, time
import numpy as np
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p(); cu.cuGetErrorString(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: {r} {s.value}")
ck(cu.cuInit(0), "init")
dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
ck(cu.cuCtxSetCurrent(ctx), "setctx")
cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
cu.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
cu.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
cu.cuMemsetD8_v2.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t]
cu.cuMemFree_v2.argtypes = [ctypes.c_uint64]
DT = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64, "i32": np.int32,
      "i8": np.int8, "u8": np.uint8, "bool": np.bool_, "index": np.int64}

def plan_of(ptx):
    lines, on = [], False
    for l in ptx.splitlines():
        if l.strip() == "// pb-plan-begin": on = True; continue
        if l.strip() == "// pb-plan-end": break
        if on: lines.append(l[2:])
    return json.loads("\n".join(lines))

def run(d, arch, reps=3):
    ptx = open(os.path.join(d, f"k.{arch}.ptx")).read()
    plan = plan_of(ptx); man = json.load(open(os.path.join(d, "manifest.json")))
    mod = ctypes.c_void_p()
    ck(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx.encode() + b"\0")), "load")
    addr = {}
    allocs = []
    for b in plan["buffers"]:
        if b["kind"] == "view":
            addr[b["id"]] = addr[b["base"]] + b["offset"]; continue
        p = ctypes.c_uint64(); ck(cu.cuMemAlloc_v2(ctypes.byref(p), max(b["bytes"], 1)), "alloc")
        allocs.append(p.value); addr[b["id"]] = p.value
        ck(cu.cuMemsetD8_v2(p.value, 0, max(b["bytes"], 1)), "memset")
        src = {"input": man["inputs"], "param": man["params"]}.get(b["kind"])
        if src is not None:
            a = np.ascontiguousarray(np.load(os.path.join(d, src[b["name"]])).astype(DT[b["dtype"]]))
            assert list(a.shape) == b["shape"] or a.size * a.itemsize == b["bytes"], (b, a.shape)
            ck(cu.cuMemcpyHtoD_v2(p.value, a.ctypes.data, b["bytes"]), "h2d")
    funcs = []
    for l in plan["launches"]:
        f = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, l["kernel"].encode()), "func " + l["kernel"])
        if l["smem"] > 48 * 1024:  # dynamic shared memory past 48 KiB: the opt-in
            ck(cu.cuFuncSetAttribute(f, 8, l["smem"]), "opt-in " + l["kernel"])
        vals = []
        for a in l["args"]:
            if "buffer" in a: vals.append(ctypes.c_uint64(addr[a["buffer"]]))
            elif a["type"] in ("i64", "index"): vals.append(ctypes.c_int64(a["value"]))
            elif a["type"] == "i32": vals.append(ctypes.c_int32(a["value"]))
            elif a["type"] == "f32": vals.append(ctypes.c_float(a["value"]))
            else: vals.append(ctypes.c_double(a["value"]))
        arr = (ctypes.c_void_p * max(len(vals), 1))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        funcs.append((f, l, vals, arr))
    def go():
        for f, l, vals, arr in funcs:
            g, b = l["grid"], l["block"]
            ck(cu.cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], l["smem"], None, arr, None), "launch " + l["kernel"])
        ck(cu.cuCtxSynchronize(), "sync")
    go()
    t = time.time()
    for _ in range(reps): go()
    ms = (time.time() - t) / reps * 1e3
    worst = 0.0; ok = True
    for b in plan["buffers"]:
        if b["kind"] != "output": continue
        out = np.empty(b["shape"], DT[b["dtype"]])
        ck(cu.cuMemcpyDtoH_v2(out.ctypes.data, addr[b["id"]], b["bytes"]), "d2h")
        ref = np.load(os.path.join(d, man["outputs"][b["name"]]))
        o, r = out.astype(np.float64).reshape(ref.shape), ref.astype(np.float64)
        fin = np.isfinite(r) & np.isfinite(o)
        err = float(np.max(np.abs(o - r)[fin] / (1e-3 + np.abs(r[fin])))) if fin.any() else 0.0
        worst = max(worst, err)
        ok &= bool(np.allclose(o, r, rtol=1e-3, atol=1e-4, equal_nan=True))
    for p in allocs: cu.cuMemFree_v2(p)
    cu.cuModuleUnload(mod)
    return ok, worst, ms, len(plan["launches"])

root = sys.argv[1]
passed, bad = 0, []
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    if not os.path.isdir(d): continue
    for arch in ["sm_90", "sm_80"]:
        if not os.path.exists(os.path.join(d, f"k.{arch}.ptx")): continue
        try:
            ok, worst, ms, n = run(d, arch)
            line = f"{name:40s} {arch} {'PASS' if ok else 'FAIL'} max_rel_err={worst:.2e} {n} launches {ms:.3f} ms"
        except Exception as e:
            ok, line = False, f"{name:40s} {arch} ERROR {e}"
            # a failed launch poisons the context: start a fresh one
            cu.cuDevicePrimaryCtxReset(dev)
            ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
            ck(cu.cuCtxSetCurrent(ctx), "setctx")
        print(line, flush=True)
        if ok: passed += 1
        else: bad.append(line)
print(f"== {passed} passed, {len(bad)} failed")
for line in bad: print(line)
