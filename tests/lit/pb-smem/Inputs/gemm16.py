#!/usr/bin/env python3
"""A float32 MatMul C = A B for pb-import --cast=f16, with f16 inputs and
NumPy's result on them rounded to f16.

usage: gemm16.py DIR M K N

Writes DIR/g.onnx, DIR/a16.npy, DIR/b16.npy and DIR/c.npy."""
import sys
import numpy as np
from onnx import helper, TensorProto, save

d = sys.argv[1]
m, k, n = map(int, sys.argv[2:5])
rng = np.random.default_rng(5)
a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
g = helper.make_graph(
    [helper.make_node("MatMul", ["a", "b"], ["c"], name="MatMul_0")], "g",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n])],
    [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
     d + "/g.onnx")
np.save(d + "/a16.npy", a)
np.save(d + "/b16.npy", b)
np.save(d + "/c.npy", (a.astype(np.float32) @ b.astype(np.float32))
        .astype(np.float16))
