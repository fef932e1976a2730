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
#
# DIR is the prepared folder (default bench/gpu). --dry-run only checks the
# folder and prints what it would run (works on any machine). The
# per-case pb-prof reports and summary.json go to RESULTS (default
# DIR/results). Exit status 0 when every case matched its reference.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=$here/gpu
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
