#!/bin/sh
# Seed corpus for make fuzz: up to 300 small (<64 KiB) model.onnx files of
# libonnx-testdata (node, simple, pytorch-*) plus examples/tiny_cnn.onnx
# and the regression inputs, copied into directory $1; also up to 50
# input_0.pb tensors.
set -e
dir=$1
mkdir -p "$dir"
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
