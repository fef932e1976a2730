#!/usr/bin/python3
"""Build the float16/bfloat16 models of the pb-import lit tests (half.test)
with their inputs and references (run once; the outputs are checked in).
bfloat16 inputs and references are float32 .npy files holding bfloat16
values (pb-run converts them; docs/pb-run.md). Usage: half.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
rng = np.random.default_rng(16)


def bf16(a):
    """float32 "a" rounded to bfloat16 (nearest even), as float32."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    s, one = np.uint64(16), np.uint64(1)
    u = ((u + np.uint64(0x7fff) + ((u >> s) & one)) >> s) << s
    return u.astype(np.uint32).view(np.float32)


def init(name, a, dt):
    if dt == T.FLOAT16:
        return nh.from_array(np.asarray(a, np.float16), name)
    if dt == T.FLOAT:
        return nh.from_array(np.asarray(a, np.float32), name)
    t = T()
    t.name, t.data_type = name, T.BFLOAT16
    t.dims.extend(np.shape(a))
    u = bf16(a).view(np.uint32) >> np.uint32(16)
    t.raw_data = u.astype(np.uint16).tobytes()
    return t


def save(name, nodes, ins, outs, inits=(), opset=17):
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(n, dt, s) for n, dt, s in ins],
                     [h.make_tensor_value_info(n, dt, s) for n, dt, s in outs],
                     list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def npy(name, a):
    np.save(os.path.join(out, name + ".npy"), a)


F16, BF16 = T.FLOAT16, T.BFLOAT16

# float16 MatMul (a batch of rows times a matrix), bias Add and Sigmoid:
# the product accumulates in f32, each op rounds its result to f16.
x = rng.standard_normal((2, 3, 8)).astype(np.float16)
w = (rng.standard_normal((8, 4)) * 0.5).astype(np.float16)
b = (rng.standard_normal(4) * 0.1).astype(np.float16)
m = (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)
t = (m.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
y = (1 / (1 + np.exp(-t.astype(np.float32)))).astype(np.float16)
save("half_matmul",
     [h.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
      h.make_node("Add", ["m", "b"], ["t"], name="bias"),
      h.make_node("Sigmoid", ["t"], ["y"], name="sigmoid")],
     [("x", F16, [2, 3, 8])], [("y", F16, [2, 3, 4])],
     [init("w", w, F16), init("b", b, F16)])
npy("half_matmul.in", x)
npy("half_matmul.out", y)

# bfloat16 Conv with zero padding and a bias, then Softmax over the
# channels (its max and sum in f32).
x = bf16(rng.standard_normal((1, 2, 4, 4)))
w = bf16(rng.standard_normal((3, 2, 3, 3)) * 0.3)
b = bf16(rng.standard_normal(3) * 0.1)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((1, 3, 4, 4), np.float32)
for i in range(3):
    for j in range(3):
        c += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + 4, j:j + 4],
                       w[:, :, i, j])
c = bf16(c + b[None, :, None, None])
e = np.exp(c - c.max(1, keepdims=True))
y = bf16(e / e.sum(1, keepdims=True))
save("half_conv",
     [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                  pads=[1, 1, 1, 1]),
      h.make_node("Softmax", ["c"], ["y"], name="softmax", axis=1)],
     [("x", BF16, [1, 2, 4, 4])], [("y", BF16, [1, 3, 4, 4])],
     [init("w", w, BF16), init("b", b, BF16)])
npy("half_conv.in", x)
npy("half_conv.out", y)

# float16 LayerNormalization with its Mean output (float32: stash_type).
save("half_layernorm",
     [h.make_node("LayerNormalization", ["x", "g", "b"], ["y", "mean"],
                  name="ln", axis=-1)],
     [("x", F16, [2, 8])], [("y", F16, [2, 8]), ("mean", T.FLOAT, [2, 1])],
     [init("g", np.ones(8), F16), init("b", np.zeros(8), F16)])

# A float32 model for --cast: Gemm, a Constant scale, Relu.
x = rng.standard_normal((2, 6)).astype(np.float32)
w = (rng.standard_normal((4, 6)) * 0.5).astype(np.float32)
b = (rng.standard_normal(4) * 0.1).astype(np.float32)
save("half_cast",
     [h.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc", transB=1),
      h.make_node("Constant", [], ["k"], name="k",
                  value=init("k", np.array(0.5), T.FLOAT)),
      h.make_node("Mul", ["g", "k"], ["s"], name="scale"),
      h.make_node("Relu", ["s"], ["y"], name="relu")],
     [("x", T.FLOAT, [2, 6])], [("y", T.FLOAT, [2, 4])],
     [init("w", w, T.FLOAT), init("b", b, T.FLOAT)])
npy("half_cast.in", x)
npy("half_cast.out", np.maximum((x @ w.T + b) * 0.5, 0).astype(np.float32))
