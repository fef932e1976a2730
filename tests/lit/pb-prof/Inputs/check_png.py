#!/usr/bin/env python3
"""Read a PNG (8-bit RGB or RGBA, not interlaced: what rsvg-convert writes)
with zlib alone and print what the roofline test asserts on:

  check_png.py FILE.png COLOR...   (COLOR as rrggbb)

prints "size WxH", "white F" (the share of white pixels, to 2 digits) and
for each COLOR "rrggbb N" (the number of pixels of exactly that colour:
the opaque fills of the kernels' circles and of the roofs' lines)."""
import struct
import sys
import zlib


def read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else
                                      b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = read(sys.argv[1])
    counts, white = {}, 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            rgb = bytes(line[x:x + 3])
            if bpp == 4 and line[x + 3] != 255:
                continue
            if rgb == b"\xff\xff\xff":
                white += 1
            counts[rgb] = counts.get(rgb, 0) + 1
    print(f"size {w}x{h}")
    print(f"white {white / (w * h):.2f}")
    for c in sys.argv[2:]:
        print(c, counts.get(bytes.fromhex(c), 0))


main()
