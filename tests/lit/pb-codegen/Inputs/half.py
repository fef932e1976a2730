#!/usr/bin/python3
"""Write the half-precision models of pb-codegen/half.test into OUTDIR:
mm_f16.onnx (MatMul 128x64 by 64x128, f16), gemm_f16.onnx (MatMul 64x48
by 48x32, f16) and conv_bf16.onnx (Conv 3x3, padding 1, 2x32x16x16 by
32x32x3x3, bf16). Usage: half.py OUTDIR"""
import os
import sys

import onnx
from onnx import TensorProto as T, helper as h

out = sys.argv[1]


def save(name, node, ins, outs, dt):
    g = h.make_graph([node], name,
                     [h.make_tensor_value_info(n, dt, s) for n, s in ins],
                     [h.make_tensor_value_info(n, dt, s) for n, s in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


save("mm_f16", h.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
     [("a", [128, 64]), ("b", [64, 128])], [("y", [128, 128])], T.FLOAT16)
save("gemm_f16", h.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
     [("a", [64, 48]), ("b", [48, 32])], [("y", [64, 32])], T.FLOAT16)
save("conv_bf16", h.make_node("Conv", ["x", "w"], ["y"], name="conv",
                              pads=[1, 1, 1, 1]),
     [("x", [2, 32, 16, 16]), ("w", [32, 32, 3, 3])], [("y", [2, 32, 16, 16])],
     T.BFLOAT16)
