#!/usr/bin/python3
"""Write the constant-folding model of the pb-import lit tests (fold.test)
with its input and NumPy reference: a window-attention mask built the way
PyTorch exports Swin-T's (shape arithmetic with Mod, a zero tensor from
ConstantOfShape, ScatterND writing region ids, Sub/Equal/Not/Where),
added to the input, then a Dropout in training mode with ratio 0.
Everything but the Add and the Dropout is constant: pb-import folds it.
Also fold_scatter: GatherND, ScatterElements and ScatterND (with
reductions) on known int64 data, folded, their results made outputs.
Usage: fold.py OUTDIR  -- writes fold.onnx, fold.in.npy, fold.out.npy,
fold_scatter.onnx, fold_scatter.in.npy, fold_scatter.y{1,2,3}.npy"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def c(name, a):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(a)))


i64 = np.int64
n = helper.make_node
nodes = [
    c("i1", np.array(1, i64)), c("c4", np.array(4, i64)),
    c("c5", np.array(5, i64)), c("one", np.array(1, i64)),
    c("ax0", np.array([0], i64)), c("ax1", np.array([1], i64)),
    c("axm1", np.array([-1], i64)), c("r2", np.array(2, i64)),
    c("r4", np.array(4, i64)), c("r0", np.array(0, i64)),
    c("sh24", np.array([2, 4], i64)), c("s16", np.array([16], i64)),
    c("fone", np.array(1.0, np.float32)), c("fzero", np.array(0.0, np.float32)),
    c("fm100", np.array(-100.0, np.float32)),
    c("ratio", np.array(0.0, np.float32)), c("train", np.array(True)),
    # side = 16 / 4 + 16 mod 5 - 1 = 4
    n("Shape", ["x"], ["s"], name="shape"),
    n("Gather", ["s", "i1"], ["w"], name="gather", axis=0),
    n("Div", ["w", "c4"], ["q"], name="div"),
    n("Mod", ["w", "c5"], ["m"], name="mod", fmod=0),
    n("Add", ["q", "m"], ["qm"], name="add_qm"),
    n("Sub", ["qm", "one"], ["side"], name="sub_side"),
    n("Unsqueeze", ["side", "ax0"], ["side1"], name="unsq_side"),
    n("Concat", ["side1", "side1"], ["shp"], name="cat_shp", axis=0),
    n("ConstantOfShape", ["shp"], ["z"], name="zeros"),
    # the index grid of rows 2..3, columns 0..3: [2, 4, 2]
    n("Range", ["r2", "r4", "one"], ["rows"], name="range_rows"),
    n("Range", ["r0", "r4", "one"], ["cols"], name="range_cols"),
    n("Unsqueeze", ["rows", "ax1"], ["rows1"], name="unsq_rows"),
    n("Unsqueeze", ["cols", "ax0"], ["cols1"], name="unsq_cols"),
    n("Expand", ["rows1", "sh24"], ["rr"], name="expand_rows"),
    n("Expand", ["cols1", "sh24"], ["cc"], name="expand_cols"),
    n("Unsqueeze", ["rr", "axm1"], ["rr1"], name="unsq_rr"),
    n("Unsqueeze", ["cc", "axm1"], ["cc1"], name="unsq_cc"),
    n("Concat", ["rr1", "cc1"], ["idx"], name="cat_idx", axis=-1),
    n("Expand", ["fone", "sh24"], ["upd"], name="expand_upd"),
    n("ScatterND", ["z", "idx", "upd"], ["mask"], name="scatter"),
    # the pairwise mask: -100 where the regions differ
    n("Reshape", ["mask", "s16"], ["flat"], name="reshape"),
    n("Unsqueeze", ["flat", "ax0"], ["f0"], name="unsq_f0"),
    n("Unsqueeze", ["flat", "ax1"], ["f1"], name="unsq_f1"),
    n("Sub", ["f0", "f1"], ["d"], name="sub_d"),
    n("Equal", ["d", "fzero"], ["eq"], name="equal"),
    n("Not", ["eq"], ["ne"], name="not"),
    n("Where", ["ne", "fm100", "fzero"], ["bias"], name="where"),
    n("Unsqueeze", ["x", "ax1"], ["x1"], name="unsq_x"),
    n("Add", ["x1", "bias"], ["t"], name="add_bias"),
    n("Dropout", ["t", "ratio", "train"], ["y", "ymask"], name="dropout"),
]
g = helper.make_graph(
    nodes, "fold",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 16])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "fold.onnx"))

x = np.random.default_rng(15).standard_normal((2, 16)).astype(np.float32)
mask = np.zeros((4, 4), np.float32)
mask[2:4, :] = 1
flat = mask.reshape(16)
bias = np.where(flat[None, :] - flat[:, None] != 0, -100, 0).astype(np.float32)
np.save(os.path.join(out, "fold.in.npy"), x)
np.save(os.path.join(out, "fold.out.npy"), x[:, None, :] + bias)

# The scatter/gather family folded on known int64 data (shape data always
# folds): GatherND with batch_dims, ScatterElements with reduction add and
# a duplicate index, ScatterND with reduction mul; their results are added
# to the input (cast to int64 and back) so that the folded values are
# checked by numbers.
d = np.arange(24, dtype=i64).reshape(2, 3, 4)
gi = np.array([[[1, 2]], [[0, 3]]], i64)          # [2, 1, 2], batch_dims 1
sed = np.zeros((3, 4), i64)
sei = np.array([[1, 1], [0, 2], [3, 3]], i64)     # axis 1, duplicates
seu = np.array([[5, 6], [7, 8], [9, 10]], i64)
sn = np.ones((2, 3), i64) * 2
sni = np.array([[1], [1], [0]], i64)              # rows, duplicate 1
snu = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], i64)
nodes = [
    c("d", d), c("gi", gi), c("sed", sed), c("sei", sei), c("seu", seu),
    c("sn", sn), c("sni", sni), c("snu", snu),
    n("GatherND", ["d", "gi"], ["g"], name="gathernd", batch_dims=1),
    n("ScatterElements", ["sed", "sei", "seu"], ["se"], name="scatter_el",
      axis=1, reduction="add"),
    n("ScatterND", ["sn", "sni", "snu"], ["snd"], name="scatternd",
      reduction="mul"),
    n("Cast", ["x"], ["xi"], name="cast_x", to=TensorProto.INT64),
    n("Add", ["xi", "se"], ["t1"], name="add_se"),
    n("Cast", ["t1"], ["y1"], name="cast_y1", to=TensorProto.FLOAT),
    n("Cast", ["g"], ["y2"], name="cast_g", to=TensorProto.FLOAT),
    n("Cast", ["snd"], ["y3"], name="cast_snd", to=TensorProto.FLOAT),
]
g = helper.make_graph(
    nodes, "fold_scatter",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
    [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [3, 4]),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2, 1]),
     helper.make_tensor_value_info("y3", TensorProto.FLOAT, [2, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "fold_scatter.onnx"))
xs = np.arange(12, dtype=np.float32).reshape(3, 4)
se = sed.copy()
for r in range(3):
    for k in range(2):
        se[r, sei[r, k]] += seu[r, k]
snd = sn.copy()
for k in range(3):
    snd[sni[k, 0]] *= snu[k]
g_ref = np.array([[d[0, 1, 2]], [d[1, 0, 3]]])
np.save(os.path.join(out, "fold_scatter.in.npy"), xs)
np.save(os.path.join(out, "fold_scatter.y1.npy"), (xs + se).astype(np.float32))
np.save(os.path.join(out, "fold_scatter.y2.npy"), g_ref.astype(np.float32))
np.save(os.path.join(out, "fold_scatter.y3.npy"), snd.astype(np.float32))
