#!/usr/bin/env python3
"""Compile time against model length, stage by stage (CPU only, ptxas not
run; bench/README.md, "chain.py").

    chain.py [--build DIR] [--sizes N,...] [--kinds KIND,...]
             [--stages STAGE,...] [--codegen-flags "FLAGS"] [--keep DIR]

For every kind of chain and every N (default 100,1000,5000) the script
writes an ONNX model of N ops, then runs the pipeline on it one stage at a
time (pb-import, pb-fuse, pb-tile, pb-mma, pb-smem, pb-codegen, each on
the previous stage's output, as bench/compile-time.sh does) and measures
each stage's CPU seconds (user + system of the process and its threads:
the build machines are shared, CPU seconds move less with their load
than wall clock). Kinds (64x64 float tensors but for conv):

  relu     N Relu nodes: one elementwise kernel holding all N
  mm       N/2 times MatMul (64x64 weight) then Relu: one kernel per pair;
           every MatMul reads the same weight
  mmw      mm with a weight of its own per MatMul, as a model's layers have
           (a weight read by N ops costs upstream One-Shot Bufferize's
           analysis O(N) per read, so mm's pb-fuse grows as N^2 there)
  conv     N/2 times Conv 3x3 (8 channels, padded) then Relu, on 1x8x8x8
  res      N/3 residual blocks x + Relu(MatMul(x, w)): MatMul, Relu, Add

It prints two tables per kind: CPU seconds per stage and in all at each N;
then per stage the milliseconds per op at each N and the growth exponent b
from each N to the next, t = a N^b through the two times (1 is linear,
2 quadratic; "-" where the stage takes under 0.05 s, too short to time:
at 100 ops a stage's fixed cost, parsing and start-up, dominates, so
the step between the two largest N is the one that tells). Exit status 1
when a stage fails.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

STAGES = ['import', 'fuse', 'tile', 'mma', 'smem', 'codegen']


def chain(kind, n):
    """The ONNX model of a chain of "n" ops of "kind"."""
    import numpy as np
    import onnx
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    rng = np.random.default_rng(0)
    shape = [64, 64]
    inits, nodes = [], []
    if kind in ('mm', 'res'):
        w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
        inits.append(nh.from_array(w, 'w'))
    if kind == 'mmw':
        for i in range(0, n, 2):
            w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
            inits.append(nh.from_array(w, f'w{i}'))
    if kind == 'conv':
        shape = [1, 8, 8, 8]
        w = (rng.standard_normal((8, 8, 3, 3)) / 24).astype(np.float32)
        inits.append(nh.from_array(w, 'w'))
    x = 'x0'
    for i in range(n):
        y = f'x{i + 1}'
        if kind == 'relu' or (kind in ('mm', 'mmw', 'conv') and i % 2 == 1) \
                or (kind == 'res' and i % 3 == 1):
            nodes.append(h.make_node('Relu', [x], [y]))
        elif kind == 'mm' or (kind == 'res' and i % 3 == 0):
            nodes.append(h.make_node('MatMul', [x, 'w'], [y]))
        elif kind == 'mmw':
            nodes.append(h.make_node('MatMul', [x, f'w{i}'], [y]))
        elif kind == 'conv':
            nodes.append(h.make_node('Conv', [x, 'w'], [y],
                                     pads=[1, 1, 1, 1]))
        else:
            nodes.append(h.make_node('Add', [x, f'x{i - 2}'], [y]))
        x = y
    g = h.make_graph(nodes, kind,
                     [h.make_tensor_value_info('x0', T.FLOAT, shape)],
                     [h.make_tensor_value_info(x, T.FLOAT, shape)],
                     initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 13)])


def cpu_seconds(cmd):
    """Run "cmd"; return its CPU seconds (user + system), or None when it
    fails (its stderr is then printed)."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    except OSError as e:
        sys.stderr.write(f'{cmd[0]}: {e.strerror}\n')
        return None
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(f'{" ".join(cmd)}: exit {p.returncode}\n')
        sys.stderr.write(err.decode(errors='replace'))
        return None
    return ru.ru_utime + ru.ru_stime


