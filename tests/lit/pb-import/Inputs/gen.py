#!/usr/bin/python3
"""Build the small ONNX models of the pb-import lit tests (run once; the
outputs are checked in). Usage: gen.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, inits=(), opset=13, check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


# A dynamic batch dimension: an error unless bound with --shape.
save("dynamic", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [f32("x", ["N", 4])], [f32("y", ["N", 4])])

# Nodes without names are located as "<op_type>_<index>".
save("unnamed", [helper.make_node("Add", ["x", "b"], ["t"]),
                 helper.make_node("Relu", ["t"], ["y"])],
     [f32("x", [2, 3])], [f32("y", [2, 3])],
     [init("b", rng.standard_normal(3).astype(np.float32))])

# Grouped (2 groups) and depthwise convolutions.
w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
dw = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
save("group_conv",
     [helper.make_node("Conv", ["x", "w"], ["t"], name="grouped", group=2,
                       pads=[1, 1, 1, 1]),
      helper.make_node("Conv", ["t", "dw"], ["y"], name="depthwise",
                       group=4)],
     [f32("x", [1, 4, 6, 6])], [f32("y", [1, 4, 4, 4])],
     [init("w", w), init("dw", dw)])

# Constant nodes: small ones are inlined, large ones are pb.param
# arguments named by the Constant's output.
small = helper.make_tensor("s", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
big = numpy_helper.from_array(
    rng.standard_normal((40, 40)).astype(np.float32), "big")
save("constants",
     [helper.make_node("Constant", [], ["c_small"], name="cs", value=small),
      helper.make_node("Constant", [], ["c_big"], name="cb", value=big),
      helper.make_node("Mul", ["x", "c_small"], ["t"], name="mul"),
      helper.make_node("MatMul", ["c_big", "t"], ["y"], name="mm")],
     [f32("x", [40, 3])], [f32("y", [40, 3])])

# An attribute the importer does not know.
save("bad_attr",
     [helper.make_node("Relu", ["x"], ["y"], name="odd", frobnicate=1)],
     [f32("x", [2])], [f32("y", [2])], check=False)

# Shape arithmetic folded at import: Shape, Gather, Unsqueeze, Concat,
# Reshape, then Transpose, Slice and ReduceMean at run time.
save("shape_fold",
     [helper.make_node("Shape", ["x"], ["s"], name="shape"),
      helper.make_node("Gather", ["s", "i0"], ["n"], name="gather", axis=0),
      helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
      helper.make_node("Concat", ["n1", "m1"], ["shp"], name="cat", axis=0),
      helper.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
      helper.make_node("Transpose", ["r"], ["t"], name="transpose",
                       perm=[1, 0]),
      helper.make_node("Slice", ["t", "st", "en", "ax1"], ["sl"],
                       name="slice"),
      helper.make_node("ReduceMean", ["sl"], ["y"], name="mean",
                       axes=[0], keepdims=1)],
     [f32("x", [2, 3, 4])], [f32("y", [1, 2])],
     [init("i0", np.array(0, np.int64)), init("ax0", np.array([0], np.int64)),
      init("m1", np.array([-1], np.int64)),
      init("st", np.array([2], np.int64)), init("en", np.array([10], np.int64)),
      init("ax1", np.array([0], np.int64))])


# Reference inputs and outputs (NumPy) for the numeric RUN lines.
def conv2d(x, w, group=1, pad=0):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    fg = f // group
    y = np.zeros((n, f, h - kh + 1, wd - kw + 1), np.float64)
    for o in range(f):
        g = o // fg
        for i in range(y.shape[2]):
            for j in range(y.shape[3]):
                y[:, o, i, j] = np.sum(
                    x[:, g * cg:(g + 1) * cg, i:i + kh, j:j + kw] * w[o],
                    axis=(1, 2, 3))
    return y


x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
np.save(os.path.join(out, "group_conv.in.npy"), x)
np.save(os.path.join(out, "group_conv.out.npy"),
        conv2d(conv2d(x, w, 2, 1), dw, 4).astype(np.float32))
x = rng.standard_normal((40, 3)).astype(np.float32)
np.save(os.path.join(out, "constants.in.npy"), x)
np.save(os.path.join(out, "constants.out.npy"),
        (numpy_helper.to_array(big) @ (x * np.float32([1, 2, 3])))
        .astype(np.float32))
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
np.save(os.path.join(out, "shape_fold.in.npy"), x)
np.save(os.path.join(out, "shape_fold.out.npy"),
        x.reshape(2, 12).T[2:10].mean(axis=0, keepdims=True))

# Softmax before opset 13 coerces the input to 2-d at "axis".
save("softmax_v11", [helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                      axis=1)],
     [f32("x", [2, 3, 4])], [f32("y", [2, 3, 4])], opset=11)
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
e = np.exp(x.reshape(2, 12) - x.reshape(2, 12).max(axis=1, keepdims=True))
np.save(os.path.join(out, "softmax_v11.in.npy"), x)
np.save(os.path.join(out, "softmax_v11.out.npy"),
        (e / e.sum(axis=1, keepdims=True)).reshape(2, 3, 4).astype(np.float32))

# Pad (constant mode) with known pads, one of them negative (a crop).
save("pad", [helper.make_node("Pad", ["x", "pads", "v"], ["y"], name="pad",
                              mode="constant")],
     [f32("x", [2, 5])], [f32("y", [3, 6])],
     [init("pads", np.array([1, 2, 0, -1], np.int64)),
      init("v", np.array(1.5, np.float32))])
x = rng.standard_normal((2, 5)).astype(np.float32)
np.save(os.path.join(out, "pad.in.npy"), x)
np.save(os.path.join(out, "pad.out.npy"),
        np.pad(x, ((1, 0), (2, 0)), constant_values=1.5)[:, :6])

# Attention as transformers export it with Einsum: scores = q k^T (scaled),
# softmax, then scores v (batched, "bhid,bhjd->bhij" and "bhij,bhjd->bhid").
def i64(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.INT64, shape)


save("einsum_attention",
     [helper.make_node("Einsum", ["q", "k"], ["s"], name="qk",
                       equation="bhid,bhjd->bhij"),
      helper.make_node("Mul", ["s", "scale"], ["t"], name="scale"),
      helper.make_node("Softmax", ["t"], ["p"], name="sm", axis=-1),
      helper.make_node("Einsum", ["p", "v"], ["y"], name="pv",
                       equation="bhij,bhjd->bhid")],
     [f32("q", [1, 2, 4, 8]), f32("k", [1, 2, 4, 8]), f32("v", [1, 2, 4, 8])],
     [f32("y", [1, 2, 4, 8])],
     [init("scale", np.array(8 ** -0.5, dtype=np.float32))])
q, k, v = (rng.standard_normal((1, 2, 4, 8)).astype(np.float32)
           for _ in range(3))
s = np.einsum("bhid,bhjd->bhij", q, k) * np.float32(8 ** -0.5)
p = np.exp(s - s.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, a in (("q", q), ("k", k), ("v", v)):
    np.save(os.path.join(out, "einsum_attention.%s.npy" % n), a)
np.save(os.path.join(out, "einsum_attention.out.npy"),
        np.einsum("bhij,bhjd->bhid", p, v).astype(np.float32))

# GELU as PyTorch exports it (the Erf pattern) and as opset 20's Gelu.
erf = np.vectorize(__import__("math").erf)
save("gelu_erf",
     [helper.make_node("Div", ["x", "sqrt2"], ["a"]),
      helper.make_node("Erf", ["a"], ["b"]),
      helper.make_node("Add", ["b", "one"], ["c"]),
      helper.make_node("Mul", ["x", "c"], ["d"]),
      helper.make_node("Mul", ["d", "half"], ["y"])],
     [f32("x", [4, 16])], [f32("y", [4, 16])],
     [init("sqrt2", np.array(2 ** 0.5, dtype=np.float32)),
      init("one", np.array(1, dtype=np.float32)),
      init("half", np.array(0.5, dtype=np.float32))])
save("gelu_v20", [helper.make_node("Gelu", ["x"], ["y"], name="gelu")],
     [f32("x", [4, 16])], [f32("y", [4, 16])], opset=20, check=False)
save("gelu_tanh", [helper.make_node("Gelu", ["x"], ["y"], name="gelu",
                                    approximate="tanh")],
     [f32("x", [4, 16])], [f32("y", [4, 16])], opset=20, check=False)
x = rng.standard_normal((4, 16)).astype(np.float32) * 3
np.save(os.path.join(out, "gelu.in.npy"), x)
np.save(os.path.join(out, "gelu.out.npy"),
        (0.5 * x * (1 + erf(x / 2 ** 0.5))).astype(np.float32))
np.save(os.path.join(out, "gelu_tanh.out.npy"),
        (0.5 * x * (1 + np.tanh((2 / np.pi) ** 0.5 *
                                (x + 0.044715 * x ** 3)))).astype(np.float32))

# An embedding lookup with run-time int64 ids and a padding mask computed
# from them (Equal, Where, Cast), as in a BERT-like encoder's input.
save("embedding",
     [helper.make_node("Gather", ["table", "ids"], ["e"], name="embed"),
      helper.make_node("Equal", ["ids", "pad_id"], ["m"], name="is_pad"),
      helper.make_node("Unsqueeze", ["m", "ax"], ["m3"], name="m3"),
      helper.make_node("Where", ["m3", "zero", "e"], ["y"], name="mask"),
      helper.make_node("Cast", ["m"], ["mf"], name="maskf", to=1),
      helper.make_node("ReduceSum", ["mf"], ["npad"], name="npad",
                       keepdims=0)],
     [i64("ids", [2, 5])], [f32("y", [2, 5, 16]), f32("npad", [])],
     [init("table", rng.standard_normal((50, 16)).astype(np.float32)),
      init("pad_id", np.array(0, dtype=np.int64)),
      init("ax", np.array([2], dtype=np.int64)),
      init("zero", np.array(0, dtype=np.float32))])
ids = np.array([[5, 7, 0, 0, 49], [1, 0, 2, 3, 4]], dtype=np.int64)
from onnx import numpy_helper as nh
m = onnx.load(os.path.join(out, "embedding.onnx"))
table = nh.to_array(m.graph.initializer[0])
np.save(os.path.join(out, "embedding.in.npy"), ids)
np.save(os.path.join(out, "embedding.out.npy"),
        np.where((ids == 0)[:, :, None], np.float32(0), table[ids]))
np.save(os.path.join(out, "embedding.npad.npy"),
        np.array((ids == 0).sum(), dtype=np.float32))

# A PyTorch-style shape subgraph with Equal/Where on known shape data:
# folded at import, so no i1 value reaches the IR.
save("where_fold",
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("Equal", ["target", "minus1"], ["eq"]),
      helper.make_node("Where", ["eq", "s", "target"], ["shape"]),
      helper.make_node("Expand", ["x", "shape"], ["y"])],
     [f32("x", [3, 1])], [f32("y", [3, 4])],
     [init("target", np.array([-1, 4], dtype=np.int64)),
      init("minus1", np.array(-1, dtype=np.int64))])

# A bad Einsum equation: one error line naming the node.
save("bad_typed", [helper.make_node("Einsum", ["a", "b"], ["y"], name="ein",
                                    equation="ij,jk->ik->x")],
     [f32("a", [2, 3]), f32("b", [3, 4])], [f32("y", [2, 4])], check=False)

# Gelu in a model of opset 17 (before Gelu existed): rejected by the op
# table's opset range.
save("gelu_old_opset", [helper.make_node("Gelu", ["x"], ["y"], name="gelu")],
     [f32("x", [4, 16])], [f32("y", [4, 16])], opset=17, check=False)

# ReduceLogSumExp over axis 1 with inputs near 100 (exp overflows float32
# unless the max is subtracted first).
save("logsumexp", [helper.make_node("ReduceLogSumExp", ["x"], ["y"],
                                    name="lse", axes=[1], keepdims=0)],
     [f32("x", [3, 5])], [f32("y", [3])])
x = (rng.standard_normal((3, 5)) + 100).astype(np.float32)
np.save(os.path.join(out, "logsumexp.in.npy"), x)
xm = x.astype(np.float64)
np.save(os.path.join(out, "logsumexp.out.npy"),
        (xm.max(1) + np.log(np.exp(xm - xm.max(1, keepdims=True)).sum(1)))
        .astype(np.float32))
