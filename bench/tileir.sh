#!/bin/bash
# The static bench of the Tile IR backend (docs/tileir.md, bench/RESULTS.md):
# an fp16 GEMM 4096^3 (f32 accumulation) through pb-codegen --backend=tile
# (on sm_90 also with --tile-tma: the buffers assumed aligned, so that
# tileiras loads and stores through TMA, descriptors built by the driver
# from the cubin's host code) and through the PTX backend, for sm_90 and
# sm_80, and the same GEMM written in cuTile Python when CUTILE_PYTHON
# names a python with cuda-tile (PyPI; e.g. /work/venv-tile/bin/python),
# specialized as cuTile's launcher specializes it for contiguous arrays
# (on sm_90 also with the last stride left dynamic): the SASS of each
# (nvdisasm), its hottest loop (the one with the most tensor-core
# instructions) and what feeds it. CPU only: tileiras, ptxas, nvdisasm.
#
#   bench/tileir.sh [--size N] [--md]
#   bench/tileir.sh --models     the shared models through --backend=tile
#                                for sm_90 and sm_80: kernels assembled, time
#   bench/tileir.sh --gpu-prepare DIR  the tile part of the GPU check
#                                (bench/gpu-check.sh --tile DIR): the f16
#                                GEMM 1024 (inputs and reference) and 4096
#                                (timed on random inputs) and the shared
#                                models (in.npy, out.npy) for sm_90, each as
#                                a tile artifact (k.tile), with --tile-tma
#                                (k-tma.tile) and through the PTX backend
#                                (k.ptx), with pb-run-lite and pb-prof-lite
#   bench/tileir.sh --e2e [--zoo] the e2e cases (tests/e2e: the ONNX node
#                                tests of node-tests.txt that import, the
#                                shared models, half.py's models) through
#                                --backend=tile for sm_90 and sm_80: one line
#                                per case and arch (translated, assembled, or
#                                the first error) and the counts; with --zoo
#                                also ~/.cache/pb-zoo's models, translated
#                                only (--emit=tileirbc: tileiras would take
#                                minutes per model)
# Needs: build/ (make), tileiras (PATH, $PB_TILEIRAS or build/venv-tile),
# ptxas (/usr/local/cuda), nvdisasm ($PB_NVDISASM or PATH).
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
N=4096
while [ $# -gt 0 ]; do
	case "$1" in
	--size) N=$2; shift 2 ;;
	--md) shift ;;
	--models) models=1; shift ;;
	--e2e) e2e=1; shift ;;
	--zoo) zoo=1; shift ;;
	--gpu-prepare) prep=$2; shift 2 ;;
	*) echo "usage: bench/tileir.sh [--size N] [--md] | --models | --e2e [--zoo] | --gpu-prepare DIR" >&2; exit 2 ;;
	esac
done
export PATH="$root/build/bin:$PATH"
NVDISASM=${PB_NVDISASM:-$(command -v nvdisasm || true)}
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
TILEIRAS=${PB_TILEIRAS:-$(command -v tileiras || ls "$root"/build/venv-tile/lib/python3*/site-packages/nvidia/cu*/bin/tileiras 2>/dev/null | tail -1)}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# gemm ONNX N: an f16 MatMul N x N x N (f32 accumulation) into ONNX
gemm() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
n = int(sys.argv[2])
g = helper.make_graph(
    [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], "gemm",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT16, [n, n]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT16, [n, n])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [n, n])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
}
if [ -n "$prep" ]; then
	# three artifacts of DIR/model.onnx for sm_90, run in DIR so that the
	# plans' source is model.onnx: k.tile, k-tma.tile (--tile-tma) and
	# k.ptx (the PTX backend's default pipeline)
	artifacts() {
		(cd "$1" && pb-import model.onnx | pb-fuse > fuse.mlir &&
		 pb-codegen --backend=tile --tileiras="$TILEIRAS" fuse.mlir -o k.tile &&
		 pb-codegen --backend=tile --tile-tma --tileiras="$TILEIRAS" fuse.mlir -o k-tma.tile &&
		 pb-import model.onnx | "$root/pipelines/default" | pb-codegen -o k.ptx &&
		 rm fuse.mlir)
	}
	make -C "$root" --no-print-directory -j2 all >/dev/null
	rm -rf "$prep" && mkdir -p "$prep/bin" "$prep/tileir"
	for x in pb-run-lite pb-prof-lite; do
		strip -o "$prep/bin/$x" "$root/build/bin/$x"
	done
	for n in 1024 4096; do
		d=$prep/tileir/gemm$n
		mkdir -p "$d"
		gemm "$d/model.onnx" $n
		artifacts "$d"
	done
	/usr/bin/python3 - "$prep/tileir/gemm1024" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (1024, 1024)).astype(np.float16)
