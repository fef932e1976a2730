"""Inputs and numpy references of tests/lit/tileir/roundtrip.mlir:
bias + relu, an f16 matrix product (f32 accumulation), a row softmax.
Usage: roundtrip_ref.py DIR"""
import sys

import numpy as np

d = sys.argv[1]
r = np.random.default_rng(7)
a = r.uniform(-1, 1, (100, 60)).astype(np.float32)
b = r.uniform(-1, 1, (60,)).astype(np.float32)
ma = r.uniform(-1, 1, (128, 50)).astype(np.float16)
mb = r.uniform(-1, 1, (50, 64)).astype(np.float16)
x = r.uniform(-4, 4, (8, 20)).astype(np.float32)
c = np.maximum(a + b, 0)
y = (ma.astype(np.float32) @ mb.astype(np.float32)).astype(np.float16)
e = np.exp(x - x.max(axis=1, keepdims=True))
s = e / e.sum(axis=1, keepdims=True)
for n, v in dict(a=a, b=b, ma=ma, mb=mb, x=x, c=c, y=y, s=s).items():
    np.save(f"{d}/{n}.npy", v)
