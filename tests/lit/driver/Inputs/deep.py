#!/usr/bin/python3
"""Write deeply nested inputs (hostile input for the parsers).

usage: deep.py DIR N  -- writes into DIR, each nested N deep:
  array.mlir   an array attribute [[[...]]] (the module attribute pb.x)
  paren.mlir   parentheses in an affine map ((((d0))))
  if.mlir      scf.if regions inside one another in @main
  type.mlir    a tuple type tuple<tuple<...>>
  if.onnx      If nodes whose then_branch holds the next If (pb-import)
"""
import os
import sys

d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
p = lambda name: os.path.join(d, name)

open(p("array.mlir"), "w").write(
    "module attributes {pb.stage = \"import\", pb.x = %s1%s} {\n}\n"
    % ("[" * n, "]" * n))
open(p("paren.mlir"), "w").write(
    "#m = affine_map<(d0) -> (%sd0%s)>\n"
    "module attributes {pb.stage = \"import\", pb.x = #m} {\n}\n"
    % ("(" * n, ")" * n))
open(p("type.mlir"), "w").write(
    "module attributes {pb.stage = \"import\", pb.x = %si32%s} {\n}\n"
    % ("tuple<" * n, ">" * n))
body = ["module attributes {pb.stage = \"import\"} {",
        "  func.func @main(%x: tensor<4xf32> {pb.name = \"x\"}, %c: i1 {pb.name = \"c\"}) -> (tensor<4xf32> {pb.name = \"y\"}) {"]
for i in range(n):
    body.append("  %%r%d = scf.if %%c -> (tensor<4xf32>) {" % i)
body.append("  scf.yield %x : tensor<4xf32>")
for i in reversed(range(n)):
    body.append("  } else {")
    body.append("  scf.yield %x : tensor<4xf32>")
    body.append("  }")
    if i:
        body.append("  scf.yield %%r%d : tensor<4xf32>" % i)
body.append("  return %r0 : tensor<4xf32>")
body.append("  }")
body.append("}")
open(p("if.mlir"), "w").write("\n".join(body) + "\n")



def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def field(num, data):
    """A length-delimited field "num" holding bytes "data"."""
    return varint(num << 3 | 2) + varint(len(data)) + data


# Written by hand (protobuf's Python runtime refuses to nest this deep):
# GraphProto.node = 1, NodeProto.input/output/op_type/attribute = 1/2/4/5,
# AttributeProto.name/g/type = 1/6/20 (GRAPH = 5), ModelProto.ir_version/
# graph/opset_import = 1/7/8, OperatorSetIdProto.version = 2.
y = field(12, field(1, b"y"))  # GraphProto.output: ValueInfoProto name
g = field(1, field(1, b"x") + field(2, b"y") + field(4, b"Identity")) + y
for i in range(n):
    attr = field(1, b"then_branch") + field(6, g) + varint(20 << 3) + varint(5)
    g = field(1, field(1, b"c") + field(2, b"y") + field(4, b"If") +
              field(5, attr)) + y
model = varint(1 << 3) + varint(7) + field(7, g) + \
    field(8, varint(2 << 3) + varint(13))
open(p("if.onnx"), "wb").write(model)
