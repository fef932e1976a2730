#!/bin/sh
# Tiling bench, CPU side (no GPU needed): every case of bench/tile_cases.py
# (GEMM squares and transformer shapes, ResNet-50 and MobileNetV2
# convolutions, softmax and LayerNorm rows) through
#   pb-import | pb-fuse | pb-tile --report R.json | pb-mma | pb-smem | pb-codegen
# for sm_90 and sm_80, then `ptxas -v` on each PTX, and for the cases small
# enough for the CPU a numerics check of the pb-smem output by pb-run
# against a float64 NumPy reference. Prints one table: kernels, registers
# per thread (max over kernels), spill bytes (stores + loads, summed),
# stack frame (local memory, max), shared memory (max), the cost model's predicted time (sum over kernels of
# pb-tile's report; "-" while pb-tile has no --report), compile time of the
# sm_90 pipeline, the CPU check and its max relative error. See
# bench/README.md.
#
#   bench/tile.sh [--build DIR] [--only SUBSTR] [--keep DIR] [--md]
#
# --md prints the table in Markdown (for bench/RESULTS.md).
#
# Exit status 1 when a numerics check fails, ptxas rejects a PTX, a case
# does not compile or ptxas reports spills in a GEMM or convolution kernel.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
python=${PYTHON:-/usr/bin/python3}
ptxas=${PTXAS:-${CUDA_HOME:-/usr/local/cuda}/bin/ptxas}
only='' keep='' md=''
while [ $# -gt 0 ]; do
	case $1 in
	--md) md=--md ;;
	--build) build=$2; shift ;;
	--only) only=$2; shift ;;
	--keep) keep=$2; shift ;;
	*) echo "usage: bench/tile.sh [--build DIR] [--only SUBSTR] [--keep DIR] [--md]" >&2; exit 2 ;;
	esac
	shift
done
bin=$build/bin
for t in pb-import pb-fuse pb-tile pb-mma pb-smem pb-codegen pb-run; do
	[ -x "$bin/$t" ] || { echo "tile.sh: no $bin/$t (make B=$build)" >&2; exit 2; }
done
[ -x "$ptxas" ] || { echo "tile.sh: no ptxas at $ptxas" >&2; exit 2; }
if [ -n "$keep" ]; then
	tmp=$keep
	mkdir -p "$tmp" || exit 2
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
fi
# pb-tile writes its cost model's report when it knows --report
report=
"$bin/pb-tile" --help 2>/dev/null | grep -q -- '--report' && report=yes

# json FILE KEY: a top-level value of a meta.json
json() {
	"$python" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"
}

# lower DIR ARCH: DIR/fuse.mlir -> DIR/smem.ARCH.mlir and DIR/k.ARCH.ptx
lower() {
	r=
	[ -n "$report" ] && r="--report=$1/report.$2.json"
	# shellcheck disable=SC2086
	{ "$bin/pb-tile" --arch="$2" $r "$1/fuse.mlir" |
		"$bin/pb-mma" --arch="$2" | "$bin/pb-smem" --arch="$2" \
		-o "$1/smem.$2.mlir" &&
	"$bin/pb-codegen" --arch="$2" "$1/smem.$2.mlir" -o "$1/k.$2.ptx"
	} 2>>"$1/compile.err"
}

names=$("$python" "$here/tile_cases.py" gen "$tmp") || exit 1
echo "tile.sh: $(git -C "$root" log -1 --format='%h %s' 2>/dev/null | cut -c1-70)"
echo "tile.sh: pb-tile --report: ${report:-no (predicted time shown as -)}"
"$python" "$here/tile_cases.py" header $md
n=0 bad=0 checked=0 cfail=0 spills=0 nocomp=0 rejected=0
for name in $names; do
	d=$tmp/$name
	case $name in *"$only"*) ;; *) continue ;; esac
	n=$((n + 1))
	start=$(date +%s.%N)
	if { "$bin/pb-import" "$d/model.onnx" |
	    "$bin/pb-fuse" -o "$d/fuse.mlir"; } 2>"$d/compile.err" &&
	    lower "$d" sm_90; then
		awk -v s="$start" -v e="$(date +%s.%N)" \
			'BEGIN { printf "%.1f\n", e - s }' >"$d/compile.s"
		"$ptxas" -v -arch=sm_90 "$d/k.sm_90.ptx" -o /dev/null \
			>"$d/ptxas.sm_90.log" 2>&1 ||
			{ echo "tile.sh: $name: ptxas rejects the sm_90 PTX" >&2; : >"$d/ptxas.sm_90.log"; }
		if lower "$d" sm_80; then
			"$ptxas" -v -arch=sm_80 "$d/k.sm_80.ptx" -o /dev/null \
				>"$d/ptxas.sm_80.log" 2>&1 ||
				{ echo "tile.sh: $name: ptxas rejects the sm_80 PTX" >&2; : >"$d/ptxas.sm_80.log"; }
		else
			echo "tile.sh: $name: sm_80: $(grep -m1 error "$d/compile.err")" >&2
		fi
		if [ "$(json "$d/meta.json" cpu_check)" = True ]; then
			"$python" "$here/tile_cases.py" ref "$d" &&
			set -- &&
			for x in "$d"/in_*.npy; do set -- "$@" --input "$x"; done &&
			"$bin/pb-run" --device=cpu "$d/smem.sm_90.mlir" "$@" \
				--check "$d/ref.npy" --rtol "$(json "$d/meta.json" rtol)" \
				--atol "$(json "$d/meta.json" atol)" >"$d/check.out" 2>&1
			echo $? >"$d/check.rc"
			checked=$((checked + 1))
			rm -f "$d"/in_*.npy "$d/ref.npy"
		fi
	fi
	"$python" "$here/tile_cases.py" row "$d" $md
	case $? in
	0) ;;
	1) cfail=$((cfail + 1)); bad=$((bad + 1))
	   grep -m1 error "$d/check.out" >&2 ;;
	3) spills=$((spills + 1)); bad=$((bad + 1)) ;;
	5) rejected=$((rejected + 1)); bad=$((bad + 1)) ;;
	*) nocomp=$((nocomp + 1)); bad=$((bad + 1)) ;;
	esac
done
echo "== tile.sh: $n cases, $((n - nocomp)) compiled ($rejected rejected by ptxas), $checked checked on the CPU ($cfail failed), $spills with spills in a GEMM/conv kernel: $([ $bad -eq 0 ] && echo ok || echo FAIL)"
[ $bad -eq 0 ]
