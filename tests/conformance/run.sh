#!/bin/sh
# ONNX conformance: every test of libonnx-testdata's node, pytorch-converted,
# pytorch-operator and simple suites (a dir with model.onnx and
# test_data_set_0) through
#   pb-import model.onnx | pb-run --device=cpu --data test_data_set_0 -
# with --rtol 1e-3 --atol 1e-5 for every test, two at a time (xargs -P).
# Each test is
#   passed   imported, ran, and matched the reference outputs;
#   failed   imported, but wrong numbers or an error in a later stage;
#   skipped  pb-import rejected the model (its one-line reason is kept),
#            or tests/conformance/defects.txt names the test: its data
#            contradicts the model or the operator's definition (the
#            reason given there is kept).
# Prints one line per failure and skip, then "N passed, M failed, K skipped"
# last. Exit status 1 when any test failed (skips do not fail).
# Usage: run.sh [--fast] [--stages] [--report FILE]
#   --fast         only the node tests named in tests/e2e/node-tests.txt and
#                  tests/conformance/fast.txt (for make check)
#   --stages       run every stage: pb-import | pb-fuse | pb-tile | pb-mma |
#                  pb-smem | pb-run (the mapped IR, run on the CPU)
#   --report FILE  write the per-op table (docs/ops.md) to FILE
# Environment: PB_BUILD (default ./build), ONNX_DATA, JOBS (default 2),
# PYTHON (for the report: onnx reads each model's op types).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${PB_BUILD:-$root/build}/bin
data=${ONNX_DATA:-/usr/share/libonnx-testdata/data}
jobs=${JOBS:-2}
python=${PYTHON:-/usr/bin/python3}

# --one SUITE/TEST OUTDIR: run one test, write "status<TAB>reason" to
# OUTDIR/SUITE__TEST.
if [ "${1:-}" = --one ]; then
	t=$2 dir=$data/$2 res=$3/$(echo "$2" | sed 's|/|__|')
	defect=$(awk -F '\t' -v t="$t" '$1 == t { print $2 }' "$here/defects.txt")
	if [ -n "$defect" ]; then
		printf 'skipped\t%s\n' "$defect" >"$res"
		exit 0
	fi
	err=$(mktemp)
	if ! "$bin/pb-import" "$dir/model.onnx" </dev/null 2>"$err" >"$err.mlir"; then
		reason=$(grep -m1 'error' "$err" | sed "s|^.*error: ||; s|^node '[^']*' ||")
		[ -n "$reason" ] || reason=$(head -n1 "$err")
		printf 'skipped\t%s\n' "${reason:-pb-import failed}" >"$res"
	elif { [ "${PB_CONF_STAGES:-0}" = 0 ] || { "$bin/pb-smem" "$err.mlir" \
		-o "$err.smem" 2>"$err.out" && mv "$err.smem" "$err.mlir"; }; } &&
		timeout 120 "$bin/pb-run" --device=cpu --rtol 1e-3 --atol 1e-5 \
		--data "$dir/test_data_set_0" - <"$err.mlir" >>"$err.out" 2>&1; then
		printf 'passed\t\n' >"$res"
	else
		reason=$(grep -m1 -i 'error\|mismatch\|differ' "$err.out" | cut -c1-200)
		[ -n "$reason" ] || reason=$(head -n1 "$err.out" | cut -c1-200)
		printf 'failed\t%s\n' "${reason:-pb-run failed}" >"$res"
	fi
	rm -f "$err" "$err.mlir" "$err.out" "$err.smem"
	exit 0
fi

fast=0 report=
PB_CONF_STAGES=0
while [ $# -gt 0 ]; do
	case $1 in
	--fast) fast=1 ;;
	--stages) PB_CONF_STAGES=1 ;;
	--report) report=$2; shift ;;
	*) echo "usage: $0 [--fast] [--stages] [--report FILE]" >&2; exit 2 ;;
	esac
	shift
done

if [ ! -d "$data/node" ]; then
	echo "SKIP: conformance ($data/node is absent; install libonnx-testdata)"
	echo "0 passed, 0 failed, 0 skipped"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/res"
if [ $fast = 1 ]; then
	grep -hv '^#' "$root/tests/e2e/node-tests.txt" | sed 's|^|node/|' >"$tmp/list"
	grep -hv '^#' "$here/fast.txt" >>"$tmp/list"
	sort -u -o "$tmp/list" "$tmp/list"
else
	for s in node pytorch-converted pytorch-operator simple; do
		for d in "$data/$s"/*/; do
			[ -f "$d/model.onnx" ] && [ -d "$d/test_data_set_0" ] &&
				echo "$s/$(basename "$d")"
		done
	done >"$tmp/list"
fi
export PB_CONF_STAGES
xargs -P "$jobs" -I{} sh "$here/run.sh" --one {} "$tmp/res" <"$tmp/list"

pass=0 fail=0 skip=0
while read -r t; do
	f=$tmp/res/$(echo "$t" | sed 's|/|__|')
	if [ -f "$f" ]; then
		status=$(cut -f1 "$f") reason=$(cut -f2- "$f")
	else
		status=failed reason="no result"
	fi
	printf '%s\t%s\t%s\n' "$t" "$status" "$reason" >>"$tmp/results.tsv"
	case $status in
	passed) pass=$((pass + 1)) ;;
	skipped) skip=$((skip + 1)); echo "SKIP: $t: $reason" ;;
	*) fail=$((fail + 1)); echo "FAIL: $t: $reason" ;;
	esac
done <"$tmp/list"
if [ -n "$report" ]; then
	ONNX_DATA=$data "$python" "$here/report.py" "$tmp/results.tsv" >"$report" ||
		echo "conformance: warning: could not write $report" >&2
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
