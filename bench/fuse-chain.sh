#!/bin/sh
# pb-fuse compile time against model length (CPU only): a chain of N Relu
# nodes on a 64x64 tensor (all of it fuses into one kernel), imported once
# per N, then pb-fuse timed alone. Prints one table: N, pb-fuse seconds
# (wall clock, and CPU: user + system, which the load of a shared
# machine moves less), CPU milliseconds per op, kernels from --report.
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

printf '| Relu chain | pb-fuse wall s | pb-fuse CPU s | CPU ms per op | kernels |\n|---|---|---|---|---|\n'
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
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" \
		"$bin/pb-fuse" --report "$tmp/report.json" "$tmp/chain.mlir" \
		>/dev/null || exit 1
	k=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['after']['kernels'])" "$tmp/report.json")
	printf '| %s | %s | %s |\n' "$n" \
		"$(awk -v n="$n" '{ printf "%.2f | %.2f | %.2f", $1, $2 + $3, 1000 * ($2 + $3) / n }' "$tmp/time")" "$k"
done
