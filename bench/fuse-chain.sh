#!/bin/sh
# pb-fuse compile time against model length (CPU only): a chain of N Relu
# nodes on a 64x64 tensor (all of it fuses into one kernel), imported once
# per N, then pb-fuse timed alone. Prints one table: N, pb-fuse seconds
# (wall clock), kernels from --report.
#
#   bench/fuse-chain.sh [--build DIR] [N ...]    (default N: 100 400 1000 5000)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
if [ "${1:-}" = --build ]; then
	build=$2
	shift 2
fi
[ $# -gt 0 ] || set -- 100 400 1000 5000
bin=$build/bin
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

printf '| Relu chain | pb-fuse seconds | kernels |\n|---|---|---|\n'
for n in "$@"; do
	"$python" - "$n" "$tmp/chain.onnx" <<'PY' || exit 1
import sys
import onnx
from onnx import helper as h, TensorProto as T
n, out = int(sys.argv[1]), sys.argv[2]
nodes = [h.make_node('Relu', [f'x{i}'], [f'x{i + 1}']) for i in range(n)]
g = h.make_graph(nodes, 'chain',
                 [h.make_tensor_value_info('x0', T.FLOAT, [64, 64])],
                 [h.make_tensor_value_info(f'x{n}', T.FLOAT, [64, 64])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), out)
PY
	"$bin/pb-import" "$tmp/chain.onnx" >"$tmp/chain.mlir" || exit 1
	t0=$(date +%s.%N)
	"$bin/pb-fuse" --report "$tmp/report.json" "$tmp/chain.mlir" \
		>/dev/null || exit 1
	t1=$(date +%s.%N)
	k=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['after']['kernels'])" "$tmp/report.json")
	printf '| %s | %s | %s |\n' "$n" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$k"
done
