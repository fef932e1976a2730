#!/usr/bin/env python3
"""Grouped-query attention as Hugging Face's repeat_kv exports it:
K and V [1, KVH, L, D] unsqueezed, expanded to [1, KVH, G, L, D] and
reshaped to [1, KVH*G, L, D]; Q [1, KVH*G, L, D].

usage: attn_repeat_kv.py DIR L D KVH G

Writes DIR/rkv.onnx, its inputs q, k, v as float32 (q.npy ..) and
float16 (q16.npy .., for pb-import --cast=f16) and NumPy's float32
result y from the float32 inputs."""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

d = sys.argv[1]
L, D, KVH, G = map(int, sys.argv[2:6])
H = KVH * G
os.makedirs(d, exist_ok=True)
qs, ks = [1, H, L, D], [1, KVH, L, D]
nodes = []
for n in ("k", "v"):
    nodes += [helper.make_node("Unsqueeze", [n, "ax2"], [n + "u"]),
              helper.make_node("Expand", [n + "u", "eshape"], [n + "e"]),
              helper.make_node("Reshape", [n + "e", "rshape"], [n + "r"])]
nodes += [helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
          helper.make_node("MatMul", ["q", "kt"], ["s"]),
          helper.make_node("Div", ["s", "sd"], ["x"]),
          helper.make_node("Softmax", ["x"], ["p"], axis=-1),
          helper.make_node("MatMul", ["p", "vr"], ["y"])]
vi = helper.make_tensor_value_info
inits = [numpy_helper.from_array(np.array(np.sqrt(D), np.float32), "sd"),
         numpy_helper.from_array(np.array([2], np.int64), "ax2"),
         numpy_helper.from_array(np.array([1, KVH, G, L, D], np.int64), "eshape"),
         numpy_helper.from_array(np.array([1, H, L, D], np.int64), "rshape")]
g = helper.make_graph(nodes, "rkv", [vi("q", TensorProto.FLOAT, qs),
                                     vi("k", TensorProto.FLOAT, ks),
                                     vi("v", TensorProto.FLOAT, ks)],
                      [vi("y", TensorProto.FLOAT, qs)], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, "rkv.onnx"))
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
kr, vr = (np.repeat(t, G, axis=1) for t in (k, v))
x = q @ np.swapaxes(kr, -1, -2) / np.float32(np.sqrt(D))
p = np.exp(x - x.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, t in (("q", q), ("k", k), ("v", v), ("y", p @ vr)):
    np.save(os.path.join(d, n + ".npy"), t)
for n, t in (("q", q), ("k", k), ("v", v)):
    np.save(os.path.join(d, n + "16.npy"), t.astype(np.float16))
