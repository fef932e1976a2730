#!/bin/sh
# The model zoo (make zoo; docs/testing.md): torchvision and torch.nn
# models exported with seeded random weights (tests/zoo/export.py, cached
# under $PB_ZOO, default ~/.cache/pb-zoo; nothing large goes into git),
# each through every stage on the CPU and checked against PyTorch's
# output:
#   pb-import | pb-fuse | pb-tile | pb-mma | pb-smem | pb-run --check
# (and pb-codegen's PTX, timed). Prints a table: ONNX nodes, kernels, CPU
# seconds per stage, the largest error relative to the output's largest
# magnitude, and the verdict; exits 1 when a model fails. ZOO_RTOL
# overrides the relative tolerance.
#
#   tests/zoo/run.sh [NAME ...]      (default: every model of export.py)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${PB_BUILD:-$root/build}/bin
python=${PYTHON:-/usr/bin/python3}
zoo=${PB_ZOO:-$HOME/.cache/pb-zoo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# tolerances: rtol 1e-3, atol 1e-5 times the output's largest magnitude
# (random weights without training blow some activations up: Inception-v3
# ends near 1e12, where float32 sums of other orders differ by more)
rtol=${ZOO_RTOL:-1e-3}

[ $# -gt 0 ] || set -- $(cd "$here" && "$python" -c \
	"import export; print(' '.join(export.MODELS))") || exit 1
"$python" "$here/export.py" "$zoo" "$@" 2>"$tmp/export.err" || {
	cat "$tmp/export.err" >&2
	exit 1
}

# cpu CMD...: run CMD, print its CPU seconds (user + system).
cpu() {
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >"$tmp/stdout" 2>>"$tmp/err" || {
		cat "$tmp/stdout" >>"$tmp/err"
		return 1
	}
	awk '{ printf "%.2f", $1 + $2 }' "$tmp/time"
}

printf '| model | nodes | kernels | import | fuse | tile | mma | smem | codegen | run (CPU) | max err | result |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
fail=0
for m in "$@"; do
	f=$zoo/$m.onnx
	nodes=$("$python" -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$f")
	: >"$tmp/err"
	row="" prev=$f k="-" err="-" res=ok
	atol=$("$python" -c "
import numpy as np, sys
print('%.3g' % max(1e-5 * np.abs(np.load(sys.argv[1])).max(), 1e-6))" \
		"$zoo/$m.out.npy")
	for s in import fuse tile mma smem codegen run; do
		case $s in
		codegen) t=$(cpu "$bin/pb-codegen" "$prev" -o "$tmp/k.ptx") ;;
		run) t=$(cpu "$bin/pb-run" --device=cpu "$prev" \
			--input "$zoo/$m.in.npy" --output "$tmp/out" \
			--check "$zoo/$m.out.npy" --rtol "$rtol" --atol "$atol") ;;
		*) t=$(cpu "$bin/pb-$s" "$prev" -o "$tmp/$s.mlir") ;;
		esac || {
			res="FAIL ($s: $(grep -m1 -E 'error|mismatch' "$tmp/err" | cut -c1-140))"
			t="-"
		}
		row="$row | $t"
		case $s in codegen | run) ;; *) prev=$tmp/$s.mlir ;; esac
		[ "$s" = fuse ] && [ "$t" != - ] &&
			k=$(grep -c 'pb.kernel' "$tmp/fuse.mlir")
		[ "$res" = ok ] || break
	done
	out=$(ls "$tmp"/out/*.npy 2>/dev/null | head -1)
	if [ -n "$out" ]; then
		err=$("$python" -c "
import numpy as np, sys
g, w = np.load(sys.argv[1]), np.load(sys.argv[2])
print('%.1e' % (np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)))" \
			"$out" "$zoo/$m.out.npy")
	fi
	rm -rf "$tmp/out"
	[ "$res" = ok ] || fail=1
	printf '| %s | %s | %s%s | %s | %s |\n' "$m" "$nodes" "$k" "$row" "$err" "$res"
done
exit $fail
