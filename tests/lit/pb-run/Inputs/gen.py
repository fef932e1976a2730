"""Write the inputs, weights and references of the pb-run lit tests.

usage: gen.py DIR  -- writes into DIR:
  x.npy, x.pb        input x, f32 [2, 3]
  w.onnx             a model whose initializer 'w' (f32 [3]) the tests use
  y.npy, y.pb        reference of y = max(exp(tanh(erf(x + w))), x + w)
  bad_shape.npy      f32 [3, 2]
  x_f64.npy          x as f64
  wrong.npy          y + 1 (must not match)
  trunc.npy          x.npy cut inside its header
  fortran.npy        a Fortran-ordered array
  A.npy, B.npy, C.npy   64x64 matmul + relu (C = relu(A @ B))
  Ah.npy, Bh.npy, Ch.npy  16x16 f16 operands, f32 product
  ints.npy, mask.npy, isum.npy, ipos.npy   i64/bool test data
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
p = lambda name: os.path.join(d, name)

x = (np.arange(6, dtype=np.float32).reshape(2, 3) / 3 - 1).astype(np.float32)
w = np.array([0.5, -0.25, 1.0], dtype=np.float32)
s = x + w
y = np.maximum(np.exp(np.tanh(np.vectorize(math.erf)(s))), s).astype(np.float32)
np.save(p("x.npy"), x)
np.save(p("y.npy"), y)
np.save(p("wrong.npy"), y + 1)
np.save(p("bad_shape.npy"), np.zeros((3, 2), np.float32))
np.save(p("x_f64.npy"), x.astype(np.float64))
np.save(p("fortran.npy"), np.asfortranarray(np.ones((2, 3), np.float32)))
with open(p("x.npy"), "rb") as f:
    open(p("trunc.npy"), "wb").write(f.read()[:40])
open(p("x.pb"), "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
open(p("y.pb"), "wb").write(numpy_helper.from_array(y, "y").SerializeToString())

graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    [numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(graph), p("w.onnx"))

i, j = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
A = ((i + j) % 7 - 3).astype(np.float32)
B = ((i * j) % 5 - 3).astype(np.float32)
np.save(p("A.npy"), A)
np.save(p("B.npy"), B)
np.save(p("C.npy"), np.maximum(A @ B, 0))

r = np.random.default_rng(0)
Ah = r.uniform(-1, 1, (16, 16)).astype(np.float16)
Bh = r.uniform(-1, 1, (16, 16)).astype(np.float16)
np.save(p("Ah.npy"), Ah)
np.save(p("Bh.npy"), Bh)
np.save(p("Ch.npy"), Ah.astype(np.float32) @ Bh.astype(np.float32))

ints = np.array([[3, -4, 5, 1 << 40]], dtype=np.int64)
mask = np.array([[True, False, True, True]])
np.save(p("ints.npy"), ints)
np.save(p("mask.npy"), mask)
np.save(p("isum.npy"), np.where(mask, ints * 2, 0))
np.save(p("ipos.npy"), ints > 0)
