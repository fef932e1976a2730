#!/usr/bin/env python3
"""Attention with a padding mask as BERT-like models export it:
MatMul(Q, K^T), Div by sqrt(D), Add of an additive mask over the keys
[1, 1, 1, LK] (0 where kept, -10000 where padded), Softmax, MatMul.

Or, with KIND, the mask as a condition, as exporters write a
masked_fill or torch.where:
- kpm: Where(cond, -inf, scores), cond [1, 1, 1, LK] true where padded
  (nn.MultiheadAttention's key_padding_mask);
- where: Where(cond, scores, finfo(float32).min), cond [1, 1, LQ, LK]
  true where kept (GPT-2's form), one in 4 dropped at random and all of
  query row 1 (its softmax is uniform over the keys);
- gpt2: Where(cond, scores, finfo.min) with cond [1, 1, LQ, LK] causal
  (key j kept for query i when j <= i + LK - LQ), then Add of an
  additive attention mask [1, 1, 1, LK] (0 where kept, finfo.min where
  padded): GPT-2's eager attention with an attention_mask; the mask
  input is the additive one, the condition an initializer;
- causal: Where(cond, scores, Constant finfo.min) with cond the causal
  [1, 1, LQ, LK] of gpt2 as a boolean initializer (GPT-2 without an
  attention_mask); the mask input is unused (all true);
- addfirst: a mild additive mask [1, 1, 1, LK] (values in [-2, 0]) added
  before the Div by sqrt(D), which scales it too;
- nanogpt: Where(cond, Constant -inf, scores) with cond true where key
  j > i + LK - LQ, a boolean initializer (nanoGPT's
  masked_fill(bias == 0, -inf), constant-folded by the export); the
  mask input is unused (all true);
- nanopad: the same, then Add of the additive padding mask [1, 1, 1, LK]
  (0 where kept, -10000 where padded).

With f16 after KIND, the model's data is float16 throughout (as
model.half() exports it: the other value finfo(float16).min), the
reference computed in float32 from the float16 inputs.

usage: attn_mask.py DIR NAME LQ LK H D [add|kpm|where|gpt2|causal|addfirst|
                                          nanogpt|nanopad [f16]]

Writes DIR/NAME.onnx, its inputs q, k, v and mask as float32 and float16
.npy (the condition as bool), and NumPy's float32 result y. The last
LK / 4 keys are padded, and one in 7 of the others."""
import os, sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

d, name = sys.argv[1], sys.argv[2]
LQ, LK, H, D = map(int, sys.argv[3:7])
kind = sys.argv[7] if len(sys.argv) > 7 else "add"
half = len(sys.argv) > 8 and sys.argv[8] == "f16"
dt, ft = (np.float16, TensorProto.FLOAT16) if half else (np.float32,
                                                       TensorProto.FLOAT)
os.makedirs(d, exist_ok=True)
qs, ks, ms = [1, H, LQ, D], [1, H, LK, D], [1, 1, 1, LK]
keep = np.ones(LK, bool)
keep[LK - LK // 4:] = False
keep[3::7] = False
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(dt).astype(np.float32)
           for s in (qs, ks, ks))
fmin = np.finfo(dt).min
inits = [numpy_helper.from_array(np.array(np.sqrt(D), dt), "sd")]
x = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(D))
if kind == "addfirst":
    mask = (-2 * rng.random(ms)).astype(dt)
    mnode = helper.make_node("Add", ["s", "mask"], ["sm"], name="Add_2")
    x = (q @ k.transpose(0, 1, 3, 2) + mask) / np.float32(np.sqrt(D))
elif kind == "add":
    mask = np.where(keep, 0, -10000).astype(dt).reshape(ms)
    mnode = helper.make_node("Add", ["x", "mask"], ["xm"], name="Add_3")
    x = x + mask
elif kind == "kpm":
    mask = ~keep.reshape(ms)
    inits.append(numpy_helper.from_array(np.array(-np.inf, dt), "fill"))
    mnode = helper.make_node("Where", ["mask", "fill", "x"], ["xm"],
                             name="Where_3")
    x = np.where(mask, np.float32(-np.inf), x)
