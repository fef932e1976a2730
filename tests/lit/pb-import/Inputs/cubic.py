#!/usr/bin/python3
"""Write the cubic Resize models of the pb-import lit tests (resize.test)
from ONNX's node tests whose scales are graph inputs: the same model with
roi and scales made initializers from the test's data, with its input
and reference output as .npy. Needs libonnx-testdata.
Usage: cubic.py OUTDIR  -- writes cubic_<name>.onnx, .in.npy, .out.npy"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

data = os.environ.get("ONNX_DATA", "/usr/share/libonnx-testdata/data")
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name in ["upsample_scales_cubic_A_n0p5_exclude_outside",
             "downsample_scales_cubic_align_corners",
             "upsample_scales_cubic_asymmetric"]:
    d = os.path.join(data, "node", "test_resize_" + name)
    m = onnx.load(os.path.join(d, "model.onnx"))
    ts = []
    for i in range(4):
        t = onnx.TensorProto()
        p = os.path.join(d, "test_data_set_0", "input_%d.pb" % i)
        if not os.path.exists(p):
            break
        t.ParseFromString(open(p, "rb").read())
        ts.append(numpy_helper.to_array(t))
    ref = onnx.TensorProto()
    ref.ParseFromString(open(os.path.join(d, "test_data_set_0",
                                          "output_0.pb"), "rb").read())
    g = m.graph
    keep = [g.input[0]]
    for vi, a in zip(list(g.input)[1:], ts[1:]):
        g.initializer.append(numpy_helper.from_array(a, vi.name))
    del g.input[:]
    g.input.extend(keep)
    onnx.save(m, os.path.join(out, "cubic_%s.onnx" % name))
    np.save(os.path.join(out, "cubic_%s.in.npy" % name), ts[0])
    np.save(os.path.join(out, "cubic_%s.out.npy" % name),
            numpy_helper.to_array(ref))
