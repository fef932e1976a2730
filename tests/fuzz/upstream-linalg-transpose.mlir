// Crashes MLIR 22.1's own parser (mlir-opt too): linalg.transpose's
// parser sets a null permutation attribute after "expected '['"
// (mlir::NamedAttrList::set -> Attribute::getContext on null). Found by
// tests/fuzz/fuzz_mlir.c; pb cannot check this before the parse, so it is
// kept here as a known upstream crash, not in the regression tests.
func.func @f(%a: tensor<8x16xf32>, %e: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %t = linalg.transpose ins(%a : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = ]
  return %t : tensor<16x8xf32>
}
