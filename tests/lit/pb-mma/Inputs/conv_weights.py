#!/usr/bin/env python3
"""A convolution whose weights and bias are initializers (pb.param
arguments of @main), then Relu: what pb-mma permutes into the layout the
tensor cores read (docs/pb-mma.md, "Weights in the layout the kernel
reads").

usage: conv_weights.py DIR NAME C HW F KS [STRIDE]

Writes DIR/NAME.onnx, its input DIR/NAME.x.npy (float32) and NumPy's float64
result DIR/NAME.y.npy (stored as float32)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d, name = sys.argv[1], sys.argv[2]
c, hw, f, ks = map(int, sys.argv[3:7])
stride = int(sys.argv[7]) if len(sys.argv) > 7 else 1
pad = ks // 2
oh = (hw + 2 * pad - ks) // stride + 1
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(c * 1000 + hw * 10 + ks)
x = (0.5 * rng.standard_normal((1, c, hw, hw))).astype(np.float32)
w = (0.5 * rng.standard_normal((f, c, ks, ks))).astype(np.float32)
b = (0.5 * rng.standard_normal(f)).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], name="Conv_0",
                          kernel_shape=[ks, ks], pads=[pad] * 4,
                          strides=[stride, stride]),
         helper.make_node("Relu", ["t"], ["y"], name="Relu_1")]
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, name, [vi("x", TensorProto.FLOAT, [1, c, hw, hw])],
                      [vi("y", TensorProto.FLOAT, [1, f, oh, oh])],
                      [numpy_helper.from_array(w, "w"),
                       numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, os.path.join(d, name + ".onnx"))
xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
y = np.zeros((1, f, oh, oh))
for r in range(ks):
    for s in range(ks):
        win = xp[:, :, r:r + stride * (oh - 1) + 1:stride,
                 s:s + stride * (oh - 1) + 1:stride]
        y += np.einsum("nchw,oc->nohw", win, w[:, :, r, s].astype(np.float64))
y = np.maximum(y + b[None, :, None, None], 0)
np.save(os.path.join(d, name + ".x.npy"), x)
np.save(os.path.join(d, name + ".y.npy"), y.astype(np.float32))
