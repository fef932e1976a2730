"""Write the inputs and references of tests/lit/pb-codegen/warp.mlir.

usage: warp_gen.py DIR  -- writes into DIR:
  A.npy, B.npy, x.npy   inputs: f32 [128, 16], [16, 200], [100]
  C.npy, y.npy, o.npy   references: relu(A @ B), 2 x + 1, 2 x[:32]
  u.npy, v.npy          input f32 [256] and its reference 2 u
Small integers, so that every sum is exact in f32 whatever its order.
"""
import os
import sys

import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(7)
A = rng.integers(-4, 5, (128, 16)).astype(np.float32)
B = rng.integers(-4, 5, (16, 200)).astype(np.float32)
x = rng.integers(-8, 9, 100).astype(np.float32)
for name, v in (("A", A), ("B", B), ("x", x),
                ("C", np.maximum(A @ B, 0)), ("y", 2 * x + 1), ("o", 2 * x[:32])):
    np.save(os.path.join(d, name + ".npy"), v.astype(np.float32))
u = rng.integers(-8, 9, 256).astype(np.float32)
for name, v in (("u", u), ("v", 2 * u)):
    np.save(os.path.join(d, name + ".npy"), v.astype(np.float32))
