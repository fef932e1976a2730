"""Read the cubin of a tile artifact (docs/tileir.md): print its SM
("sm_90") and, per kernel, the block size it requires (EIATTR_REQNTID of
its .nv.info section); with --out FILE also write the cubin there.
Usage: cubin.py ARTIFACT [--out FILE]"""
import base64
import struct
import sys

lines = open(sys.argv[1]).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("// pb-cubin "))
j = next(k for k, l in enumerate(lines) if l.startswith("// pb-cubin-end"))
data = base64.b64decode("".join(l[3:] for l in lines[i + 1:j]))
assert len(data) == int(lines[i].split()[2]), "size"
if "--out" in sys.argv:
    open(sys.argv[sys.argv.index("--out") + 1], "wb").write(data)
assert data[:4] == b"\x7fELF"
flags = struct.unpack_from("<I", data, 0x30)[0]
print("cubin sm_%d" % ((flags >> 8) & 0xff))
shoff = struct.unpack_from("<Q", data, 0x28)[0]
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize)
        for k in range(shnum)]
stroff = secs[shstrndx][4]
for s in secs:
    name = data[stroff + s[0]:data.index(b"\0", stroff + s[0])].decode()
    if not name.startswith(".nv.info."):
        continue
    p, end = s[4], s[4] + s[5]
    while p < end:
        fmt, attr = data[p], data[p + 1]
        if fmt == 4:
            n = struct.unpack_from("<H", data, p + 2)[0]
            if attr == 0x10:
                print("kernel %s block %d %d %d" % (
                    (name[9:],) + struct.unpack_from("<III", data, p + 4)))
            p += 4 + n
        else:
            p += 4
