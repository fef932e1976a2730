#!/usr/bin/env python3
"""The tiling bench's cases (bench/tile.sh, bench/gpu-prepare.sh): GEMMs
(squares and transformer shapes), convolutions of ResNet-50 and
MobileNetV2 layers, softmax and LayerNorm rows, as small ONNX models whose
operands are all graph inputs (built by gen_cases.model: no weights, a few
hundred bytes each), with what is needed to check and rate them.

usage: tile_cases.py gen DIR [--weights]  -- DIR/<case>/model.onnx and
                                       meta.json (--weights: the
                                       convolutions' weights and bias as
                                       initializers, as in a model)
       tile_cases.py ref CASEDIR    -- CASEDIR/in_<k>.npy and ref.npy (float64
                                       NumPy reference, stored as float32)
       tile_cases.py row CASEDIR [--md]  -- one line of bench/tile.sh's table
                                       from the files tile.sh left in CASEDIR
       tile_cases.py header [--md]     (--md: a Markdown table)

meta.json: {"group": "gemm"|"conv"|"softmax"|"layernorm"|"attention", "flops": F,
"bytes": B (each operand read once and the result written once: the
least DRAM traffic), "k": the reduction length of a product, "rtol",
"atol", "cpu_check": whether bench/tile.sh runs it on the CPU (a few
seconds at most there), "weights": whether the convolution's weights and
bias are initializers (gen --weights; ref then writes in_0.npy only)}.

Inputs are normal random arrays scaled by 0.5, seeded by the case name
(the same rule as bench/gpu_check.py uses on the GPU machine). The
tolerance of a product grows with its reduction length: rtol 1e-3 and
atol 1e-4 * max(1, K / 512) (fp32 accumulation over K terms of this size
differs from the float64 reference by about 1.5e-8 * K).
"""
import json
import os
import re
import sys
import zlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_cases import model  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4
CASES = {}


def add(name, group, m, flops, nbytes, k=0, cpu=True):
    CASES[name] = (m, {"group": group, "flops": int(flops), "bytes": int(nbytes),
                       "k": k, "rtol": RTOL, "atol": ATOL * max(1.0, k / 512.0),
                       "cpu_check": cpu})
    if flops > 2e11:  # the 8192 GEMM: fewer timed runs on the GPU
        CASES[name][1]["repeat"] = 10


def matmul(name, m, k, n, cpu):
    add(name, "gemm", model(name,
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="MatMul_0")],
        [("a", [m, k]), ("b", [k, n])], [("y", [m, n])]),
        2 * m * n * k, 4 * (m * k + k * n + m * n), k, cpu)


def conv(name, c, hw, f, ks, stride=1, group=1):
    pad = ks // 2
    oh = (hw + 2 * pad - ks) // stride + 1
    cg = c // group
    add(name, "conv", model(name,
        [helper.make_node("Conv", ["x", "w", "bias"], ["t"], name="Conv_0",
                          kernel_shape=[ks, ks], pads=[pad] * 4,
                          strides=[stride, stride], group=group),
         helper.make_node("Relu", ["t"], ["y"], name="Relu_1")],
        [("x", [1, c, hw, hw]), ("w", [f, cg, ks, ks]), ("bias", [f])],
        [("y", [1, f, oh, oh])]),
        2 * f * oh * oh * cg * ks * ks,
        4 * (c * hw * hw + f * cg * ks * ks + f + f * oh * oh), cg * ks * ks)


def softmax(name, shape):
    n = int(np.prod(shape))
    add(name, "softmax", model(name,
        [helper.make_node("Softmax", ["x"], ["y"], name="Softmax_0", axis=-1)],
        [("x", shape)], [("y", shape)]), 5 * n, 8 * n)


def layernorm(name, rows, cols):
    add(name, "layernorm", model(name,
        [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"],
                          name="LayerNorm_0", axis=-1, epsilon=1e-5)],
        [("x", [rows, cols]), ("scale", [cols]), ("bias", [cols])],
        [("y", [rows, cols])], opset=17),
        8 * rows * cols, 4 * (2 * rows * cols + 2 * cols))


