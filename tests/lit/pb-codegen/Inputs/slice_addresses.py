#!/usr/bin/env python3
"""Where each launch's buffer arguments start: for every launch of the
plan in a PTX file and every argument that is a scratch buffer or a view
of one, "KERNEL ARG ELEMSIZE BYTES", BYTES being the address of the
argument's first element (its pointer plus its layout offset) past its
root's. A kernel that addresses its argument from the pointer alone
(layout offset 0) writes where the view says.

    slice_addresses.py K.PTX
"""
import json, sys

SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8}

text = open(sys.argv[1]).read()
body = text[text.index("// pb-plan-begin") + 17:text.index("// pb-plan-end")]
plan = json.loads("".join(l[2:] for l in body.splitlines()))
bufs = plan["buffers"]
for l in plan["launches"]:
    for i, a in enumerate(l["args"]):
        if "buffer" not in a:
            continue
        b = bufs[a["buffer"]]
        root = bufs[b["base"]] if b["kind"] == "view" else b
        if root["kind"] != "scratch":
            continue
        size = SIZE[b["dtype"]]
        start = b.get("offset", 0) + b.get("elem_offset", 0) * size
        print(l["kernel"], i, size, start)
