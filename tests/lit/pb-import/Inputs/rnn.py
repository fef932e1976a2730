#!/usr/bin/python3
"""Write LSTM, GRU and RNN models beyond the ONNX node suite's (which has
no bidirectional, clipped, batch-first with input_forget, reverse, or
linear_before_reset = 1 case, nor activation parameters or sequences of
different lengths) with test data sets whose outputs a NumPy version of
ONNX's equations computes. Usage: rnn.py OUTDIR  -- writes NAME.onnx and
NAME/ (input_*.pb, output_*.pb) for each model below."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)

ACT = {
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "LeakyRelu": lambda x, a, b: np.where(x > 0, x, a * x),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
}
DEFAULT = {"HardSigmoid": (0.2, 0.5), "LeakyRelu": (0.01, 0),
           "ScaledTanh": (1.0, 1.0)}
NPARAM = {"HardSigmoid": 2, "LeakyRelu": 1, "ScaledTanh": 2}


def acts(names, alphas, betas):
    """Bind the activations to their parameters, consumed in order."""
    al, be, res = list(alphas), list(betas), []
    for n in names:
        a, b = DEFAULT.get(n, (0, 0))
        if NPARAM.get(n, 0) >= 1 and al:
            a = al.pop(0)
        if NPARAM.get(n, 0) >= 2 and be:
            b = be.pop(0)
        res.append(lambda x, f=ACT[n], a=a, b=b: f(x, a, b))
    return res


def reference(op, x, w, r, b, lens, h0, c0, p, attrs):
    """Y, Y_h (and Y_c) of ONNX's equations, in float64."""
    layout = attrs.get("layout", 0)
    if layout:
        x = x.transpose(1, 0, 2)
    S, B, _ = x.shape
    D, GH, _ = w.shape
    ng = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    H = GH // ng
    nact = {"LSTM": 3, "GRU": 2, "RNN": 1}[op]
    names = attrs.get("activations",
                      {"LSTM": ["Sigmoid", "Tanh", "Tanh"],
                       "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}[op] * D)
    fns = acts(names, attrs.get("activation_alpha", []),
               attrs.get("activation_beta", []))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    direction = attrs.get("direction", "forward")
    lens = np.full(B, S) if lens is None else lens
    if b is None:
        b = np.zeros((D, 2 * GH))
    Y = np.zeros((S, D, B, H))
    Yh, Yc = np.zeros((D, B, H)), np.zeros((D, B, H))
    for d in range(D):
        f = fns[d * nact:(d + 1) * nact]
        h = np.zeros((B, H)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((B, H)) if c0 is None else c0[d].astype(np.float64)
        wb, rb = np.split(b[d], 2)
        rev = direction == "reverse" or d == 1
        for t in (range(S - 1, -1, -1) if rev else range(S)):
            xw = x[t] @ w[d].T + wb
            hr = h @ r[d].T + rb
            live = (t < lens)[:, None]
            if op == "LSTM":
                gi, go, gf, gc = np.split(xw + hr, 4, axis=1)
                pi, po, pf = (np.split(p[d], 3) if p is not None
                              else (0, 0, 0))
                i = f[0](cl(gi + pi * c))
                fg = (1 - i if attrs.get("input_forget") else
                      f[0](cl(gf + pf * c)))
                nc = fg * c + i * f[1](cl(gc))
                o = f[0](cl(go + po * nc))
                nh = o * f[2](nc)
                c = np.where(live, nc, c)
            elif op == "GRU":
                xz, xr, xh = np.split(xw, 3, axis=1)
                hz, hrr, hh = np.split(hr, 3, axis=1)
                z = f[0](cl(xz + hz))
                rg = f[0](cl(xr + hrr))
                if attrs.get("linear_before_reset"):
                    ht = f[1](cl(xh + rg * hh))
                else:
                    rh = (rg * h) @ r[d][2 * H:].T + np.split(rb, 3)[2]
                    ht = f[1](cl(xh + rh))
                nh = (1 - z) * ht + z * h
            else:
                nh = f[0](cl(xw + hr))
            h = np.where(live, nh, h)
            Y[t, d] = np.where(live, nh, 0)
        Yh[d], Yc[d] = h, c
    if layout:
        return Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), \
            Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


def save(name, op, S, B, I, H, attrs, bias=True, lens=None, init=False,
         peep=False):
    D = 2 if attrs.get("direction") == "bidirectional" else 1
    ng = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    layout = attrs.get("layout", 0)
    f32 = np.float32
    vals = {"X": rng.standard_normal((B, S, I) if layout else (S, B, I)),
            "W": 0.5 * rng.standard_normal((D, ng * H, I)),
            "R": 0.5 * rng.standard_normal((D, ng * H, H))}
    if bias:
        vals["B"] = 0.5 * rng.standard_normal((D, 2 * ng * H))
    if lens is not None:
        vals["sequence_lens"] = np.array(lens, np.int32)
    hsh = (B, D, H) if layout else (D, B, H)
    if init:
        vals["initial_h"] = rng.standard_normal(hsh)
        if op == "LSTM":
            vals["initial_c"] = rng.standard_normal(hsh)
    if peep:
        vals["P"] = 0.5 * rng.standard_normal((D, 3 * H))
    vals = {k: v if v.dtype == np.int32 else v.astype(f32)
            for k, v in vals.items()}
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
    if op == "LSTM":
        order += ["initial_c", "P"]
    ins = [k if k in vals else "" for k in order]
    while not ins[-1]:
        ins.pop()
    nouts = 3 if op == "LSTM" else 2
    outs = ["Y", "Y_h", "Y_c"][:nouts]
    node = helper.make_node(op, ins, outs, name=name.lower(),
                            hidden_size=H, **attrs)

    def get(k, tr=None):
        v = vals.get(k)
        if v is not None and tr and layout:
            v = v.transpose(1, 0, 2)
        return v

    res = reference(op, vals["X"], vals["W"], vals["R"], get("B"),
                    get("sequence_lens"), get("initial_h", 1),
                    get("initial_c", 1), get("P"), attrs)[:nouts]
    inputs = [helper.make_tensor_value_info(
        k, TensorProto.INT32 if k == "sequence_lens" else TensorProto.FLOAT,
        vals[k].shape) for k in ins if k]
    outputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
               for k, v in zip(outs, res)]
    g = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for i, k in enumerate(k for k in ins if k):
        with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(vals[k], k).SerializeToString())
    for i, (k, v) in enumerate(zip(outs, res)):
        with open(os.path.join(d, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v.astype(f32),
                                            k).SerializeToString())


