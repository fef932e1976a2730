"""Inputs and numpy references of tests/lit/tileir/ints.mlir: Where with
an Equal and an And of booleans, a Gather of int64 indices (negative ones
counted from the end), an ArgMax (the first maximum, int64), unsigned
int32 arithmetic and conversions, a constant int64 table and two 2x2 max
pools (of a private buffer; under a parallel loop inside the band) and
a running sum (a scan).
Usage: ints_ref.py DIR"""
import sys

import numpy as np

d = sys.argv[1]
r = np.random.default_rng(11)
c = r.integers(0, 2, (4, 8)).astype(np.bool_)
x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
y = r.uniform(-1, 1, (4, 8)).astype(np.float32)
p = r.integers(0, 3, (4, 8)).astype(np.int32)
q = r.integers(0, 3, (8,)).astype(np.int32)
e = p == q
z = np.where(c & e, x, y)
idx = np.array([4, -1, -5], np.int64)
data = r.uniform(-1, 1, (5, 4)).astype(np.float32)
g = data[np.where(idx < 0, idx + 5, idx)]
am = r.integers(0, 3, (4, 6)).astype(np.float32)  # ties: the first wins
ar = am.argmax(axis=1).astype(np.int64)
ua = r.integers(0, 2**32, (16,), dtype=np.uint64).astype(np.uint32)
ub = r.integers(1, 2**32, (16,), dtype=np.uint64).astype(np.uint32)
ub[:4] = r.integers(1, 1000, (4,))
sel = np.where(ua < ub, ua % ub, ua // ub)
uo = (sel ^ (ua >> 1)).astype(np.float32)
sb = ub.view(np.int32).astype(np.float32) * np.float32(1.5)
um = ua.astype(np.int64) - np.trunc(sb).astype(np.int64)
tx = r.uniform(-1, 1, (5,)).astype(np.float32)
ty = np.array([4, -1, 0, 3, -5], np.float32) * tx
ts = np.array([2.5], np.float32)
px = r.uniform(-1, 1, (2, 8, 8)).astype(np.float32)
py = np.maximum(px, 0).reshape(2, 4, 2, 4, 2).max(axis=(2, 4))
qx = r.uniform(-1, 1, (4, 6, 6)).astype(np.float32)
qy = qx.reshape(4, 3, 2, 3, 2).max(axis=(2, 4))
cx = r.integers(-100, 100, (4, 12)).astype(np.int32)
cy = np.cumsum(cx, axis=1).astype(np.int32)
out = dict(c=c, x=x, y=y, p=p, q=q, idx=idx, data=data, am=am,
           ua=ua.view(np.int32), ub=ub.view(np.int32), tx=tx, z=z, e=e, g=g,
           r=ar, uo=uo, um=um, ty=ty, ts=ts, px=px, py=py, qx=qx, qy=qy, cx=cx, cy=cy)
for n, v in out.items():
    np.save(f"{d}/{n}.npy", v)
