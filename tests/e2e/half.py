#!/usr/bin/env python3
"""Write small float16 and bfloat16 models with inputs and references for
the end-to-end suite (tests/e2e/run.sh): a CNN block and a transformer
block in each half type, and a float32 model that `pb-import --cast`
converts.

usage: half.py DIR   -- writes DIR/<case>.onnx, <case>.in.npy,
                        <case>.out.npy and prints "<case> rtol atol" lines

The references follow what PyTorch computes on half tensors: each op reads
half values, computes in float32 (contractions accumulate in float32,
normalisation statistics and softmax sums too) and rounds its result to
the half type once. bfloat16 has no NumPy dtype: its inputs and
references are float32 .npy files holding bfloat16 values (pb-run's
representation, docs/pb-run.md).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh


def bf16(a):
    """float32 "a" rounded to bfloat16 (nearest even), as float32."""
    u = np.atleast_1d(np.asarray(a, np.float32)).view(np.uint32)
    u = u.astype(np.uint64)
    s, one = np.uint64(16), np.uint64(1)
    u = ((u + np.uint64(0x7fff) + ((u >> s) & one)) >> s) << s
    return u.astype(np.uint32).view(np.float32).reshape(np.shape(a))


def rnd(a, dt):
    """"a" rounded to half type "dt", as float32."""
    a = np.asarray(a, np.float32)
    return a.astype(np.float16).astype(np.float32) if dt == T.FLOAT16 \
        else bf16(a)


def tensor(name, a, dt):
    """Initializer "name" of type "dt" holding "a" (rounded)."""
    if dt == T.FLOAT16:
        return nh.from_array(a.astype(np.float16), name)
    t = T()
    t.name, t.data_type = name, T.BFLOAT16
    t.dims.extend(a.shape)
    u = np.atleast_1d(bf16(a)).view(np.uint32) >> np.uint32(16)
    t.raw_data = u.astype(np.uint16).tobytes()
    return t


def save(d, name, nodes, x, y, inits, dt, opset=17):
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info("x", dt, list(x.shape))],
                     [h.make_tensor_value_info("y", dt, list(y.shape))],
                     inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, name + ".onnx"))
    npy = (lambda a: a.astype(np.float16)) if dt == T.FLOAT16 else \
        (lambda a: a.astype(np.float32))
    np.save(os.path.join(d, name + ".in.npy"), npy(x))
    np.save(os.path.join(d, name + ".out.npy"), npy(y))


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, f, oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + oh, j:j + ow],
                           w[:, :, i, j])
    return y + b[None, :, None, None]


def cnn(d, dt, tn, rs):
    """Conv 3x3 + BatchNormalization + Relu + MaxPool 2x2 +
    GlobalAveragePool + Flatten + Gemm."""
    r = lambda a: rnd(a, dt)
    x = r(rs.randn(2, 3, 8, 8))
    w = r(rs.randn(8, 3, 3, 3) * 0.3)
    b = r(rs.randn(8) * 0.1)
    sc, bi = r(rs.rand(8) + 0.5), r(rs.randn(8) * 0.1)
    mu, var = r(rs.randn(8) * 0.1), r(rs.rand(8) + 0.5)
    g = r(rs.randn(5, 8) * 0.3)
    gb = r(rs.randn(5) * 0.1)
    t = r(conv2d(x, w, b, 1))
    t = r((t - mu[None, :, None, None]) /
          np.sqrt(var[None, :, None, None] + 1e-5) *
          sc[None, :, None, None] + bi[None, :, None, None])
    t = np.maximum(t, 0)
    t = t.reshape(2, 8, 4, 2, 4, 2).max(axis=(3, 5))
    t = r(t.mean(axis=(2, 3)))
    y = r(t @ g.T + gb)
    nodes = [
        h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                    pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("BatchNormalization", ["c", "sc", "bi", "mu", "var"],
                    ["n"], name="bn"),
        h.make_node("Relu", ["n"], ["a"], name="relu"),
        h.make_node("MaxPool", ["a"], ["p"], name="pool",
                    kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["p"], ["gp"], name="gap"),
        h.make_node("Flatten", ["gp"], ["f"], name="flat"),
        h.make_node("Gemm", ["f", "g", "gb"], ["y"], name="fc", transB=1),
    ]
    inits = [tensor(n, a, dt) for n, a in
             [("w", w), ("b", b), ("sc", sc), ("bi", bi), ("mu", mu),
              ("var", var), ("g", g), ("gb", gb)]]
    save(d, "cnn_" + tn, nodes, x, y, inits, dt)


def block(d, dt, tn, rs):
    """MatMul + bias + LayerNormalization + Gelu (as PyTorch exports it
    before opset 20: Div, Erf, Add, Mul, Mul) + Softmax + MatMul."""
    r = lambda a: rnd(a, dt)
    x = r(rs.randn(2, 4, 16))
    w1 = r(rs.randn(16, 32) * 0.25)
    b1 = r(rs.randn(32) * 0.1)
    ga, be = r(rs.rand(32) + 0.5), r(rs.randn(32) * 0.1)
    w2 = r(rs.randn(32, 8) * 0.25)
    t = r(x @ w1)
    t = r(t + b1)
    mu = t.mean(-1, keepdims=True)
    var = ((t - mu) ** 2).mean(-1, keepdims=True)
    t = r((t - mu) / np.sqrt(var + 1e-5) * ga + be)
    erf = np.vectorize(math.erf)
    u = r(t / r(math.sqrt(2)))
    u = r(erf(u).astype(np.float32))
    u = r(u + 1)
    u = r(t * u)
    t = r(u * 0.5)
    e = np.exp(t - t.max(-1, keepdims=True))
    t = r(e / e.sum(-1, keepdims=True))
    y = r(t @ w2)
    c = lambda n, v: h.make_node("Constant", [], [n], name=n,
                                 value=tensor(n, np.array(v, np.float32), dt))
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["m"], name="fc1"),
        h.make_node("Add", ["m", "b1"], ["mb"], name="bias"),
        h.make_node("LayerNormalization", ["mb", "ga", "be"], ["ln"],
                    name="ln", axis=-1),
        c("sqrt2", math.sqrt(2)), c("one", 1.0), c("half", 0.5),
        h.make_node("Div", ["ln", "sqrt2"], ["g0"], name="gelu_div"),
        h.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
        h.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add"),
        h.make_node("Mul", ["ln", "g2"], ["g3"], name="gelu_mul"),
        h.make_node("Mul", ["g3", "half"], ["g"], name="gelu_half"),
        h.make_node("Softmax", ["g"], ["s"], name="softmax", axis=-1),
        h.make_node("MatMul", ["s", "w2"], ["y"], name="fc2"),
    ]
    inits = [tensor(n, a, dt) for n, a in
             [("w1", w1), ("b1", b1), ("ga", ga), ("be", be), ("w2", w2)]]
    save(d, "block_" + tn, nodes, x, y, inits, dt)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    rs = np.random.RandomState(13)
    for dt, tn, tol in [(T.FLOAT16, "f16", "2e-3 1e-3"),
                        (T.BFLOAT16, "bf16", "1.6e-2 8e-3")]:
        cnn(d, dt, tn, rs)
        block(d, dt, tn, rs)
        print("cnn_%s %s" % (tn, tol))
        print("block_%s %s" % (tn, tol))


if __name__ == "__main__":
    main()
