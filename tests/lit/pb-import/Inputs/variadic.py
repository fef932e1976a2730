#!/usr/bin/python3
"""Write models with many inputs to the variadic elementwise ops (Sum,
Max, Min, Mean) and their ONNX test data sets, with NumPy references.
Usage: variadic.py OUTDIR  -- writes into OUTDIR:
  f20.onnx, f20/   Sum, Max, Min and Mean of 20 f32 inputs (broadcast
                   shapes, one a scalar initializer)
  i20.onnx, i20/   Sum, Max and Min of 20 i64 inputs
  f64.onnx, f64/   Sum of 64 f32 inputs (the most the importer takes)
  f65.onnx         Sum of 65 inputs (refused)
  f15.onnx, f15/   Mean of 15 f32 inputs"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(16)


def save(name, n, ops, dtype, shapes, scalar=False):
    """A model "name" applying each of "ops" to "n" inputs of "dtype" and
    "shapes" (cycled), the last a scalar initializer when "scalar"; with
    a test_data_set of random inputs and the NumPy outputs."""
    tp = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT64
    names = ["x%d" % i for i in range(n)]
    vals, inputs, inits = [], [], []
    for i, nm in enumerate(names):
        sh = shapes[i % len(shapes)]
        if np.issubdtype(dtype, np.floating):
            v = rng.standard_normal(sh).astype(dtype)
        else:
            v = rng.integers(-100, 100, sh).astype(dtype)
        if scalar and i == n - 1:
            v = np.asarray(v.flat[0] if v.size else 1, dtype=dtype)
            inits.append(numpy_helper.from_array(v, nm))
        else:
            inputs.append(helper.make_tensor_value_info(nm, tp, sh))
        vals.append(v)
    ref = {"Sum": lambda a: np.sum(np.broadcast_arrays(*a), axis=0),
           "Max": lambda a: np.max(np.broadcast_arrays(*a), axis=0),
           "Min": lambda a: np.min(np.broadcast_arrays(*a), axis=0),
           "Mean": lambda a: np.mean(np.broadcast_arrays(*a), axis=0)}
    nodes, outputs, results = [], [], []
    for op in ops:
        y = op.lower()
        nodes.append(helper.make_node(op, names, [y], name=y))
        r = ref[op](vals).astype(dtype)
        outputs.append(helper.make_tensor_value_info(y, tp, r.shape))
        results.append(r)
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    k = 0
    for v, nm in zip(vals, names):
        if not (scalar and nm == names[-1]):
            t = numpy_helper.from_array(v, nm)
            with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                f.write(t.SerializeToString())
            k += 1
    for i, (r, op) in enumerate(zip(results, ops)):
        t = numpy_helper.from_array(r, op.lower())
        with open(os.path.join(d, "output_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())


save("f20", 20, ["Sum", "Max", "Min", "Mean"], np.float32,
     [[2, 3], [3], [1, 3], [2, 1]], scalar=True)
save("i20", 20, ["Sum", "Max", "Min"], np.int64, [[2, 3], [3]])
save("f64", 64, ["Sum"], np.float32, [[4, 5]])
save("f65", 65, ["Sum"], np.float32, [[4, 5]])
save("f15", 15, ["Mean"], np.float32, [[3, 4]])
