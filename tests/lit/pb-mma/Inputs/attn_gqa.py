#!/usr/bin/env python3
"""Grouped-query attention where the graph expresses it by broadcasting:
Q [1, KVH, G, L, D] (G query heads per key/value head), K and V
[1, KVH, 1, L, D]; MatMul(Q, K^T) broadcasts K over the group, Div by
sqrt(D), Softmax, MatMul with V broadcast likewise.

usage: attn_gqa.py DIR L D KVH G

Writes DIR/gqa.onnx, its inputs q, k, v (float32 .npy) and NumPy's
float32 result y."""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

d = sys.argv[1]
L, D, KVH, G = map(int, sys.argv[2:6])
os.makedirs(d, exist_ok=True)
qs, ks = [1, KVH, G, L, D], [1, KVH, 1, L, D]
nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_0",
                          perm=[0, 1, 2, 4, 3]),
         helper.make_node("MatMul", ["q", "kt"], ["s"], name="MatMul_1"),
         helper.make_node("Div", ["s", "sd"], ["x"], name="Div_2"),
         helper.make_node("Softmax", ["x"], ["p"], name="Softmax_3", axis=-1),
         helper.make_node("MatMul", ["p", "v"], ["y"], name="MatMul_4")]
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, "gqa", [vi("q", TensorProto.FLOAT, qs),
                                     vi("k", TensorProto.FLOAT, ks),
                                     vi("v", TensorProto.FLOAT, ks)],
                      [vi("y", TensorProto.FLOAT, qs)],
                      [numpy_helper.from_array(np.array(np.sqrt(D), np.float32),
                                               "sd")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, "gqa.onnx"))
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
x = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(D))
p = np.exp(x - x.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, t in (("q", q), ("k", k), ("v", v), ("y", p @ v)):
    np.save(os.path.join(d, n + ".npy"), t)
