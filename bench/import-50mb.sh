#!/bin/sh
# Import time and peak memory of pb-import on a ~50 MB model (docs/pb-import.md,
# "Performance"). The model is generated into a temporary directory with
# /usr/bin/python3 + onnx (a 256x256x3x3 Conv, a 256x2048 and three
# 2048x2048 Gemm weights: 54.8 MB of float32 initializers) and removed
# afterwards; it is never committed. Prints the best of RUNS wall times and the peak resident set
# size of pb-import (GNU time), and the size of the MLIR it wrote.
# Usage: bench/import-50mb.sh   Environment: PB_BUILD (default ./build), RUNS (3)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PB_BUILD:-$root/build}/bin
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
/usr/bin/python3 - "$tmp/m.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = lambda name, *shape: numpy_helper.from_array(
    rng.standard_normal(shape).astype(np.float32), name)
nodes = [
    helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv",
                     pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="flat"),
    helper.make_node("Gemm", ["f", "w0"], ["g0"], name="fc0"),
    helper.make_node("Relu", ["g0"], ["h0"], name="relu0"),
    helper.make_node("Gemm", ["h0", "w1", "b1"], ["g1"], name="fc1"),
    helper.make_node("Relu", ["g1"], ["h1"], name="relu1"),
    helper.make_node("Gemm", ["h1", "w2", "b2"], ["y"], name="fc2"),
]
inits = [w("cw", 256, 256, 3, 3), w("cb", 256), w("w0", 256, 2048),
         w("w1", 2048, 2048), w("b1", 2048), w("w2", 2048, 2048),
         w("b2", 2048), w("w3", 2048, 2048)]
# w3 is used by a fourth Gemm so that every weight is live
nodes[-1].output[0] = "g2"
nodes += [helper.make_node("Gemm", ["g2", "w3"], ["y"], name="fc3")]
g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info(
    "x", TensorProto.FLOAT, [1, 256, 14, 14])], [helper.make_tensor_value_info(
    "y", TensorProto.FLOAT, [1, 2048])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(m, sys.argv[1])
PY
size=$(stat -c %s "$tmp/m.onnx")
best= peak=
i=0
while [ $i -lt "$runs" ]; do
	/usr/bin/time -f '%e %M' -o "$tmp/t" "$bin/pb-import" "$tmp/m.onnx" \
		-o "$tmp/m.mlir"
	read -r t kb <"$tmp/t"
	if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then
		best=$t
	fi
	if [ -z "$peak" ] || [ "$kb" -gt "$peak" ]; then
		peak=$kb
	fi
	i=$((i + 1))
done
echo "model: $size bytes; pb-import: best of $runs ${best} s wall," \
     "peak RSS $((peak / 1024)) MiB; MLIR $(stat -c %s "$tmp/m.mlir") bytes"
