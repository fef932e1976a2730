#!/usr/bin/python3
"""Write the unsigned and 8/16-bit integer model of the pb-import lit
tests (unsigned.test) with its inputs and NumPy references. The data
crosses 127 (u8) and 32767 (u16) and is negative (i8), so that a signed
op where an unsigned one belongs (or the reverse) gives other numbers:
  a, b: u8 [2, 8]; c: i8 [2, 8]; d: u16 [2, 8]
  div = a / b (u8), mx = max(a, b) (u8), lt = a < b (bool),
  md = a mod b (u8), sh = a >> 3 (u8), fa = float(a) (f32),
  cd = c / 3 (i8, truncated), fc = float(c) (f32), dw = int32(d) (i32),
  cl = clip(c, -100, 100) (i8).
Usage: unsigned.py OUTDIR  -- writes unsigned.onnx, unsigned.{a,b,c,d}.npy
and unsigned.<output>.npy for each output."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
a = rng.integers(1, 256, (2, 8), dtype=np.uint8)
b = rng.integers(1, 256, (2, 8), dtype=np.uint8)
c = rng.integers(-128, 128, (2, 8), dtype=np.int8)
d = rng.integers(0, 65536, (2, 8), dtype=np.uint16)
a[0, 0], b[0, 0] = 255, 2  # 255 / 2: 127 unsigned, 0 signed (-1 / 2)
c[0, 0] = -128


def cst(name, v):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(v)))


n = helper.make_node
nodes = [
    cst("three_u8", np.array([3], np.uint8)),
    cst("three_i8", np.array(3, np.int8)),
    cst("lo", np.array(-100, np.int8)), cst("hi", np.array(100, np.int8)),
    n("Div", ["a", "b"], ["div"], name="div"),
    n("Max", ["a", "b"], ["mx"], name="max"),
    n("Less", ["a", "b"], ["lt"], name="less"),
    n("Mod", ["a", "b"], ["md"], name="mod"),
    n("BitShift", ["a", "three_u8"], ["sh"], name="shift", direction="RIGHT"),
    n("Cast", ["a"], ["fa"], name="cast_a", to=TensorProto.FLOAT),
    n("Div", ["c", "three_i8"], ["cd"], name="div_c"),
    n("Cast", ["c"], ["fc"], name="cast_c", to=TensorProto.FLOAT),
    n("Cast", ["d"], ["dw"], name="cast_d", to=TensorProto.INT32),
    n("Clip", ["c", "lo", "hi"], ["cl"], name="clip"),
]
ref = {
    "div": a // b, "mx": np.maximum(a, b), "lt": a < b, "md": a % b,
    "sh": a >> 3, "fa": a.astype(np.float32),
    "cd": np.trunc(c.astype(np.float64) / 3).astype(np.int8),
    "fc": c.astype(np.float32), "dw": d.astype(np.int32),
    "cl": np.clip(c, -100, 100).astype(np.int8),
}
ins = {"a": a, "b": b, "c": c, "d": d}
tp = helper.np_dtype_to_tensor_dtype if hasattr(
    helper, "np_dtype_to_tensor_dtype") else (
    lambda t: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[t])
g = helper.make_graph(
    nodes, "unsigned",
    [helper.make_tensor_value_info(k, tp(v.dtype), v.shape)
     for k, v in ins.items()],
    [helper.make_tensor_value_info(k, tp(v.dtype), v.shape)
     for k, v in ref.items()])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "unsigned.onnx"))
for k, v in list(ins.items()) + list(ref.items()):
    np.save(os.path.join(out, "unsigned.%s.npy" % k), v)