def attention(name, heads, seq, dim, cpu):
    """softmax(Q K^T / sqrt(dim)) V of one sequence, as a transformer's
    exporter writes it (Transpose, MatMul, Mul, Softmax, MatMul): pb-fuse
    keeps the products apart by default (--fuse-attention fuses them);
    PyTorch's baseline on the GPU is also its fused
    scaled_dot_product_attention."""
    from onnx import TensorProto
    sc = helper.make_tensor("scale", TensorProto.FLOAT, [], [1.0 / float(np.sqrt(dim))])
    shape = [1, heads, seq, dim]
    add(name, "attention", model(name,
        [helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_0", perm=[0, 1, 3, 2]),
         helper.make_node("MatMul", ["q", "kt"], ["s"], name="MatMul_1"),
         helper.make_node("Constant", [], ["c"], name="Constant_2", value=sc),
         helper.make_node("Mul", ["s", "c"], ["t"], name="Mul_3"),
         helper.make_node("Softmax", ["t"], ["p"], name="Softmax_4", axis=-1),
         helper.make_node("MatMul", ["p", "v"], ["y"], name="MatMul_5")],
        [("q", shape), ("k", shape), ("v", shape)], [("y", shape)]),
        4 * heads * seq * seq * dim, 16 * heads * seq * dim, seq, cpu)


def sdpa(name, heads, seq, dim, causal, cpu):
    """The same as torch's scaled_dot_product_attention exports it: Q and
    K^T each times sqrt(scale) before the MatMul, and with "causal" the
    additive mask of is_causal=True (0 on and below the diagonal, -inf
    above) as an initializer, which pb-import marks pb.causal: the
    kernel skips the key tiles above the diagonal (docs/pb-mma.md).
    PyTorch's baseline is scaled_dot_product_attention(is_causal=...)."""
    from onnx import TensorProto, numpy_helper
    shape = [1, heads, seq, dim]
    nodes = [helper.make_node("Mul", ["q", "sq"], ["qs"], name="Mul_0"),
             helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_1",
                              perm=[0, 1, 3, 2]),
             helper.make_node("Mul", ["kt", "sq"], ["kts"], name="Mul_2"),
             helper.make_node("MatMul", ["qs", "kts"], ["s"], name="MatMul_3")]
    if causal:
        nodes.append(helper.make_node("Add", ["s", "mask"], ["sm"], name="Add_4"))
    nodes += [helper.make_node("Softmax", ["sm" if causal else "s"], ["p"],
                               name="Softmax_5", axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["y"], name="MatMul_6")]
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
                           for n in "qkv"],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    g.initializer.append(numpy_helper.from_array(
        np.array(np.sqrt(1.0 / np.sqrt(dim)), np.float32), "sq"))
    if causal:
        i, j = np.indices((seq, seq))
        g.initializer.append(numpy_helper.from_array(
            np.where(j > i, -np.inf, 0).astype(np.float32), "mask"))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    keys = (seq + 1) / 2 if causal else seq  # the keys a row attends
    add(name, "attention", m, 4 * heads * seq * keys * dim,
        16 * heads * seq * dim, seq, cpu)
    CASES[name][1]["causal"] = bool(causal)


