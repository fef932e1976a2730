#!/bin/sh
# Static SASS bench (issue 12's "Measured"; no GPU needed): every case of
# bench/tile_cases.py (GEMMs, ResNet-50 and MobileNetV2 convolutions,
# softmax and LayerNorm rows) compiled by pb-prof --static through the
# whole pipeline to PTX, assembled (ptxas -v) and disassembled (nvdisasm),
# side by side with Triton's tutorial matmul kernel (fp32 and fp16)
# compiled for the same target. Prints one table: per case its main
# kernel (the longest predicted), that kernel's registers, spills and
# occupancy and its hottest inner loop's mix. See bench/README.md.
#
#   bench/static.sh [--build DIR] [--arch A[,A...]] [--only SUBSTR]
#                   [--keep DIR] [--md] [--no-triton] [--cast f16|bf16]
#                   [--precision fp32|tf32] [--pipeline NAME] [--weights]
#
# --weights makes the convolutions' weights and bias initializers, as in a
# model (tile_cases.py gen --weights), so that pb-mma may store them in
# the layout the tensor cores read (pb.perm, docs/pb-mma.md).
#
# --cast imports every case with pb-import --cast (the model in half
# precision, as model.half() exports it): the GEMMs then go to tensor
# cores through pb-mma (wgmma with --arch sm_90a, mma.sync otherwise;
# Triton's kernel is compiled for the same arch). --precision=tf32
# compiles the float32 cases with their contractions on tf32 tensor cores
# (docs/pb-mma.md). --pipeline compiles through a named pipeline
# (pipelines/; fp16 and bf16 also fuse attention and put it on tensor
# cores: --pipeline fp16 --only attn).
#
# nvdisasm and Triton come from PyPI (nvidia-cuda-nvdisasm, triton) into
# the bench's own virtual environment, $PB_BENCH_VENV (default
# ~/.cache/pb-bench/venv), made on the first run; make check never needs
# them. Exit status 1 when a case does not compile or ptxas rejects it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
python=${PYTHON:-/usr/bin/python3}
venv=${PB_BENCH_VENV:-$HOME/.cache/pb-bench/venv}
archs=sm_90,sm_80 only='' keep='' md='' triton=yes cast= precision= pipeline= weights=
while [ $# -gt 0 ]; do
	case $1 in
	--md) md=--md ;;
	--no-triton) triton= ;;
	--build) build=$2; shift ;;
	--arch) archs=$2; shift ;;
	--only) only=$2; shift ;;
	--cast) cast=$2; shift ;;
	--precision) precision=$2; shift ;;
	--pipeline) pipeline=$2; shift ;;
	--weights) weights=--weights ;;
	--keep) keep=$2; shift ;;
	*) echo "usage: bench/static.sh [--build DIR] [--arch A[,A...]] [--only SUBSTR] [--keep DIR] [--md] [--no-triton] [--cast f16|bf16] [--precision fp32|tf32] [--pipeline NAME] [--weights]" >&2; exit 2 ;;
	esac
	shift
done
prof=$build/bin/pb-prof
[ -x "$prof" ] || { echo "static.sh: no $prof (make B=$build)" >&2; exit 2; }

# The bench's virtual environment: nvdisasm (and triton) from PyPI.
pkgs=nvidia-cuda-nvdisasm
[ -n "$triton" ] && pkgs="$pkgs triton"
if [ ! -x "$venv/bin/python" ]; then
	echo "static.sh: making $venv" >&2
	python3 -m venv "$venv" || exit 2
fi
for p in $pkgs; do
	"$venv/bin/pip" show -q "$p" >/dev/null 2>&1 ||
		"$venv/bin/pip" install -q "$p" >&2 || exit 2
done
if [ -z "${PB_NVDISASM:-}" ]; then
	PB_NVDISASM=$(ls "$venv"/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm 2>/dev/null | head -1)
	export PB_NVDISASM
fi
[ -x "${PB_NVDISASM:-}" ] || { echo "static.sh: no nvdisasm in $venv" >&2; exit 2; }

if [ -n "$keep" ]; then
	tmp=$keep
	mkdir -p "$tmp" || exit 2
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
fi
names=$("$python" "$here/tile_cases.py" gen "$tmp" $weights) || exit 1
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
echo "static.sh: $(git -C "$root" log -1 --format='%h %s' 2>/dev/null | cut -c1-70)${cast:+ (cases cast to $cast)}${precision:+ (--precision=$precision)}${pipeline:+ (--pipeline=$pipeline)}${weights:+ (weights as initializers)}"
echo "static.sh: $("$ptxas" --version | tail -1 | cut -c1-40); nvdisasm $("$PB_NVDISASM" --version | tail -1 | cut -c1-40)"
bad=0
for arch in $(echo "$archs" | tr ',' ' '); do
	for name in $names; do
		case $name in *"$only"*) ;; *) continue ;; esac
		d=$tmp/$name
		in=$d/model.onnx
		if [ -n "$cast" ]; then
			in=$d/model.$cast.mlir
			if ! "$build/bin/pb-import" --cast="$cast" "$d/model.onnx" \
				-o "$in" 2>"$d/static.$arch.err"; then
				echo "static.sh: $name: $(head -c 300 "$d/static.$arch.err")" >&2
				bad=1
				continue
			fi
		fi
		if ! "$prof" --static --arch="$arch" ${precision:+--precision=$precision} \
			${pipeline:+--pipeline=$pipeline} "$in" \
			--json "$d/static.$arch.json" >"$d/static.$arch.txt" \
			2>"$d/static.$arch.err"; then
			echo "static.sh: $name ($arch): $(head -c 300 "$d/static.$arch.err")" >&2
			bad=1
		fi
	done
	if [ -n "$triton" ]; then
		t=$tmp/triton
		if TRITON_DEFAULT_FP_FUSION=1 "$venv/bin/python" "$here/static_triton.py" \
			"$t" --arch "$arch" >/dev/null 2>"$t.$arch.err"; then
			for f in "$t"/triton_*_"$arch".ptx; do
				# Triton 3.9 writes PTX 9.4; CUDA 13.0's ptxas takes 9.0
				sed 's/^\.version 9\.[1-9]$/.version 9.0/' "$f" >"$f.90"
				"$prof" --static "$f.90" --json "${f%.ptx}.static.json" \
					>/dev/null 2>>"$t.$arch.err" || bad=1
			done
		else
			echo "static.sh: triton ($arch): $(tail -c 300 "$t.$arch.err")" >&2
			bad=1
		fi
	fi
done
"$python" "$here/static_table.py" "$tmp" "$archs" $md
exit $bad
