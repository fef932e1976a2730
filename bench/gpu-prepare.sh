#!/bin/sh
# Prepare the GPU check: compile models, operator cases, the tiling bench's
# cases (bench/tile_cases.py) and ONNX node tests
# to k.ptx here (where LLVM/MLIR is), and put them with pb-run-lite and
# pb-prof-lite into one folder (default bench/gpu, git-ignored) to copy to a
# GPU machine that has CUDA and PyTorch but no LLVM. See bench/README.md.
#
#   bench/gpu-prepare.sh [OUTDIR]
#
# Environment: PB_BUILD (default build; the tools and the lite tools are
# made there first), PYTHON (default /usr/bin/python3, with onnx),
# PB_MODELS (default ../shared/models), PB_ONNXDATA (default
# /usr/share/libonnx-testdata/data/node), PB_ARCH (default sm_90),
# PB_PIPELINE (default default: a named pipeline of pipelines/ or a script,
# so that `PB_PIPELINE=no-fusion bench/gpu-prepare.sh gpu-nofusion` times
# another pipeline side by side), PB_TARGET (default h200: the description
# of the device the cost model's predictions are recorded for, next to the
# measured times, for bench/fit.py).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${1:-$here/gpu}
build=${PB_BUILD:-$root/build}
python=${PYTHON:-/usr/bin/python3}
models=${PB_MODELS:-$root/../shared/models}
onnxdata=${PB_ONNXDATA:-/usr/share/libonnx-testdata/data/node}
arch=${PB_ARCH:-sm_90}
target=${PB_TARGET:-h200}
pipeline=${PB_PIPELINE:-default}
case $pipeline in */*) ;; *) pipeline=$root/pipelines/$pipeline ;; esac
case $pipeline in /*) ;; *) pipeline=$(pwd)/$pipeline ;; esac

make -C "$root" --no-print-directory -j2 B="$build" all >/dev/null || {
	echo "gpu-prepare: build failed" >&2; exit 1; }
bin=$build/bin
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
rm -rf "$out" && mkdir -p "$out/bin" "$out/models" "$out/ops" "$out/tile" "$out/node" || exit 1
for t in pb-run-lite pb-prof-lite; do
	strip -o "$out/bin/$t" "$bin/$t" || exit 1
done
cp "$here/gpu_check.py" "$here/static_triton.py" "$out/" || exit 1
# how bench/fit.py rebuilds the kernels: the pipeline's pb-fuse options
fuse_opts=$(sed -n 's/.*pb-fuse \([^"|]*\)"\$@".*/\1/p' "$pipeline" | head -1)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
"$python" - "$out/fit.json" "$target" "$arch" "$commit" $fuse_opts <<'PY' || exit 1
import json, sys
json.dump({"target": sys.argv[2], "arch": sys.argv[3], "commit": sys.argv[4],
           "stages": {"pb-fuse": sys.argv[5:]}}, open(sys.argv[1], "w"), indent=1)
PY

ok=0 failed=0
# compile DIR [IMPORT-OPTION]: DIR/model.onnx -> DIR/k.ptx through the
# pipeline, run in DIR so that the plan's source is "model.onnx", next to
# k.ptx; then the cost model's view of it for bench/fit.py: the sizes
# pb-tile chose (sizes.txt, --dump-sizes) and, with those sizes, its
# predictions on $target (predicted.json, pb-tile's --report)
compile() {
	if (cd "$1" && PATH=$bin:$PATH && "$bin/pb-import" ${2:-} model.onnx |
	    "${vpipeline:-$pipeline}" --arch="$arch" ${precision:+--precision=$precision} |
	    "$bin/pb-codegen" --arch="$arch" -o k.ptx) 2>"$1/compile.err"; then
		rm -f "$1/compile.err"
		ok=$((ok + 1))
	else
		echo "gpu-prepare: $(basename "$1"): $(head -1 "$1/compile.err")" >&2
		rm -rf "$1"
		failed=$((failed + 1))
		return
	fi
	# shellcheck disable=SC2086
	(cd "$1" && "$bin/pb-import" ${2:-} model.onnx |
	    "$bin/pb-fuse" --arch="$arch" $fuse_opts >fuse.tmp &&
	    "$bin/pb-tile" --arch="$arch" ${precision:+--precision=$precision} \
		--dump-sizes -o /dev/null <fuse.tmp 2>sizes.txt &&
	    if [ -s sizes.txt ]; then set -- "--sizes=$(cat sizes.txt)"; else set --; fi &&
	    "$bin/pb-tile" --arch="$arch" ${precision:+--precision=$precision} \
		--target-file "$target" "$@" \
		--report predicted.json -o /dev/null <fuse.tmp) 2>"$1/predict.err" ||
		echo "gpu-prepare: $(basename "$1"): no prediction: $(head -1 "$1/predict.err")" >&2
	rm -f "$1/fuse.tmp" "$1/predict.err"
}