def attention_rkv(name, heads, kv_heads, seq, dim, cpu):
    """Grouped-query attention as Hugging Face's eager attention exports
    repeat_kv: K and V of "kv_heads" heads unsqueezed, expanded to
    [1, kv_heads, heads / kv_heads, seq, dim] and reshaped to "heads"
    heads, then attention() (Transpose, MatMul, Mul, Softmax, MatMul).
    pb-fuse folds the two Expand copies into the fused nest's loads
    (docs/pb-fuse.md, "Grouped-query attention"). PyTorch's baseline is
    scaled_dot_product_attention(enable_gqa=True)."""
    from onnx import TensorProto
    i64 = lambda n, v: helper.make_node(
        "Constant", [], [n], name="Constant_" + n,
        value=helper.make_tensor(n, TensorProto.INT64, [len(v)], v))
    g = heads // kv_heads
    shape, kvs = [1, heads, seq, dim], [1, kv_heads, seq, dim]
    sc = helper.make_tensor("scale", TensorProto.FLOAT, [], [1.0 / float(np.sqrt(dim))])
    nodes = [i64("ax", [2]), i64("es", [1, kv_heads, g, seq, dim]),
             i64("rs", shape)]
    for n in "kv":
        nodes += [helper.make_node("Unsqueeze", [n, "ax"], [n + "u"],
                                   name="Unsqueeze_" + n),
                  helper.make_node("Expand", [n + "u", "es"], [n + "e"],
                                   name="Expand_" + n),
                  helper.make_node("Reshape", [n + "e", "rs"], [n + "r"],
                                   name="Reshape_" + n)]
    nodes += [helper.make_node("Transpose", ["kr"], ["kt"], name="Transpose_0", perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q", "kt"], ["s"], name="MatMul_1"),
              helper.make_node("Constant", [], ["c"], name="Constant_2", value=sc),
              helper.make_node("Mul", ["s", "c"], ["t"], name="Mul_3"),
              helper.make_node("Softmax", ["t"], ["p"], name="Softmax_4", axis=-1),
              helper.make_node("MatMul", ["p", "vr"], ["y"], name="MatMul_5")]
    add(name, "attention", model(name, nodes,
        [("q", shape), ("k", kvs), ("v", kvs)], [("y", shape)], opset=17),
        4 * heads * seq * seq * dim, 8 * (heads + kv_heads) * seq * dim, seq,
        cpu)


def masked_attention(name, heads, seq, dim, fill, masks, inits):
    """The model of attention() scaled by a Mul, then the nodes "masks"
    (the first reads the scaled scores "t" and Constant "fill", the last
    writes "tm"), Softmax, PV; "inits" the masks' initializers but the
    scale's."""
    from onnx import TensorProto, numpy_helper
    shape = [1, heads, seq, dim]
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="Transpose_0",
                              perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="MatMul_1"),
             helper.make_node("Mul", ["s", "sc"], ["t"], name="Mul_2"),
             helper.make_node("Constant", [], ["fill"], name="Constant_3",
                              value=numpy_helper.from_array(
                                  np.array(fill, np.float32))),
             *masks,
             helper.make_node("Softmax", ["tm"], ["p"],
                              name="Softmax_%d" % (4 + len(masks)), axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"],
                              name="MatMul_%d" % (5 + len(masks)))]
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
                           for n in "qkv"],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    g.initializer.append(numpy_helper.from_array(
        np.array(1.0 / np.sqrt(dim), np.float32), "sc"))
    g.initializer.extend(numpy_helper.from_array(v, n) for n, v in inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def attention_kpm(name, heads, seq, dim, cpu):
    """attention() with nn.MultiheadAttention's key_padding_mask as it
    exports masked_fill(mask, -inf): Where(mask, Constant -inf, scores), the
    boolean mask [1, 1, 1, seq] (here an initializer: the last quarter of
    the keys padded). On tensor cores the condition is read as 16x8
    boolean fragments (docs/pb-mma.md). PyTorch's baseline is
    scaled_dot_product_attention with the kept keys as attn_mask."""
    keep = seq - seq // 4
    m = masked_attention(
        name, heads, seq, dim, -np.inf,
        [helper.make_node("Where", ["kpm", "fill", "t"], ["tm"],
                          name="Where_4")],
        [("kpm", (np.arange(seq) >= keep).reshape(1, 1, 1, seq))])
    add(name, "attention", m, 4 * heads * seq * keep * dim,
        16 * heads * seq * dim, seq, cpu)
    CASES[name][1]["keep"] = keep


def attention_gpt2(name, heads, seq, dim, cpu, nano=False):
    """attention() as GPT-2's eager attention exports it with an
    attention_mask: Where(causal, scores, Constant finfo.min), then Add of
    the additive padding mask [1, 1, 1, seq] (0, or finfo.min for the
    last quarter of the keys; an initializer here). Both masks are applied
    in the tensor cores' step (docs/pb-mma.md). With "nano", nanoGPT's
    masked_fill(bias == 0, -inf) instead of the Where, its condition true
    above the diagonal (as the export folds it): the causal mask is then
    computed and the tiles above the diagonal skipped, the padding mask
    still read. PyTorch's baseline is scaled_dot_product_attention with
    both as one boolean attn_mask."""
    keep = seq - seq // 4
    fmin = np.finfo(np.float32).min
    i, j = np.indices((seq, seq))
    cond = (j > i) if nano else (j <= i)
    where = (["tril", "fill", "t"] if nano else ["tril", "t", "fill"])
    m = masked_attention(
        name, heads, seq, dim, -np.inf if nano else fmin,
        [helper.make_node("Where", where, ["tw"], name="Where_4"),
         helper.make_node("Add", ["tw", "am"], ["tm"], name="Add_5")],
        [("tril", cond.reshape(1, 1, seq, seq)),
         ("am", np.where(np.arange(seq) < keep, 0, fmin)
          .astype(np.float32).reshape(1, 1, 1, seq))])
    # the (query, key) pairs kept: key j <= i and j < keep
    pairs = keep * (keep + 1) // 2 + (seq - keep) * keep
    add(name, "attention", m, 4 * heads * pairs * dim,
        16 * heads * seq * dim, seq, cpu)
    CASES[name][1]["keep"] = keep
    CASES[name][1]["causal"] = True

for s in (1024, 2048, 4096, 8192):
    matmul("gemm_%d" % s, s, s, s, s <= 1024)
# BERT-base (128 tokens): the QKV/output projections and the two FFN
# products; ViT-B/16 (197 tokens): the fused QKV projection
matmul("gemm_bert_128x768x768", 128, 768, 768, True)
matmul("gemm_bert_128x768x3072", 128, 768, 3072, True)
matmul("gemm_bert_128x3072x768", 128, 3072, 768, True)
matmul("gemm_vit_197x768x2304", 197, 768, 2304, True)
# ResNet-50 (batch 1): conv2_x 3x3 and 1x1 reduce, conv3_x, conv4_x and
# conv5_x 3x3, the 7x7 stride-2 stem; MobileNetV2: the 144-channel depthwise 3x3
# and its 1x1 projection at 56x56
conv("conv_r50_3x3_64x56", 64, 56, 64, 3)
conv("conv_r50_1x1_256to64x56", 256, 56, 64, 1)
conv("conv_r50_3x3_128x28", 128, 28, 128, 3)
conv("conv_r50_3x3_256x14", 256, 14, 256, 3)
conv("conv_r50_3x3_512x7", 512, 7, 512, 3)
conv("conv_r50_stem_7x7s2", 3, 224, 64, 7, stride=2)
conv("conv_r50_3x3s2_128x56", 128, 56, 128, 3, stride=2)
conv("conv_r50_1x1s2_256to512x56", 256, 56, 512, 1, stride=2)
conv("conv_mbv2_dw3x3_144x56", 144, 56, 144, 3, group=144)
conv("conv_mbv2_pw_144to24x56", 144, 56, 24, 1)
softmax("softmax_4096x1024", [4096, 1024])
softmax("softmax_attn_12x197x197", [12, 197, 197])
softmax("softmax_attn_12x128x128", [12, 128, 128])
layernorm("layernorm_128x768", 128, 768)
layernorm("layernorm_197x768", 197, 768)
# attention: BERT-base (12 heads, 128 tokens), ViT-B/16 (197 tokens), and
# a 1024-token sequence of 16 heads
attention("attn_bert_12x128x64", 12, 128, 64, True)
attention("attn_vit_12x197x64", 12, 197, 64, True)
attention("attn_16x1024x64", 16, 1024, 64, False)
# torch's export of scaled_dot_product_attention, causal and not, head
# dimensions 64 and 128
sdpa("sdpa_16x1024x64", 16, 1024, 64, False, False)
sdpa("sdpa_causal_16x1024x64", 16, 1024, 64, True, False)
sdpa("sdpa_causal_16x2048x128", 16, 2048, 128, True, False)
sdpa("sdpa_causal_12x197x64", 12, 197, 64, True, True)
# nn.MultiheadAttention's key padding mask (a Where), BERT's sequence
attention_kpm("attn_kpm_12x128x64", 12, 128, 64, True)
# GPT-2's eager attention with an attention_mask (a Where, then an Add)
attention_gpt2("attn_gpt2_12x1024x64", 12, 1024, 64, False)
# nanoGPT's masked_fill(bias == 0, -inf), then the same padding mask
attention_gpt2("attn_nanopad_12x1024x64", 12, 1024, 64, False, nano=True)
# grouped-query attention through repeat_kv (Llama-3-8B: 32 query heads,
# 8 key/value heads, head dimension 128)
attention_rkv("attn_gqa_rkv_32x8x1024x128", 32, 8, 1024, 128, False)


# --- NumPy references (float64) ------------------------------------------

def inputs(name, m):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [(rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
             * 0.5).astype(np.float32) for i in m.graph.input]


def with_weights(name, m):
    """Convolution case "m" with its weights and bias as initializers of
    the values inputs() gives them (so the reference is the same)."""
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    xs = inputs(name, m)
    g = m2.graph
    for i, x in reversed(list(enumerate(xs))):
        if i == 0:
            continue
        g.initializer.append(numpy_helper.from_array(x, g.input[i].name))
        del g.input[i]
    return m2


def ref_conv(x, w, b, stride, pad, group):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    f, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]            # N C OH OW KH KW
    fg = f // group
    ys = [np.einsum("nchwij,fcij->nfhw", win[:, g * cg:(g + 1) * cg],
                    w[g * fg:(g + 1) * fg], optimize=True) for g in range(group)]
    return np.concatenate(ys, 1) + b.reshape(1, -1, 1, 1)


