#!/usr/bin/env python3
"""Triton's tutorial matmul kernel (python/tutorials/03-matrix-multiplication.py,
the kernel as the tutorial writes it) and the forward kernel of its fused
attention (python/tutorials/06-fused-attention.py, the inner loop as the
tutorial writes it, without causal masking) compiled for a GPU target
without a GPU, for bench/static.sh's side-by-side table.

usage: static_triton.py OUTDIR [--arch sm_90|sm_80] [--size N]

Writes OUTDIR/triton_matmul_{fp32,fp16}_<arch>.ptx (Triton's PTX, which
bench/static.sh hands to pb-prof --static like pb's) and .json (Triton's
metadata: shared memory, warps, stages). fp32 is compiled with
input_precision="ieee" (FFMA, as pb computes fp32; Triton's default tf32
would use tensor cores); fp16 with fp32 accumulation (tensor cores). The
block sizes are the first of the tutorial's autotuning configurations that
fit each type (no GPU here to autotune): fp16 128x256x64, 8 warps, 3
stages; fp32 128x64x32, 4 warps, 4 stages. Attention
(triton_attention_fp16_<arch>): fp16, head dimension 64, 128 query rows
and 64 keys a step, 4 warps, 3 stages (the tutorial's configuration for
head dimension 64).
"""
import json
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  PRECISION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator, input_precision=PRECISION)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def attn_kernel(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off = tl.program_id(1) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + off + (start_n + offs_n)[None, :] * stride_m +
                    offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + off + (start_n + offs_n)[:, None] * stride_m +
                    offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + off + offs_m[:, None] * stride_m + offs_d[None, :],
             acc.to(Out.dtype.element_ty))


def compile_attention(out, arch):
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16",
           "sm_scale": "fp32", "stride_h": "i32", "stride_m": "i32",
           "N_CTX": "i32", "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr"}
    consts = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
    names = list(sig)
    attrs = {(names.index(a),): [["tt.divisibility", 16]]
             for a in ("Q", "K", "V", "Out", "stride_h", "stride_m", "N_CTX")}
    cap = int(arch.split("_")[1].rstrip("a"))
    src = ASTSource(fn=attn_kernel, signature=sig, constexprs=consts,
                    attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", cap, 32),
                       options={"num_warps": 4, "num_stages": 3})
    base = os.path.join(out, f"triton_attention_fp16_{arch}")
    with open(base + ".ptx", "w") as f:
        f.write(k.asm["ptx"])
    meta = {"kernel": k.metadata.name, "shared": k.metadata.shared,
            "num_warps": 4, "num_stages": 3, "blocks": consts,
            "triton": triton.__version__}
    with open(base + ".json", "w") as f:
        json.dump(meta, f)
    print(base + ".ptx")


CONFIGS = {
    "fp32": ("fp32", "ieee", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32,
                                  GROUP_SIZE_M=8), 4, 4),
    "fp16": ("fp16", "ieee", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                                  GROUP_SIZE_M=8), 4, 4),
    # fp32 data on tensor cores, Triton's own default for fp32 dots (the
    # peer of pb's --precision=tf32)
    "tf32": ("fp32", "tf32", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                                  GROUP_SIZE_M=8), 4, 4),
}


def compile_one(out, name, arch):
    ty, prec, blocks, warps, stages = CONFIGS[name]
    # specialized as Triton's launcher does for contiguous size x size
    # operands: the unit strides become constants, pointers and the other
    # integers are known to be multiples of 16
    sig = {"a_ptr": "*" + ty, "b_ptr": "*" + ty, "c_ptr": "*" + ty}
    for a in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
              "stride_cm", "stride_cn"):
        sig[a] = "i32"
    consts = dict(blocks, PRECISION=prec, stride_ak=1, stride_bn=1, stride_cn=1)
    for c in consts:
        sig[c] = "constexpr"
    names = list(sig)
    attrs = {(names.index(a),): [["tt.divisibility", 16]]
             for a in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am",
                       "stride_bk", "stride_cm")}
    cap = int(arch.split("_")[1].rstrip("a"))
    src = ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts,
                    attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", cap, 32),
                       options={"num_warps": warps, "num_stages": stages})
    base = os.path.join(out, f"triton_matmul_{name}_{arch}")
    with open(base + ".ptx", "w") as f:
        f.write(k.asm["ptx"])
    meta = {"kernel": k.metadata.name, "shared": k.metadata.shared,
            "num_warps": warps, "num_stages": stages, "blocks": blocks,
            "input_precision": prec, "triton": triton.__version__}
    with open(base + ".json", "w") as f:
        json.dump(meta, f)
    print(base + ".ptx")


def main():
    args = sys.argv[1:]
    arch = "sm_90"
    if "--arch" in args:
        i = args.index("--arch")
        arch = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit("usage: static_triton.py OUTDIR [--arch sm_90|sm_80]")
    os.makedirs(args[0], exist_ok=True)
    for name in CONFIGS:
        compile_one(args[0], name, arch)
    compile_attention(args[0], arch)


if __name__ == "__main__":
    main()
