#!/usr/bin/python3
"""Build examples/tiny_cnn.onnx, the bundled example of `make demo`, with a
reference input and output computed independently in NumPy.

    Conv 3x3 (1 -> 4 channels, pad 1) + bias, Relu, MaxPool 2x2,
    Flatten, Gemm (144 -> 10) + bias, Softmax

Input "image" [2, 1, 12, 12], output "probs" [2, 10]. Deterministic (seeded).
Run with Debian's python3 (python3-onnx, python3-numpy).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(2026)
N, C, H, W, F, K = 2, 1, 12, 12, 4, 10

x = rng.standard_normal((N, C, H, W)).astype(np.float32)
w1 = (rng.standard_normal((F, C, 3, 3)) * 0.5).astype(np.float32)
b1 = (rng.standard_normal(F) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((F * (H // 2) * (W // 2), K)) * 0.2).astype(np.float32)
b2 = (rng.standard_normal(K) * 0.1).astype(np.float32)

nodes = [
    helper.make_node("Conv", ["image", "conv.w", "conv.b"], ["c"], name="conv",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool",
                     kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["g"], name="fc"),
    helper.make_node("Softmax", ["g"], ["probs"], name="softmax", axis=1),
]
graph = helper.make_graph(
    nodes, "tiny_cnn",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [N, C, H, W])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [N, K])],
    [numpy_helper.from_array(a, n) for a, n in
     ((w1, "conv.w"), (b1, "conv.b"), (w2, "fc.w"), (b2, "fc.b"))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="pb examples/make_tiny_cnn.py")
model.ir_version = 7
onnx.checker.check_model(model)

# The reference, straight from the definitions of the ops.
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((N, F, H, W), np.float32)
for i in range(3):
    for j in range(3):
        c += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + H, j:j + W], w1[:, :, i, j])
c += b1[None, :, None, None]
r = np.maximum(c, 0)
p = r.reshape(N, F, H // 2, 2, W // 2, 2).max(axis=(3, 5))
g = p.reshape(N, -1) @ w2 + b2
e = np.exp(g - g.max(axis=1, keepdims=True))
probs = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

here = os.path.dirname(os.path.abspath(__file__))
onnx.save(model, os.path.join(here, "tiny_cnn.onnx"))
np.save(os.path.join(here, "tiny_cnn.in.npy"), x)
np.save(os.path.join(here, "tiny_cnn.out.npy"), probs)
print("wrote tiny_cnn.onnx, tiny_cnn.in.npy, tiny_cnn.out.npy; argmax", probs.argmax(1))
