"""Write models whose tensors are too large to allocate (issue 16).

usage: big.py DIR  -- writes into DIR:
  overflow.onnx  Relu of x: f32 [2^31, 2^31] (2^64 bytes: overflows int64)
  expand.onnx    Expand of x: f32 [1] to [2^31, 2^31]
  huge.onnx      Relu of x: f32 [2^40, 2^10] (2^52 bytes: past the limit)
  grid.onnx      Relu of x: f32 [2^40] (4 TiB: 2^32 blocks of 256)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d = sys.argv[1]
os.makedirs(d, exist_ok=True)


def relu(name, shape):
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    onnx.save(helper.make_model(g), os.path.join(d, name))


relu("overflow.onnx", [2**31, 2**31])
relu("huge.onnx", [2**40, 2**10])
relu("grid.onnx", [2**40])
g = helper.make_graph(
    [helper.make_node("Expand", ["x", "s"], ["y"], name="big")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2**31, 2**31])],
    [numpy_helper.from_array(np.array([2**31, 2**31], np.int64), "s")])
onnx.save(helper.make_model(g), os.path.join(d, "expand.onnx"))
