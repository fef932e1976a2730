#!/usr/bin/env python3
"""Write the bench's operator cases as small ONNX models (no initializers:
every operand is a graph input, so the files stay a few hundred bytes and
the inputs are made where the case runs).

usage: gen_cases.py DIR   -- writes DIR/<case>/model.onnx for each case

The sizes are those of a layer of a mid-sized CNN or transformer, large
enough that kernel time dominates launch overhead on a GPU.
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def model(name, nodes, inputs, outputs, opset=13):
    """A checked model of "nodes" whose operands are all graph inputs
    ("inputs" and "outputs": (name, shape) pairs, float32)."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


CASES = {
    "matmul_1024": model("matmul_1024",
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="MatMul_0")],
        [("a", [1024, 1024]), ("b", [1024, 1024])], [("y", [1024, 1024])]),
    "gemm_relu_256x1024": model("gemm_relu",
        [helper.make_node("Gemm", ["a", "b", "c"], ["t"], name="Gemm_0"),
         helper.make_node("Relu", ["t"], ["y"], name="Relu_1")],
        [("a", [256, 1024]), ("b", [1024, 1024]), ("c", [1024])],
        [("y", [256, 1024])]),
    "conv3x3_relu_8x64x56": model("conv3x3_relu",
        [helper.make_node("Conv", ["x", "w", "bias"], ["t"], name="Conv_0",
                          pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         helper.make_node("Relu", ["t"], ["y"], name="Relu_1")],
        [("x", [8, 64, 56, 56]), ("w", [64, 64, 3, 3]), ("bias", [64])],
        [("y", [8, 64, 56, 56])]),
    "maxpool3s2_8x64x112": model("maxpool",
        [helper.make_node("MaxPool", ["x"], ["y"], name="MaxPool_0",
                          kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1])],
        [("x", [8, 64, 112, 112])], [("y", [8, 64, 56, 56])]),
    "softmax_4096x1024": model("softmax",
        [helper.make_node("Softmax", ["x"], ["y"], name="Softmax_0", axis=-1)],
        [("x", [4096, 1024])], [("y", [4096, 1024])]),
    "add_relu_4096x4096": model("add_relu",
        [helper.make_node("Add", ["x", "z"], ["t"], name="Add_0"),
         helper.make_node("Relu", ["t"], ["y"], name="Relu_1")],
        [("x", [4096, 4096]), ("z", [4096, 4096])], [("y", [4096, 4096])]),
}

if __name__ == "__main__":
    root = sys.argv[1]
    for name, m in CASES.items():
        os.makedirs(os.path.join(root, name), exist_ok=True)
        onnx.save(m, os.path.join(root, name, "model.onnx"))
        print(name)