# variant DIR NAME KEY VALUE: DIR@NAME beside DIR, a copy whose meta.json
# says KEY: VALUE with tolerances 1e-2, compiled by compile with the
# options of $import and $precision set for it
variant() {
	h=$1@$2
	mkdir -p "$h" && cp "$1"/*.onnx "$1"/*.npy "$h/" 2>/dev/null
	"$python" - "$1/meta.json" "$h/meta.json" "$3" "$4" <<'PY' || exit 1
import json, os, sys
m = json.load(open(sys.argv[1])) if os.path.exists(sys.argv[1]) else {}
m.update({sys.argv[3]: sys.argv[4]}, rtol=1e-2, atol=1e-2)
json.dump(m, open(sys.argv[2], "w"))
PY
	compile "$h" $import
	import= precision= vpipeline=
}
import= precision= vpipeline=

# half DIR: DIR@f16, the same model compiled with pb-import --cast=f16
# (inputs rounded to float16 by gpu_check.py)
half() {
	import=--cast=f16
	variant "$1" f16 cast f16
}

# tf32 DIR: DIR@tf32, the same model compiled with --precision=tf32
# (float32 contractions on tensor cores; gpu_check.py times torch with
# TF32 allowed for it)
tf32() {
	precision=tf32
	variant "$1" tf32 precision tf32
}

# autocast DIR: DIR@fp16, the same model compiled with --precision=fp16
# (float32 contractions on f16 tensor cores, the rest float32;
# gpu_check.py times torch under torch.autocast for it)
autocast() {
	precision=fp16
	variant "$1" fp16 precision fp16
}

# flash DIR: an attention case's @f16 and @fp16 variants compiled through
# pipelines/fp16, which fuses attention and puts both of its products on
# tensor cores (docs/pb-mma.md, "Attention"); gpu_check.py times torch's
# scaled_dot_product_attention beside them
flash() {
	vpipeline=$root/pipelines/fp16
	half "$1"
	vpipeline=$root/pipelines/fp16
	autocast "$1"
}

for m in fashion_lenet squeezenet1_1 tiny_transformer_encoder; do
	[ -f "$models/$m.onnx" ] || { echo "gpu-prepare: no $models/$m.onnx" >&2; continue; }
	d=$out/models/$m
	mkdir -p "$d"
	cp "$models/$m.onnx" "$d/model.onnx"
	cp "$models/$m.in.npy" "$d/in.npy"
	cp "$models/$m.out.npy" "$d/out.npy"
	compile "$d"
	[ -d "$d" ] && half "$d"
	[ -d "$d" ] && tf32 "$d"
	[ -d "$d" ] && autocast "$d"
done

"$python" "$here/gen_cases.py" "$out/ops" >/dev/null || exit 1
for d in "$out"/ops/*/; do
	compile "${d%/}"
done

"$python" "$here/tile_cases.py" gen "$out/tile" >/dev/null || exit 1
for d in "$out"/tile/*/; do
	compile "${d%/}"
	case $d in
	*/attn_* | */sdpa_*) [ -d "$d" ] && flash "${d%/}" ;;
	*) [ -d "$d" ] && half "${d%/}" ;;
	esac
	case $d in */gemm_*) [ -d "$d" ] && tf32 "${d%/}" && autocast "${d%/}" ;; esac
done

for t in $(grep -v '^#' "$here/node-tests.txt"); do
	[ -d "$onnxdata/$t" ] || { echo "gpu-prepare: no $onnxdata/$t" >&2; continue; }
	d=$out/node/$t
	mkdir -p "$d"
	cp "$onnxdata/$t/model.onnx" "$d/"
	cp -r "$onnxdata/$t/test_data_set_0" "$d/"
	compile "$d"
done
size=$(du -sk "$out" | cut -f1)
echo "gpu-prepare: $ok k.ptx files ($failed failed to compile) in $out, $((size / 1024)) MiB"
[ "$size" -lt 60000 ] || { echo "gpu-prepare: $out is over 60 MiB" >&2; exit 1; }