b = rng.uniform(-1, 1, (1024, 1024)).astype(np.float16)
np.save(d + "/a.npy", a)
np.save(d + "/b.npy", b)
np.save(d + "/ref.npy", (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
PY
	for m in fashion_lenet squeezenet1_1 tiny_transformer_encoder; do
		d=$prep/tileir/$m
		mkdir -p "$d"
		cp "$root/../shared/models/$m.onnx" "$d/model.onnx"
		cp "$root/../shared/models/$m.in.npy" "$d/in.npy"
		cp "$root/../shared/models/$m.out.npy" "$d/out.npy"
		artifacts "$d"
	done
	echo "tileir.sh: $(ls "$prep"/tileir/*/k*.tile | wc -l) tile artifacts in $prep, $(du -sm "$prep" | cut -f1) MiB; on the GPU: bench/gpu-check.sh --tile $prep"
	exit 0
fi
if [ -n "$e2e" ]; then
	# case NAME MODEL: import and fuse, then translate and assemble for
	# each arch; a case that does not import is not counted
	cases=0 translated=0 assembled=0 zcases=0 ztranslated=0
	case_() {
		if ! pb-import "$2" </dev/null 2>/dev/null | pb-fuse >"$t/m.mlir" 2>/dev/null; then
			echo "SKIP: $1 (does not import)"
			return
		fi
		cases=$((cases + 1))
		for arch in sm_90 sm_80; do
			if ! pb-codegen --backend=tile --emit=tileirbc --arch=$arch "$t/m.mlir" -o "$t/m.bc" 2>"$t/err"; then
				echo "FAIL: $arch/$1: $(head -1 "$t/err")"
				continue
			fi
			translated=$((translated + 1))
			if pb-codegen --backend=tile --tileiras="$TILEIRAS" --arch=$arch "$t/m.mlir" -o "$t/m.tile" 2>"$t/err"; then
				assembled=$((assembled + 1))
				echo "PASS: $arch/$1 ($(grep -c '"kernel":' "$t/m.tile") launches)"
			else
				echo "FAIL: $arch/$1: $(head -1 "$t/err")"
			fi
		done
	}
	data=${ONNX_DATA:-/usr/share/libonnx-testdata/data}/node
	for n in $(grep -v '^#' "$root/tests/e2e/node-tests.txt"); do
		case_ "node/$n" "$data/$n/model.onnx"
	done
	for m in $(grep -v '^#' "$root/tests/e2e/models.txt" | awk '{print $1}'); do
		case_ "models/$m" "$root/../shared/models/$m.onnx"
	done
	/usr/bin/python3 "$root/tests/e2e/half.py" "$t/half" >"$t/half.list"
	for m in $(awk '{print $1}' "$t/half.list"); do
		case_ "half/$m" "$t/half/$m.onnx"
	done
	echo "$cases cases, 2 archs: $translated translated, $assembled assembled by tileiras (of $((2 * cases)))"
	if [ -n "$zoo" ]; then
		for m in "${PB_ZOO:-$HOME/.cache/pb-zoo}"/*.onnx; do
			n=zoo/$(basename "$m" .onnx)
			if ! pb-import "$m" </dev/null 2>/dev/null | pb-fuse >"$t/m.mlir" 2>/dev/null; then
				echo "SKIP: $n (does not import)"
				continue
			fi
			zcases=$((zcases + 1))
			for arch in sm_90 sm_80; do
				if pb-codegen --backend=tile --emit=tileirbc --arch=$arch "$t/m.mlir" -o "$t/m.bc" 2>"$t/err"; then
					ztranslated=$((ztranslated + 1))
					echo "PASS: $arch/$n (translated, $(grep -c '^  func.func private' "$t/m.mlir") kernel functions)"
				else
					echo "FAIL: $arch/$n: $(head -1 "$t/err")"
				fi
			done
		done
		echo "zoo: $zcases models, 2 archs: $ztranslated translated (of $((2 * zcases)))"
	fi
	exit 0
fi
if [ -n "$models" ]; then
	echo "| model | arch | kernels (entries) | launches | tileiras + pb-codegen s | cubin bytes |"
	echo "|---|---|---|---|---|---|"
	for m in "$root"/../shared/models/*.onnx; do
		name=$(basename "$m" .onnx)
		pb-import "$m" | pb-fuse > "$t/$name.mlir"
		for arch in sm_90 sm_80; do
			s0=$(date +%s.%N)
			pb-codegen --backend=tile --tileiras="$TILEIRAS" --arch=$arch "$t/$name.mlir" -o "$t/$name.$arch.tile"
			s1=$(date +%s.%N)
			k=$(/usr/bin/python3 "$root/tests/lit/tileir/Inputs/cubin.py" "$t/$name.$arch.tile" | grep -c '^kernel')
			l=$(grep -c '"kernel":' "$t/$name.$arch.tile")
			b=$(sed -n 's|^// pb-cubin \([0-9]*\)$|\1|p' "$t/$name.$arch.tile")
			printf '| %s | %s | %d | %d | %.1f | %d |\n' "$name" $arch "$k" "$l" "$(echo "$s1 - $s0" | bc)" "$b"
		done
	done
	exit 0
fi
[ -x "$NVDISASM" ] || { echo "bench/tileir.sh: no nvdisasm (set PB_NVDISASM)" >&2; exit 1; }
gemm "$t/gemm.onnx" "$N"
echo "| backend | kernel | hot loop instrs | HGMMA | HMMA | UTMALDG | LDGSTS | LDSM | LDG | LDS | kernel instrs | whole kernel |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
pb-import "$t/gemm.onnx" | pb-fuse > "$t/gemm.fuse.mlir"
for arch in sm_90 sm_80; do
	pb-codegen --backend=tile --tileiras="$TILEIRAS" --arch=$arch "$t/gemm.fuse.mlir" -o "$t/tile.$arch"
	/usr/bin/python3 "$root/tests/lit/tileir/Inputs/cubin.py" "$t/tile.$arch" --out "$t/tile.$arch.cubin" > /dev/null
	/usr/bin/python3 "$here/tileir_sass.py" "$NVDISASM" "$t/tile.$arch.cubin" "pb tile $arch"
	if [ $arch = sm_90 ]; then
		pb-codegen --backend=tile --tile-tma --tileiras="$TILEIRAS" "$t/gemm.fuse.mlir" -o "$t/tma.tile"
		/usr/bin/python3 "$root/tests/lit/tileir/Inputs/cubin.py" "$t/tma.tile" --out "$t/tma.cubin" > /dev/null
		/usr/bin/python3 "$here/tileir_sass.py" "$NVDISASM" "$t/tma.cubin" "pb tile $arch --tile-tma"
	fi
	pb-codegen --arch=$arch "$t/gemm.fuse.mlir" -o "$t/ptx.$arch.ptx"
	"$PTXAS" -arch=$arch "$t/ptx.$arch.ptx" -o "$t/ptx.$arch.cubin"
	/usr/bin/python3 "$here/tileir_sass.py" "$NVDISASM" "$t/ptx.$arch.cubin" "pb ptx $arch"
	if [ -n "$CUTILE_PYTHON" ]; then
		env -u CUDA_HOME "$CUTILE_PYTHON" "$here/tileir_cutile.py" "$t/ct.tileirbc"
		env -u CUDA_HOME "$TILEIRAS" --gpu-name=$arch -O3 -o "$t/ct.$arch.cubin" "$t/ct.tileirbc"
		/usr/bin/python3 "$here/tileir_sass.py" "$NVDISASM" "$t/ct.$arch.cubin" "cuTile $arch"
		if [ $arch = sm_90 ]; then
			env -u CUDA_HOME "$CUTILE_PYTHON" "$here/tileir_cutile.py" "$t/ctd.tileirbc" --no-unit-stride
			env -u CUDA_HOME "$TILEIRAS" --gpu-name=$arch -O3 -o "$t/ctd.cubin" "$t/ctd.tileirbc"
			/usr/bin/python3 "$here/tileir_sass.py" "$NVDISASM" "$t/ctd.cubin" "cuTile $arch, last stride dynamic"
		fi
	fi
done