def run(args, kind, n, tmp):
    """Time every stage of the pipeline on the chain of "n" ops of "kind";
    return {stage: seconds}, or None."""
    import onnx
    onnx.save(chain(kind, n), f'{tmp}/chain.onnx')
    prev, times = f'{tmp}/chain.onnx', {}
    for s in args.stages:
        out = f'{tmp}/{s}.' + ('ptx' if s == 'codegen' else 'mlir')
        cmd = [f'{args.build}/bin/pb-{s}', prev, '-o', out]
        if s == 'codegen':
            cmd[1:1] = args.codegen_flags.split()
        t = cpu_seconds(cmd)
        if t is None:
            return None
        times[s] = t
        prev = out
    if args.keep:
        os.makedirs(f'{args.keep}/{kind}{n}', exist_ok=True)
        for s in args.stages:
            ext = 'ptx' if s == 'codegen' else 'mlir'
            os.replace(f'{tmp}/{s}.{ext}', f'{args.keep}/{kind}{n}/{s}.{ext}')
    return times


def exponent(ns, ts):
    """The least-squares slope of log t against log n (through both
    points when there are two)."""
    xs = [math.log(n) for n in ns]
    ys = [math.log(max(t, 1e-3)) for t in ts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def table(args, kind, rows):
    """Print the tables of "kind" from "rows", [(n, {stage: s})]: CPU
    seconds per stage, then per stage the milliseconds per op at each
    size and the growth exponent."""
    st = args.stages
    print(f'### {kind}\n')
    print('| N | ' + ' | '.join(st) + ' | total | ms per op |')
    print('|---' * (len(st) + 3) + '|')
    for n, t in rows:
        tot = sum(t.values())
        print(f'| {n} | ' + ' | '.join(f'{t[s]:.2f}' for s in st)
              + f' | {tot:.2f} | {1000 * tot / n:.2f} |')
    print()
    if len(rows) < 2:
        return
    ns = [n for n, _ in rows]
    steps = list(zip(ns, ns[1:]))
    print('| stage | ms per op at N = ' + ', '.join(map(str, ns)) + ' | '
          + ' | '.join(f'b, {a} to {b}' for a, b in steps) + ' |')
    print('|---|---|' + '---|' * len(steps))
    for s in st + ['total']:
        ts = [sum(t.values()) if s == 'total' else t[s] for _, t in rows]
        print(f'| {s} | ' + ', '.join(f'{1000 * x / n:.2f}'
                                      for x, n in zip(ts, ns))
              + ' | ' + ' | '.join(
                  '-' if max(ts[k], ts[k + 1]) < 0.05 else
                  f'{exponent(steps[k], ts[k:k + 2]):.2f}'
                  for k in range(len(steps))) + ' |')
    print()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--build', default=os.environ.get(
        'PB_BUILD', os.path.join(here, '..', 'build')))
    p.add_argument('--sizes', default='100,1000,5000')
    p.add_argument('--kinds', default='relu,mm,mmw,conv,res')
    p.add_argument('--stages', default=','.join(STAGES))
    p.add_argument('--codegen-flags', default='')
    p.add_argument('--keep', help='keep every stage output under DIR')
    args = p.parse_args()
    args.stages = args.stages.split(',')
    for s in args.stages:
        if s not in STAGES:
            p.error(f"unknown stage '{s}'")
    if args.stages != STAGES[:len(args.stages)]:
        p.error('--stages must be a prefix of ' + ','.join(STAGES))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(','):
            if kind not in ('relu', 'mm', 'mmw', 'conv', 'res'):
                p.error(f"unknown kind '{kind}'")
            rows = []
            for n in map(int, args.sizes.split(',')):
                t0 = time.time()
                t = run(args, kind, n, tmp)
                if t is None:
                    ok = False
                    break
                sys.stderr.write(f'{kind} {n}: {time.time() - t0:.1f} s\n')
                rows.append((n, t))
            table(args, kind, rows)
            sys.stdout.flush()
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