def reference(m, xs):
    x = [a.astype(np.float64) for a in xs]
    node = m.graph.node[0]
    if node.op_type == "Constant" and x[1].shape[1] != x[0].shape[1]:
        # repeat_kv's grouped-query attention: each K/V head for a group
        g = x[0].shape[1] // x[1].shape[1]
        x[1], x[2] = np.repeat(x[1], g, 1), np.repeat(x[2], g, 1)
        node = m.graph.node[-6]
    if node.op_type in ("Transpose", "Mul"):  # attention (Mul: sdpa's)
        s = x[0] @ np.swapaxes(x[1], -1, -2) / np.sqrt(x[0].shape[-1])
        init = {t.name: t for t in m.graph.initializer}
        if "mask" in init:
            i, j = np.indices(s.shape[-2:])
            s = np.where(j > i, -np.inf, s)
        if "kpm" in init:
            s = np.where(numpy_helper.to_array(init["kpm"]), -np.inf, s)
        if "tril" in init:
            s = np.where(numpy_helper.to_array(init["tril"]), s,
                         np.finfo(np.float32).min)
            s = s + numpy_helper.to_array(init["am"]).astype(np.float64)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ x[2]
    a = {t.name: helper.get_attribute_value(t) for t in node.attribute}
    if node.op_type == "MatMul":
        return x[0] @ x[1]
    if node.op_type == "Conv":
        return np.maximum(ref_conv(x[0], x[1], x[2], a["strides"][0],
                                   a["pads"][0], a.get("group", 1)), 0)
    if node.op_type == "Softmax":
        e = np.exp(x[0] - x[0].max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    if node.op_type == "LayerNormalization":
        mu = x[0].mean(-1, keepdims=True)
        var = ((x[0] - mu) ** 2).mean(-1, keepdims=True)
        return (x[0] - mu) / np.sqrt(var + a["epsilon"]) * x[1] + x[2]
    raise ValueError(node.op_type)


# --- one row of tile.sh's table ------------------------------------------

COLS = "%-26s %4s %7s %5s %9s %7s %7s %10s %-24s %7s %-6s %8s"
MD = "| " + " | ".join(["%s"] * 12) + " |"


def header(md):
    if md:
        print(MD % ("case", "kernels", "regs sm_90/sm_80", "model regs",
                    "spill B sm_90/sm_80", "stack B", "smem B", "predicted ms",
                    "mapping (costliest kernel)", "compile s", "CPU check",
                    "max_rel"))
        print(MD % tuple(["---"] * 12))
        return
    print(COLS % ("case", "krn", "regs", "pred", "spill B", "stack B", "smem B",
                  "pred ms", "mapping (costliest)", "comp s", "cpu", "max_rel"))
    print(COLS % ("", "", "90/80", "regs", "90/80", "90", "90", "90", "", "90",
                  "", ""))


def ptxas(path):
    """{kernel: {"regs", "spill", "stack", "smem"}} from a ptxas -v log."""
    ks, cur = {}, None
    for line in open(path, errors="replace"):
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = ks.setdefault(m.group(1), {"regs": 0, "spill": 0, "stack": 0, "smem": 0})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame", line)
        if m:
            cur["stack"] = int(m.group(1))
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur["spill"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["regs"] = int(m.group(1))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            cur["smem"] = int(m.group(1))
    return ks


def plan_nodes(ptx):
    """{kernel: [ONNX node names]} from the launch plan in a k.ptx header."""
    text = []
    for line in open(ptx):
        if line.startswith("// pb-plan-begin"):
            continue
        if line.startswith("// pb-plan-end"):
            break
        if line.startswith("// "):
            text.append(line[3:])
    try:
        plan = json.loads("".join(text))
    except ValueError:
        return {}
    return {l["kernel"]: l.get("nodes", []) for l in plan.get("launches", [])}


def row(d, md=False):
    """Print the case's row; exit status 1 when its CPU check failed, 3 when
    ptxas reports spills in a GEMM or convolution kernel, 4 when it did not
    compile, 5 when ptxas rejected a PTX."""
    name = os.path.basename(d.rstrip("/"))
    f = lambda p: os.path.join(d, p)
    if not os.path.exists(f("k.sm_90.ptx")):
        err = open(f("compile.err")).read().splitlines() if os.path.exists(f("compile.err")) else []
        err = [l for l in err if "error" in l] or err or ["?"]
        print("%-26s  did not compile: %s" % (name, err[0][:100]))
        return 4
    regs, spill, heavy_spill, rejected = [], [], 0, 0
    for arch in ("sm_90", "sm_80"):
        if not os.path.exists(f("ptxas.%s.log" % arch)) or not os.path.exists(f("k.%s.ptx" % arch)):
            regs.append("-")
            spill.append("-")
            continue
        ks = ptxas(f("ptxas.%s.log" % arch))
        nodes = plan_nodes(f("k.%s.ptx" % arch))
        if not ks:
            regs.append("ERR")
            spill.append("ERR")
            rejected = 1
            continue
        regs.append(str(max(k["regs"] for k in ks.values())))
        spill.append(str(sum(k["spill"] for k in ks.values())))
        for k, v in ks.items():
            if v["spill"] and any(re.match(r"(MatMul|Gemm|Conv)", n) for n in nodes.get(k, [k])):
                heavy_spill = 1
    ks90 = ptxas(f("ptxas.sm_90.log")) if os.path.exists(f("ptxas.sm_90.log")) else {}
    smem = max([k["smem"] for k in ks90.values()] or [0])
    stack = max([k["stack"] for k in ks90.values()] or [0])
    pred, pregs, mapping = "-", "-", "-"
    if os.path.exists(f("report.sm_90.json")):
        try:
            ks = json.load(open(f("report.sm_90.json")))["kernels"]
            pred = "%.4f" % (1e3 * sum(k.get("predicted_s", 0) for k in ks))
            pregs = str(max([k.get("registers", 0) for k in ks] or [0]))
            top = max(ks, key=lambda k: k.get("predicted_s", 0)) if ks else None
            if top:
                x = lambda v: "x".join(str(i) for i in v or [])
                mapping = top.get("mapping", "?")
                if mapping == "tile":
                    mapping = "tile %s blk %s" % (x(top.get("tile")), x(top.get("block")))
                elif top.get("tile"):
                    mapping += " " + x(top.get("tile"))
        except (ValueError, AttributeError, TypeError, KeyError):
            pred = "bad"
    comp = open(f("compile.s")).read().strip() if os.path.exists(f("compile.s")) else "-"
    check, rel = "skip", "-"
    if os.path.exists(f("check.out")):
        out = open(f("check.out")).read()
        rc = int(open(f("check.rc")).read())
        check = "ok" if rc == 0 else "FAIL"
        m = re.findall(r"max rel err ([0-9.e+-]+)", out)
        rel = "%.1e" % max(float(v) for v in m) if m else "-"
    krn = len(ks90) or "-"
    if md:
        print(MD % (name, krn, " / ".join(regs), pregs, " / ".join(spill), stack,
                    smem, pred, mapping, comp, check, rel))
    else:
        print(COLS % (name[:26], krn, "/".join(regs), pregs, "/".join(spill), stack,
                      smem, pred, mapping[:24], comp, check, rel))
    if check == "FAIL":
        return 1
    return 5 if rejected else 3 if heavy_spill else 0


def main():
    md = "--md" in sys.argv[2:]
    if md:
        sys.argv.remove("--md")
    if len(sys.argv) == 2 and sys.argv[1] == "header":
        header(md)
        return 0
    if (len(sys.argv) != 3 and sys.argv[2:] != [sys.argv[2], "--weights"]) \
            or sys.argv[1] not in ("gen", "ref", "row"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cmd, arg = sys.argv[1], sys.argv[2]
    if cmd == "gen":
        weights = "--weights" in sys.argv[3:]
        for name, (m, meta) in CASES.items():
            os.makedirs(os.path.join(arg, name), exist_ok=True)
            if weights and meta["group"] == "conv":
                m = with_weights(name, m)
                meta = dict(meta, weights=True)
            onnx.save(m, os.path.join(arg, name, "model.onnx"))
            with open(os.path.join(arg, name, "meta.json"), "w") as fp:
                json.dump(meta, fp)
            print(name)
        return 0
    if cmd == "ref":
        name = os.path.basename(arg.rstrip("/"))
        m = CASES[name][0]
        xs = inputs(name, m)
        with open(os.path.join(arg, "meta.json")) as fp:
            nin = 1 if json.load(fp).get("weights") else len(xs)
        for k, x in enumerate(xs[:nin]):
            np.save(os.path.join(arg, "in_%d.npy" % k), x)
        np.save(os.path.join(arg, "ref.npy"), reference(m, xs).astype(np.float32))
        return 0
    return row(arg, md)


if __name__ == "__main__":
    sys.exit(main())
