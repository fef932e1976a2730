"""The fp16 GEMM of bench/tileir.sh written in cuTile Python (PyPI
cuda-tile), 128x128 block tiles with k tiles of 32, as Tile IR bytecode,
specialized as cuTile's launcher specializes a kernel for contiguous
4096x4096 f16 arrays (cext/tile_kernel.cpp,
compute_array_specialization_bits): 16-byte aligned bases, unit stride on
the last axis (a constant), row strides divisible by 8 elements, shapes
by 16. With --no-unit-stride the last stride stays dynamic (no TMA).
Usage: tileir_cutile.py OUT.tileirbc [--no-unit-stride]
(run with a python that has cuda-tile)"""
import sys

import cuda.tile as ct
from cuda.tile.compilation import (ArrayConstraint, CallingConvention,
                                   KernelSignature, export_kernel)


@ct.kernel
def gemm(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int],
         tk: ct.Constant[int]):
    bx = ct.bid(0)
    by = ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk))
        b = ct.load(B, index=(k, by), shape=(tk, tn))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bx, by), tile=acc.astype(C.dtype))


unit = "--no-unit-stride" not in sys.argv[2:]


def arr():
    return ArrayConstraint(dtype=ct.float16, ndim=2, index_dtype=ct.int32,
                           stride_lower_bound_incl=0, alias_groups=(),
                           may_alias_internally=False,
                           base_addr_divisible_by=16,
                           stride_constant=(None, 1) if unit else None,
                           stride_divisible_by=(8, 1), shape_divisible_by=16)


sig = KernelSignature([arr(), arr(), arr(), 128, 128, 32],
                      CallingConvention.cutile_python_v1())
export_kernel(gemm, [sig], sys.argv[1], output_format="tileir_bytecode")
