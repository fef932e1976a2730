#!/bin/sh
# Seed corpus for make fuzz, into directory $1, for target $2:
#   import (default): up to 300 small (<64 KiB) model.onnx files of
#     libonnx-testdata (node, simple, pytorch-*) plus examples/tiny_cnn.onnx
#     and the regression inputs; also up to 50 input_0.pb tensors;
#   mlir: every chunk of the lit tests' .mlir files (split at '// -----')
#     and the bundled example at each stage, import to smem.
set -e
dir=$1
mkdir -p "$dir"
if [ "${2:-import}" = mlir ]; then
	for f in tests/lit/*/*.mlir; do
		awk -v out="$dir/$(echo "$f" | tr / _)" '
			/^\/\/ -----/ { n++; next }
			{ print > (out "-" n+0 ".mlir") }' "$f"
	done
	bin=${PB_BUILD:-build}/bin
	if [ -x "$bin/pb-import" ]; then
		"$bin/pb-import" examples/tiny_cnn.onnx --inline-weights -o "$dir/cnn-import.mlir"
		for s in fuse tile mma smem; do
			"$bin/pb-$s" "$dir/cnn-import.mlir" -o "$dir/cnn-$s.mlir"
		done
	fi
	cp -f tests/fuzz/regress/*.mlir "$dir/" 2>/dev/null || true
	echo "  SEED  $dir: $(ls "$dir" | wc -l) inputs"
	exit 0
fi
data=/usr/share/libonnx-testdata/data
i=0
for f in $(find $data/node $data/simple $data/pytorch-* -name model.onnx \
	-size -64k 2>/dev/null | sort | awk 'NR % 3 == 1' | head -n 300); do
	i=$((i + 1))
	cp -f "$f" "$dir/seed-$i.onnx"
done
# and some serialized TensorProtos (test_data_set inputs) for the tensor reader
i=0
for f in $(find $data/node -name 'input_0.pb' -size -16k 2>/dev/null | sort |
	awk 'NR % 10 == 1' | head -n 50); do
	i=$((i + 1))
	cp -f "$f" "$dir/tensor-$i.pb"
done
cp -f examples/tiny_cnn.onnx "$dir/"
cp -f tests/fuzz/regress/*.onnx "$dir/" 2>/dev/null || true
echo "  SEED  $dir: $(ls "$dir" | wc -l) inputs"