# bidirectional, initial states, peepholes, clip
save("lstm_bidir", "LSTM", 5, 2, 3, 4,
     {"direction": "bidirectional", "clip": 1.5}, init=True, peep=True)
# batch first, input_forget, parameterised activations
save("lstm_layout", "LSTM", 4, 3, 2, 3,
     {"layout": 1, "input_forget": 1,
      "activations": ["HardSigmoid", "ScaledTanh", "Softsign"],
      "activation_alpha": [0.3, 0.8], "activation_beta": [0.4, 1.2]},
     init=True)
# reverse, linear_before_reset = 1
save("gru_lbr", "GRU", 4, 2, 3, 5,
     {"direction": "reverse", "linear_before_reset": 1}, init=True)
# bidirectional, linear_before_reset = 0, other activations per direction
save("gru_bidir", "GRU", 3, 2, 4, 3,
     {"direction": "bidirectional",
      "activations": ["Sigmoid", "Tanh", "HardSigmoid", "Softsign"]},
     bias=False)
# sequences of different lengths: Y is zero past the end, Y_h is the
# state at each sequence's last step
save("rnn_lens", "RNN", 4, 3, 2, 3,
     {"activations": ["LeakyRelu"], "activation_alpha": [0.1]},
     lens=[4, 1, 2])
save("lstm_lens", "LSTM", 4, 3, 2, 3, {}, lens=[2, 4, 3], init=True)
# reverse with a short sequence: refused
save("rnn_lens_reverse", "RNN", 3, 2, 2, 3, {"direction": "reverse"},
     lens=[3, 1])
