#!/usr/bin/python3
"""Export the model zoo: torchvision and torch.nn models with seeded random
weights, as ONNX (opset 13) with one reference input and PyTorch's output.

    export.py DIR [NAME...]

writes DIR/NAME.onnx, DIR/NAME.in.npy, DIR/NAME.out.npy for each model
(all of them by default); a model whose three files exist is skipped.
Needs Debian's python3-torch and python3-torchvision; downloads nothing.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision.models as tvm


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(32, 64, num_layers=2, batch_first=True)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.GELU(),
                                 nn.LayerNorm(512), nn.Linear(512, 512),
                                 nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return self.net(x)


def transformer():
    layer = nn.TransformerEncoderLayer(128, 4, 256, batch_first=True)
    return nn.TransformerEncoder(layer, 2)


# name: (constructor, input shape)
MODELS = {
    "resnet18": (lambda: tvm.resnet18(), (1, 3, 224, 224)),
    "resnet50": (lambda: tvm.resnet50(), (1, 3, 224, 224)),
    "densenet121": (lambda: tvm.densenet121(), (1, 3, 224, 224)),
    "convnext_tiny": (lambda: tvm.convnext_tiny(), (1, 3, 224, 224)),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False,
                                              init_weights=True),
                     (1, 3, 299, 299)),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), (1, 3, 224, 224)),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(), (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), (1, 3, 224, 224)),
    "shufflenet_v2": (lambda: tvm.shufflenet_v2_x1_0(), (1, 3, 224, 224)),
    "squeezenet1_0": (lambda: tvm.squeezenet1_0(), (1, 3, 224, 224)),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True),
                  (1, 3, 224, 224)),
    "vgg11": (lambda: tvm.vgg11(), (1, 3, 224, 224)),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(), (1, 3, 224, 224)),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(), (1, 3, 224, 224)),
    "swin_t": (lambda: tvm.swin_t(), (1, 3, 224, 224)),
    "transformer": (transformer, (1, 32, 128)),
    "mlp": (lambda: Mlp(), (8, 256)),
    "lstm": (lambda: Lstm(), (2, 16, 32)),
}


def export(out, name):
    paths = [os.path.join(out, name + s) for s in (".onnx", ".in.npy", ".out.npy")]
    if all(os.path.exists(p) for p in paths):
        return
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x)
    tmp = paths[0] + ".tmp"
    torch.onnx.export(model, x, tmp, opset_version=13,
                      input_names=["input"], output_names=["output"])
    np.save(paths[1], x.numpy().astype(np.float32))
    np.save(paths[2], y.numpy().astype(np.float32))
    os.rename(tmp, paths[0])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export.py DIR [NAME...]")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    for name in sys.argv[2:] or MODELS:
        if name not in MODELS:
            sys.exit("export.py: unknown model '%s'" % name)
        print("export", name, file=sys.stderr)
        export(out, name)


if __name__ == "__main__":
    main()
