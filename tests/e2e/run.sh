#!/bin/sh
# End-to-end numerics: ONNX node conformance tests and the shared models,
# each through every stage and run on the CPU against its reference:
#   pb-import m.onnx | pb-fuse | pb-tile | pb-mma | pb-smem | pb-run --data DIR -
# When CUDA's ptxas is present, each one's pb-codegen PTX must also assemble
# for sm_80 and sm_90 (ptx-sm_80/..., ptx-sm_90/...).
# Prints one line per test and the summary line "N passed, M failed".
# Environment: PB_BUILD (default ./build), ONNX_DATA, PB_MODELS,
# PB_SMEM_OPTS (pb-smem options, e.g. --stages=1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${PB_BUILD:-$root/build}/bin
data=${ONNX_DATA:-/usr/share/libonnx-testdata/data}
models=${PB_MODELS:-$root/../shared/models}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0 skip=0
# PB_SMEM_OPTS: options for pb-smem (--stages=1, --no-smem, ...)
smem_opts=${PB_SMEM_OPTS:-}
cuda=${CUDA_HOME:-/usr/local/cuda}
ptxas=$cuda/bin/ptxas
[ -x "$ptxas" ] || ptxas=

# run NAME MODEL ARGS...: the whole pipeline, pb-run with ARGS.
run() {
	name=$1 model=$2
	shift 2
	if "$bin/pb-import" "$model" </dev/null 2>"$tmp/err" |
		"$bin/pb-fuse" 2>>"$tmp/err" | "$bin/pb-tile" 2>>"$tmp/err" |
		"$bin/pb-mma" 2>>"$tmp/err" | "$bin/pb-smem" $smem_opts 2>>"$tmp/err" |
		"$bin/pb-run" "$@" - >"$tmp/out" 2>>"$tmp/err" &&
		! grep -q 'error' "$tmp/err"; then
		pass=$((pass + 1))
		echo "PASS: $name"
	else
		fail=$((fail + 1))
		echo "FAIL: $name"
		sed 's/^/    /' "$tmp/err" "$tmp/out" | head -8
	fi
}

# ptx NAME MODEL: pb-codegen's PTX for sm_80 and sm_90 must assemble, and
# ptxas must report no register spills in any kernel.
ptx() {
	name=$1 model=$2
	[ -n "$ptxas" ] || return 0
	: >"$tmp/ptxas"
	for arch in sm_80 sm_90; do
		if "$bin/pb-import" "$model" </dev/null 2>"$tmp/err" |
			"$bin/pb-smem" --arch=$arch $smem_opts 2>>"$tmp/err" |
			"$bin/pb-codegen" --arch=$arch -o "$tmp/k.ptx" 2>>"$tmp/err" &&
			"$ptxas" -v -arch=$arch "$tmp/k.ptx" -o "$tmp/k.cubin" \
				>"$tmp/ptxas" 2>&1 &&
			! grep -E '[1-9][0-9]* bytes spill (stores|loads)' "$tmp/ptxas" \
				>>"$tmp/err"; then
			pass=$((pass + 1))
			echo "PASS: ptx-$arch/$name"
		else
			fail=$((fail + 1))
			echo "FAIL: ptx-$arch/$name"
			{ cat "$tmp/err"; grep -iE 'error|fatal' "$tmp/ptxas"; } 2>/dev/null |
				sed 's/^/    /' | head -8
		fi
	done
}

[ -n "$ptxas" ] || echo "SKIP: PTX assembly checks (no ptxas under $cuda)"

if [ -d "$data/node" ]; then
	for t in $(grep -v '^#' "$here/node-tests.txt"); do
		run "node/$t" "$data/node/$t/model.onnx" \
			--data "$data/node/$t/test_data_set_0"
		ptx "node/$t" "$data/node/$t/model.onnx"
	done
else
	echo "SKIP: ONNX node tests ($data/node is absent; install libonnx-testdata)"
	skip=$((skip + 1))
fi

if [ -d "$models" ]; then
	grep -v '^#' "$here/models.txt" | while read -r m rtol atol; do
		[ -n "$m" ] && echo "$m $rtol $atol"
	done >"$tmp/models"
	# glibc fills freed and new memory with a pattern: a read of an
	# erased operation (MLIR is not under ASan) crashes or gives wrong
	# numbers instead of passing by chance
	export MALLOC_PERTURB_=165
	while read -r m rtol atol; do
		run "models/$m" "$models/$m.onnx" --input "$models/$m.in.npy" \
			--check "$models/$m.out.npy" --rtol "$rtol" --atol "$atol"
		ptx "models/$m" "$models/$m.onnx"
	done <"$tmp/models"
	unset MALLOC_PERTURB_
else
	echo "SKIP: shared models ($models is absent)"
	skip=$((skip + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
