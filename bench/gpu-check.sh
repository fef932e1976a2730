#!/bin/sh
# The GPU check: on a machine with a GPU, CUDA's driver and PyTorch (no
# LLVM needed), run the cases that bench/gpu-prepare.sh compiled (models,
# operator cases, ONNX node tests) with pb-run-lite (checked against their
# references) and pb-prof-lite (timed with CUDA events), time the same
# computation in PyTorch (eager, torch.compile) and library kernels
# (Triton's tutorial matmul, SDPA), print one table and write
# RESULTS/measured.json for bench/fit.py. See bench/README.md.
#
#   bench/gpu-check.sh [--dry-run] [DIR] [--out RESULTS] [--only SUBSTR] [--repeat N]
#                      [--baselines eager,compile,lib]
#   bench/gpu-check.sh --tile DIR
#
# --tile DIR: the tile part, the Tile IR backend's artifacts that
# bench/tileir.sh --gpu-prepare DIR made (docs/tileir.md, "Launching"):
# for each case of DIR/tileir (the f16 GEMM 1024 checked against its
# reference, 4096 on random inputs, the shared models against theirs),
# its PTX artifact (k.ptx), tile artifact (k.tile: LDG on sm_90) and TMA
# tile artifact (k-tma.tile), each run once with pb-run-lite, checked,
# the cuTile way (the cubin as a library, blocks of 1x1x1; the driver
# builds the TMA descriptors with the cubin's host code) and, when that
# fails, the other way (PB_TILE_LAUNCH=module: cuModuleLoadDataEx, the
# threads as the block), then timed with pb-prof-lite (median of 20 on
# random inputs). One table: which way each tile artifact ran (library,
# module, or the first error line of each), and the times. What to read
# from it: "library" on k.tile and k-tma.tile confirms the launch
# protocol pb implements, and then --tile-tma can become the default on
# sm_90; "module" only means the loader or the block is wrong (the other
# way is right); k-tma.tile failing where k.tile runs means that the
# driver does not run the .nv.host callbacks itself.
#
# DIR is the prepared folder (default bench/gpu). --dry-run only checks the
# folder and prints what it would run (works on any machine). The
# per-case pb-prof reports and summary.json go to RESULTS (default
# DIR/results). Exit status 0 when every case matched its reference.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=$here/gpu

# tile_check DIR: the tile part (above)
tile_check() {
	bin=$1/bin
	t=$(mktemp -d)
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
	echo "| case | artifact | run | ms (median of 20) | TFLOP/s |"
	echo "|---|---|---|---|---|"
	st=0
	for d in "$1"/tileir/*/; do
		d=${d%/}
		name=$(basename "$d")
		if [ -f "$d/ref.npy" ]; then
			io="--input=a.npy --input=b.npy --check=ref.npy --rtol=1e-2 --atol=1e-2"
		elif [ -f "$d/in.npy" ]; then
			io="--input=in.npy --check=out.npy --rtol=1e-3 --atol=1e-4"
		else
			io=--random
		fi
		case $name in gemm*) n=${name#gemm}; flops=$((2 * n * n * n)) ;; *) flops=0 ;; esac
		for a in k.ptx k.tile k-tma.tile; do
			[ -f "$d/$a" ] || continue
			how=library
			case $a in *.ptx) how=ptx ;; esac
			# shellcheck disable=SC2086
			if ! (cd "$d" && "$bin/pb-run-lite" "$a" $io) >"$t/log" 2>&1; then
				first=$(grep -m1 'error' "$t/log")
				how="FAIL: $first"
				# shellcheck disable=SC2086
				case $a in *.tile)
					if (cd "$d" && PB_TILE_LAUNCH=module "$bin/pb-run-lite" "$a" $io) >"$t/log" 2>&1; then
						how="module (library: $first)"
					else
						how="FAIL: library: $first; module: $(grep -m1 error "$t/log")"
					fi ;;
				esac
			fi
			ms=- tf=-
			case $how in
			FAIL*) st=1 ;;
			*)	env=
				case $how in module*) env=module ;; esac
				if (cd "$d" && PB_TILE_LAUNCH=$env "$bin/pb-prof-lite" "$a" --random --repeat=20 --json="$t/p.json") >/dev/null 2>&1; then
					ms=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["total_median_ms"])' "$t/p.json")
					[ "$flops" -gt 0 ] && tf=$(python3 -c 'import sys; print("%.0f" % (float(sys.argv[1]) / float(sys.argv[2]) / 1e9))' "$flops" "$ms")
				fi ;;
			esac
			echo "| $name | $a | $how | $ms | $tf |"
		done
	done
	rm -rf "$t"
	return $st
}
if [ "${1:-}" = --tile ]; then
	[ -d "${2:-}/tileir" ] || { echo "gpu-check: no ${2:-}/tileir (run bench/tileir.sh --gpu-prepare DIR first)" >&2; exit 1; }
	tile_check "$2"
	exit
fi
dry=
rest=
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=--dry-run ;;
	--out|--only|--repeat|--baselines) rest="$rest $1 $2"; shift ;;
	--*) rest="$rest $1" ;;
	*) dir=$1 ;;
	esac
	shift
done
python=${PYTHON:-}
if [ -z "$python" ]; then
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import onnx, numpy' 2>/dev/null; then
			python=$p
			break
		fi
	done
fi
[ -n "$python" ] || { echo "gpu-check: no python3 with onnx and numpy" >&2; exit 1; }
[ -d "$dir" ] || { echo "gpu-check: no $dir (run bench/gpu-prepare.sh first)" >&2; exit 1; }
if [ -z "$dry" ]; then
	nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>/dev/null
fi
# shellcheck disable=SC2086
exec "$python" "$here/gpu_check.py" "$dir" $dry $rest
