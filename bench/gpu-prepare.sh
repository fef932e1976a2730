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
# another pipeline side by side).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${1:-$here/gpu}
build=${PB_BUILD:-$root/build}
python=${PYTHON:-/usr/bin/python3}
models=${PB_MODELS:-$root/../shared/models}
onnxdata=${PB_ONNXDATA:-/usr/share/libonnx-testdata/data/node}
arch=${PB_ARCH:-sm_90}
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
cp "$here/gpu_check.py" "$out/" || exit 1

ok=0 failed=0
# compile DIR: DIR/model.onnx -> DIR/k.ptx through the pipeline, run in
# DIR so that the plan's source is "model.onnx", next to k.ptx
compile() {
	if (cd "$1" && PATH=$bin:$PATH && "$bin/pb-import" model.onnx |
	    "$pipeline" --arch="$arch" |
	    "$bin/pb-codegen" --arch="$arch" -o k.ptx) 2>"$1/compile.err"; then
		rm -f "$1/compile.err"
		ok=$((ok + 1))
	else
		echo "gpu-prepare: $(basename "$1"): $(head -1 "$1/compile.err")" >&2
		rm -rf "$1"
		failed=$((failed + 1))
	fi
}

for m in fashion_lenet squeezenet1_1 tiny_transformer_encoder; do
	[ -f "$models/$m.onnx" ] || { echo "gpu-prepare: no $models/$m.onnx" >&2; continue; }
	d=$out/models/$m
	mkdir -p "$d"
	cp "$models/$m.onnx" "$d/model.onnx"
	cp "$models/$m.in.npy" "$d/in.npy"
	cp "$models/$m.out.npy" "$d/out.npy"
	compile "$d"
done

"$python" "$here/gen_cases.py" "$out/ops" >/dev/null || exit 1
for d in "$out"/ops/*/; do
	compile "${d%/}"
done

"$python" "$here/tile_cases.py" gen "$out/tile" >/dev/null || exit 1
for d in "$out"/tile/*/; do
	compile "${d%/}"
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
