#!/usr/bin/python3
"""Write models whose initializers are stored as external data (as
onnx.save_model(..., save_as_external_data=True) stores every model over
2 GB), with their input and reference, and broken variants.

usage: external_data.py DIR  -- writes into DIR:
  m.onnx, m.onnx.data   y = reshape(relu(x @ W + b), shape), every
                        initializer (shape too) in m.onnx.data
  x.npy, y.npy          input x (f32 [2, 4]) and the NumPy reference
  absolute.onnx         W's location an absolute path
  dotdot.onnx           W's location "../m.onnx.data"
  past.onnx             W's offset + length past the end of the file
  short.onnx            W's length shorter than its shape needs
  link.onnx             W's location a symbolic link to a file outside DIR
  missing.onnx          W's location a file that does not exist
  badkey.onnx           W's offset not a number
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
p = lambda name: os.path.join(d, name)

rng = np.random.default_rng(16)
x = rng.standard_normal((2, 4)).astype(np.float32)
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
shape = np.array([3, 2], dtype=np.int64)
y = np.maximum(x @ w + b, 0).reshape(3, 2).astype(np.float32)
np.save(p("x.npy"), x)
np.save(p("y.npy"), y)

g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["t"], name="mm"),
     helper.make_node("Add", ["t", "b"], ["u"], name="add"),
     helper.make_node("Relu", ["u"], ["r"], name="relu"),
     helper.make_node("Reshape", ["r", "shape"], ["y"], name="reshape")],
    "external",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b"),
     numpy_helper.from_array(shape, "shape")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save_model(m, p("m.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="m.onnx.data",
                size_threshold=0)

outside = os.path.join(os.path.dirname(os.path.abspath(d)),
                       os.path.basename(os.path.abspath(d)) + ".outside")
with open(p("m.onnx.data"), "rb") as f:
    open(outside, "wb").write(f.read())
if os.path.lexists(p("link.data")):
    os.remove(p("link.data"))
os.symlink(outside, p("link.data"))


def variant(name, **kv):
    """Save m.onnx as "name" with W's external_data entries set from kv."""
    v = onnx.load(p("m.onnx"), load_external_data=False)
    t = next(i for i in v.graph.initializer if i.name == "W")
    entries = {e.key: e.value for e in t.external_data}
    entries.update(kv)
    del t.external_data[:]
    for k, val in entries.items():
        t.external_data.add(key=k, value=val)
    open(p(name), "wb").write(v.SerializeToString())


size = os.path.getsize(p("m.onnx.data"))
variant("absolute.onnx", location=os.path.abspath(p("m.onnx.data")))
variant("dotdot.onnx", location="../" + os.path.basename(d) + "/m.onnx.data")
variant("past.onnx", offset=str(size - 8), length="48")
variant("short.onnx", length="44")
variant("link.onnx", location="link.data")
variant("missing.onnx", location="nothere.data")
variant("badkey.onnx", offset="12x")
