#!/bin/sh
# Compile time against model size (CPU only, ptxas not run): every stage
# of the pipeline timed alone, in CPU seconds (user + system, all threads:
# the machines are shared and CPU seconds vary less with their load),
# and the whole pipeline's CPU and wall-clock seconds (pb-codegen runs
# its kernels on --jobs threads, one per CPU by default).
#
# 1. Generated chains of N ONNX ops, N/2 times MatMul (64x64 weight) then
#    Relu (one kernel each pair): the time per op must stay flat as N
#    grows (linear growth). The kernels of such a chain are all the same,
#    which pb-codegen compiles once (docs/pb-codegen.md); with --distinct
#    the Relu is an Add of the scalar i instead, and every kernel differs.
# 2. The models of the zoo (tests/zoo/export.py; cached under
#    $PB_ZOO, default ~/.cache/pb-zoo, exported when python3-torch is
#    there), each stage on the previous stage's output.
#
#   bench/compile-time.sh [--build DIR] [--chains "N ..."] [--models "NAME ..."]
#                         [--distinct] [--no-dedup] [--exact-dedup] [--jobs N]
#   (defaults: chains 100 1000 5000; models resnet18 resnet50 densenet121
#   convnext_tiny inception_v3; --no-dedup, --exact-dedup and --jobs are
#   passed to pb-codegen)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
chains="100 1000 5000"
models="resnet18 resnet50 densenet121 convnext_tiny inception_v3"
distinct=0
codegen_flags=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--chains) chains=$2; shift 2 ;;
	--models) models=$2; shift 2 ;;
	--distinct) distinct=1; shift ;;
	--no-dedup) codegen_flags="$codegen_flags --no-dedup"; shift ;;
	--exact-dedup) codegen_flags="$codegen_flags --exact-dedup"; shift ;;
	--jobs) codegen_flags="$codegen_flags --jobs=$2"; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--chains \"N ...\"] [--models \"NAME ...\"] [--distinct] [--no-dedup] [--exact-dedup] [--jobs N]" >&2; exit 2 ;;
	esac
done
bin=$build/bin
python=${PYTHON:-/usr/bin/python3}
zoo=${PB_ZOO:-$HOME/.cache/pb-zoo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
stages="import fuse tile mma smem codegen"

# cpu CMD...: run CMD, print its CPU seconds (user + system); its wall
# clock seconds are added to $tmp/wall.
cpu() {
	/usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" || return 1
	awk '{ printf "%.2f", $1 + $2 }' "$tmp/time"
	awk '{ print $3 }' "$tmp/time" >>"$tmp/wall"
}

# pipeline MODEL: every stage on the previous one's output; prints
# "| t_import | ... | t_codegen | total | wall | kernels |" and writes the
# totals (CPU, wall) to $tmp/total.
pipeline() {
	in=$1 row="" total=0
	: >"$tmp/wall"
	for s in $stages; do
		case $s in
		import) out=$tmp/import.mlir; t=$(cpu "$bin/pb-import" "$in" -o "$out") ;;
		codegen) t=$(cpu "$bin/pb-codegen" $codegen_flags "$prev" -o "$tmp/k.ptx") ;;
		*) out=$tmp/$s.mlir; t=$(cpu "$bin/pb-$s" "$prev" -o "$out") ;;
		esac || { echo "| $s failed |"; return 1; }
		prev=$out
		row="$row | $t"
		total=$(awk -v a="$total" -v b="$t" 'BEGIN { printf "%.2f", a + b }')
	done
	k=$(grep -c 'pb.kernel' "$tmp/fuse.mlir")
	wall=$(awk '{ s += $1 } END { printf "%.2f", s }' "$tmp/wall")
	echo "$total $wall" >"$tmp/total"
	printf '%s | %s | %s | %s |' "$row" "$total" "$wall" "$k"
}

if [ $distinct = 1 ]; then
	echo "## Chains of N ops (MatMul 64x64 + Add of the scalar i pairs: every kernel differs)"
else
	echo "## Chains of N ops (MatMul 64x64 + Relu pairs)"
fi
echo
printf '| N | import | fuse | tile | mma | smem | codegen | total CPU | total wall | kernels | ms per op (CPU, wall) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for n in $chains; do
	"$python" - "$n" "$tmp/chain.onnx" "$distinct" <<'PY' || exit 1
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
n, out, distinct = int(sys.argv[1]), sys.argv[2], sys.argv[3] == '1'
rng = np.random.default_rng(0)
w = nh.from_array((rng.standard_normal((64, 64)) / 8).astype(np.float32), 'w')
inits = [w]
nodes = []
for i in range(n):
    if i % 2 == 0:
        nodes.append(h.make_node('MatMul', [f'x{i}', 'w'], [f'x{i + 1}']))
    elif distinct:
        inits.append(nh.from_array(np.array(i, dtype=np.float32), f'c{i}'))
        nodes.append(h.make_node('Add', [f'x{i}', f'c{i}'], [f'x{i + 1}']))
    else:
        nodes.append(h.make_node('Relu', [f'x{i}'], [f'x{i + 1}']))
g = h.make_graph(nodes, 'chain',
                 [h.make_tensor_value_info('x0', T.FLOAT, [64, 64])],
                 [h.make_tensor_value_info(f'x{n}', T.FLOAT, [64, 64])],
                 initializer=inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), out)
PY
	row=$(pipeline "$tmp/chain.onnx") || { echo "$row"; exit 1; }
	printf '| %s%s %s |\n' "$n" "$row" \
		"$(awk -v n="$n" '{ printf "%.2f, %.2f", 1000 * $1 / n, 1000 * $2 / n }' "$tmp/total")"
done

echo
echo "## Models (torchvision, tests/zoo/export.py)"
echo
printf '| model | import | fuse | tile | mma | smem | codegen | total CPU | total wall | kernels |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for m in $models; do
	if [ ! -f "$zoo/$m.onnx" ]; then
		"$python" "$root/tests/zoo/export.py" "$zoo" "$m" 2>/dev/null ||
			{ echo "| $m | (not exported: needs python3-torch) |"; continue; }
	fi
	row=$(pipeline "$zoo/$m.onnx") || { echo "| $m $row"; continue; }
	printf '| %s%s\n' "$m" "$row"
done
