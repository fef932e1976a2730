#!/usr/bin/env python3
"""Attention as torch's scaled_dot_product_attention exports it: Q and
K^T each multiplied by sqrt(scale) before the MatMul, an additive mask
(a causal one as an initializer, the form is_causal=True takes once
constant-folded), Softmax, MatMul.

usage: sdpa.py DIR NAME LQ LK C H D [KVH]

C >= 0: the mask is -inf where key j > query i + C, 0 elsewhere; C = -1:
no mask; C = -2: the causal mask of C = 0 with one entry below the
diagonal -inf too (not causal: read as an additive mask). KVH < H: K and V
have KVH heads, each shared by H / KVH query heads, repeated as
Hugging Face's repeat_kv exports it (Unsqueeze, Expand, Reshape:
grouped-query attention). Writes DIR/NAME.onnx, its inputs q, k, v as float32 and float16
.npy, and NumPy's float32 result y."""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

d, name = sys.argv[1], sys.argv[2]
LQ, LK, C, H, D = map(int, sys.argv[3:8])
KVH = int(sys.argv[8]) if len(sys.argv) > 8 else H
os.makedirs(d, exist_ok=True)
scale = 1.0 / np.sqrt(D)
inits = [numpy_helper.from_array(np.array(np.sqrt(scale), np.float32), "sq")]
nodes = []
kin, vin = "k", "v"
if KVH < H:
    inits += [numpy_helper.from_array(np.array([2], np.int64), "ax"),
              numpy_helper.from_array(np.array([1, KVH, H // KVH, LK, D],
                                               np.int64), "eshape"),
              numpy_helper.from_array(np.array([1, H, LK, D], np.int64),
                                      "rshape")]
    for t in "kv":
        nodes += [helper.make_node("Unsqueeze", [t, "ax"], [t + "u"],
                                   name="Unsqueeze_" + t),
                  helper.make_node("Expand", [t + "u", "eshape"], [t + "e"],
                                   name="Expand_" + t),
                  helper.make_node("Reshape", [t + "e", "rshape"], [t + "r"],
                                   name="Reshape_" + t)]
    kin, vin = "kr", "vr"
nodes += [helper.make_node("Mul", ["q", "sq"], ["qs"], name="Mul_0"),
         helper.make_node("Transpose", [kin], ["kt"], name="Transpose_1",
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
          helper.make_node("MatMul", ["p", vin], ["y"], name="MatMul_6")]
qs, ks = [1, H, LQ, D], [1, KVH, LK, D]
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, name, [vi("q", TensorProto.FLOAT, qs),
                                    vi("k", TensorProto.FLOAT, ks),
                                    vi("v", TensorProto.FLOAT, ks)],
                      [vi("y", TensorProto.FLOAT, qs)], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, name + ".onnx"))
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
kh, vh = (np.repeat(t, H // KVH, axis=1) for t in (k, v))
x = q @ kh.transpose(0, 1, 3, 2) * scale + mask
p = np.exp(x - x.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, t in (("q", q), ("k", k), ("v", v), ("y", p @ vh)):
    np.save(os.path.join(d, "%s_%s.npy" % (name, n)), t)
for n, t in (("q", q), ("k", k), ("v", v)):
    np.save(os.path.join(d, "%s_%s16.npy" % (name, n)), t.astype(np.float16))