elif kind == "causal":
    cond = (np.arange(LK)[None, :] <=
            np.arange(LQ)[:, None] + (LK - LQ)).reshape(1, 1, LQ, LK)
    inits.append(numpy_helper.from_array(cond, "cond"))
    mask = np.ones(ms, bool)
    mnode = [helper.make_node("Constant", [], ["fill"], name="Constant_3",
                              value=numpy_helper.from_array(
                                  np.array(fmin, dt))),
             helper.make_node("Where", ["cond", "x", "fill"], ["xm"],
                              name="Where_4")]
    x = np.where(cond, x, np.float32(fmin))
elif kind in ("nanogpt", "nanopad"):
    cond = (np.arange(LK)[None, :] >
            np.arange(LQ)[:, None] + (LK - LQ)).reshape(1, 1, LQ, LK)
    inits.append(numpy_helper.from_array(cond, "cond"))
    mnode = [helper.make_node("Constant", [], ["ninf"], name="Constant_3",
                              value=numpy_helper.from_array(
                                  np.array(-np.inf, dt))),
             helper.make_node("Where", ["cond", "ninf", "x"],
                              ["xm" if kind == "nanogpt" else "xw"],
                              name="Where_4")]
    x = np.where(cond, np.float32(-np.inf), x)
    if kind == "nanogpt":
        mask = np.ones(ms, bool)
    else:
        mask = np.where(keep, 0, -10000).astype(dt).reshape(ms)
        mnode.append(helper.make_node("Add", ["xw", "mask"], ["xm"],
                                      name="Add_5"))
        x = x + mask.astype(np.float32)
elif kind == "gpt2":
    cond = (np.arange(LK)[None, :] <=
            np.arange(LQ)[:, None] + (LK - LQ)).reshape(1, 1, LQ, LK)
    inits.append(numpy_helper.from_array(cond, "cond"))
    inits.append(numpy_helper.from_array(np.array(fmin, dt), "fill"))
    mask = np.where(keep, 0, fmin).astype(dt).reshape(ms)
    mnode = [helper.make_node("Where", ["cond", "x", "fill"], ["xw"],
                              name="Where_3"),
             helper.make_node("Add", ["xw", "mask"], ["xm"], name="Add_4")]
    with np.errstate(over="ignore"):
        x = np.where(cond, x, np.float32(fmin)) + mask.astype(np.float32)
else:
    ms = [1, 1, LQ, LK]
    mask = rng.random(ms) >= 0.25
    mask[0, 0, min(1, LQ - 1), :] = False
    inits.append(numpy_helper.from_array(np.array(fmin, dt), "fill"))
    mnode = helper.make_node("Where", ["mask", "x", "fill"], ["xm"],
                             name="Where_3")
    x = np.where(mask, x, np.float32(fmin))
nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_0",
                          perm=[0, 1, 3, 2]),
         helper.make_node("MatMul", ["q", "kt"], ["s"], name="MatMul_1"),
         *([mnode, helper.make_node("Div", ["sm", "sd"], ["xm"],
                                    name="Div_3")]
           if kind == "addfirst" else
           [helper.make_node("Div", ["s", "sd"], ["x"], name="Div_2"),
            *(mnode if isinstance(mnode, list) else [mnode])]),
         helper.make_node("Softmax", ["xm"], ["p"], name="Softmax_4", axis=-1),
         helper.make_node("MatMul", ["p", "v"], ["y"], name="MatMul_5")]
vi = helper.make_tensor_value_info
additive = ("add", "gpt2", "addfirst", "nanopad")
mt = TensorProto.FLOAT if kind in additive else TensorProto.BOOL
if half and kind in additive:
    mt = ft
g = helper.make_graph(nodes, name, [vi("q", ft, qs), vi("k", ft, ks),
                                    vi("v", ft, ks), vi("mask", mt, ms)],
                      [vi("y", ft, qs)], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(d, name + ".onnx"))
p = np.exp(x - x.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
for n, t in (("q", q), ("k", k), ("v", v), ("mask", mask)):
    np.save(os.path.join(d, "%s_%s.npy" % (name, n)), t)
    with np.errstate(over="ignore"):
        np.save(os.path.join(d, "%s_%s16.npy" % (name, n)),
                t if t.dtype == bool else t.astype(np.float16))
np.save(os.path.join(d, name + "_y.npy"), p @ v)
