#!/usr/bin/env python3
"""Attention as torch's scaled_dot_product_attention exports it: Q and
K^T each multiplied by sqrt(scale) before the MatMul, an additive mask
(a causal one as an initializer, the form is_causal=True takes once
constant-folded), Softmax, MatMul.

usage: sdpa.py DIR NAME LQ LK C H D

C >= 0: the mask is -inf where key j > query i + C, 0 elsewhere; C = -1:
no mask; C = -2: the causal mask of C = 0 with one entry below the
diagonal -inf too (not causal: read as an additive mask). Writes DIR/NAME.onnx, its inputs q, k, v as float32 and float16
.npy, and NumPy's float32 result y."""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

d, name = sys.argv[1], sys.argv[2]
LQ, LK, C, H, D = map(int, sys.argv[3:8])
os.makedirs(d, exist_ok=True)
scale = 1.0 / np.sqrt(D)
inits = [numpy_helper.from_array(np.array(np.sqrt(scale), np.float32), "sq")]
nodes = [helper.make_node("Mul", ["q", "sq"], ["qs"], name="Mul_0"),
         helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_1",
                          perm=[0, 1, 3, 2]),
         helper.make_node("Mul", ["kt", "sq"], ["kts"], name="Mul_2"),
         helper.make_node("MatMul", ["qs", "kts"], ["s"], name="MatMul_3")]
mask = np.zeros((LQ, LK), np.float32)
scores = "s"
if C >= 0 or C == -2:
    i, j = np.indices((LQ, LK))
    mask = np.where(j > i + max(C, 0), -np.inf, 0).astype(np.float32)
    if C == -2:
        mask[LQ - 1, 0] = -np.inf
    inits.append(numpy_helper.from_array(mask, "mask"))
    nodes.append(helper.make_node("Add", ["s", "mask"], ["sm"], name="Add_4"))
    scores = "sm"
nodes += [helper.make_node("Softmax", [scores], ["p"], name="Softmax_5", axis=-1),
          helper.make_node("MatMul", ["p", "v"], ["y"], name="MatMul_6")]
qs, ks = [1, H, LQ, D], [1, H, LK, D]
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, name, [vi("q", TensorProto.FLOAT, qs),
                                    vi("k", TensorProto.FLOAT, ks),
                                    vi("v", TensorProto.FLOAT, ks)],
                      [vi("y", TensorProto.FLOAT, qs)], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, name + ".onnx"))
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
x = q @ k.transpose(0, 1, 3, 2) * scale + mask
p = np.exp(x - x.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, t in (("q", q), ("k", k), ("v", v), ("y", p @ v)):
    np.save(os.path.join(d, "%s_%s.npy" % (name, n)), t)
for n, t in (("q", q), ("k", k), ("v", v)):
    np.save(os.path.join(d, "%s_%s16.npy" % (name, n)), t.astype(np.float16))
