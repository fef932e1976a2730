#!/bin/sh
# make demo: the bundled tiny CNN (examples/tiny_cnn.onnx, built by
# examples/make_tiny_cnn.py with a NumPy reference) through every stage,
# each stage's output run on the CPU and checked against the reference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${PB_BUILD:-$here/../build}/bin
out=${DEMO_OUT:-$(mktemp -d)}
m=$here/tiny_cnn.onnx
PATH=$bin:$PATH

step() { printf '\n$ %s\n' "$*"; }

echo "pb demo: $m"
echo "  Conv 3x3 + Relu + MaxPool + Flatten + Gemm + Softmax, input [2,1,12,12] -> [2,10]"

step "pb-import tiny_cnn.onnx > $out/0-import.mlir"
pb-import "$m" -o "$out/0-import.mlir"
prev=0-import
for s in fuse tile mma smem; do
	n=$(( $(echo "$prev" | cut -c1) + 1 ))
	step "pb-$s < $prev.mlir > $n-$s.mlir"
	pb-$s "$out/$prev.mlir" -o "$out/$n-$s.mlir"
	prev=$n-$s
done
kernels=$(grep -c 'pb.kernel' "$out/1-fuse.mlir" || true)
echo "  $kernels kernel functions after pb-fuse"

for f in 0-import 1-fuse 4-smem; do
	step "pb-run $f.mlir --input tiny_cnn.in.npy --check tiny_cnn.out.npy"
	pb-run "$out/$f.mlir" --input "$here/tiny_cnn.in.npy" \
		--check "$here/tiny_cnn.out.npy" --output "$out/result"
done

step "pb-import tiny_cnn.onnx | pipelines/default | pb-run --print -"
pb-import "$m" | "$here/../pipelines/default" |
	pb-run --input "$here/tiny_cnn.in.npy" --print -

step "pb-codegen --arch=sm_90 < 4-smem.mlir > k.ptx"
pb-codegen --arch=sm_90 "$out/4-smem.mlir" -o "$out/k.ptx"
echo "  $(grep -c '^.visible .entry' "$out/k.ptx") GPU kernels; the launch plan rides in the header:"
sed -n '/pb-plan-begin/,/pb-plan-end/p' "$out/k.ptx" | head -6
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
if [ -x "$ptxas" ]; then
	step "ptxas -arch=sm_90 k.ptx"
	"$ptxas" -arch=sm_90 "$out/k.ptx" -o "$out/k.cubin" && echo "  assembles"
fi
step "pb-run k.ptx --input tiny_cnn.in.npy --check tiny_cnn.out.npy   (needs a GPU)"
pb-run "$out/k.ptx" --input "$here/tiny_cnn.in.npy" \
	--check "$here/tiny_cnn.out.npy" || echo "  (no GPU here: the CPU runs above are the check)"

step "pb-prof --device=cpu 1-fuse.mlir --input tiny_cnn.in.npy --repeat 5"
pb-prof --device=cpu "$out/1-fuse.mlir" --input "$here/tiny_cnn.in.npy" \
	--repeat 5 --json "$out/prof.json" --trace "$out/trace.json" | head -8

step "pb-prof --pipeline=default --pipeline=no-fusion --device=cpu tiny_cnn.onnx --input tiny_cnn.in.npy --repeat 5"
pb-prof --pipeline=default --pipeline=no-fusion --device=cpu "$m" \
	--input "$here/tiny_cnn.in.npy" --repeat 5 | sed -n '/side by side/,$p'
echo "  (CPU times of GPU-mapped code run serially: the comparison that counts is on a GPU)"

echo
echo "stage outputs are in $out"
