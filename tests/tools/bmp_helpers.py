"""Writing BMP files of each kind by hand, and reading a PNG back with zlib, for the BMP tests."""

from __future__ import annotations

import struct
import zlib

Pixel = tuple[int, int, int, int]  # red, green, blue, alpha
Grid = list[list[Pixel]]  # rows top to bottom


def grid(width: int, height: int, *, alpha: bool = False) -> Grid:
    """A picture where every pixel differs from its neighbours (and, with ``alpha``, is part see-through)."""
    return [
        [
            (
                (x * 37 + y * 11) % 256,
                (x * 5 + y * 53) % 256,
                (x * y * 7 + 3) % 256,
                (x * 29 + y) % 256 if alpha else 255,
            )
            for x in range(width)
        ]
        for y in range(height)
    ]


def bmp(
    pixels: Grid,
    bits: int,
    *,
    dib: int = 40,
    top_down: bool = False,
    masks: tuple[int, int, int, int] | None = None,
    palette: list[tuple[int, int, int]] | None = None,
    compression: int | None = None,
) -> bytes:
    """``pixels`` as a BMP file with ``bits`` a pixel; ``masks`` gives channel bit fields (BI_BITFIELDS),
    ``palette`` the colour table for 1-, 4- and 8-bit files (pixels are looked up in it)."""
    height, width = len(pixels), len(pixels[0])
    stride = (bits * width + 31) // 32 * 4
    order = pixels if top_down else pixels[::-1]
    body = bytearray()
    for row in order:
        line = bytearray()
        if bits <= 8:
            assert palette is not None
            indices = [palette.index(p[:3]) for p in row]
            acc = 0
            filled = 0
            for index in indices:
                acc = (acc << bits) | index
                filled += bits
                if filled == 8:
                    line.append(acc)
                    acc = filled = 0
            if filled:
                line.append(acc << (8 - filled))
        elif bits == 24:
            for r, g, b, _ in row:
                line += bytes((b, g, r))
        else:
            fields = masks or ((0x7C00, 0x3E0, 0x1F, 0) if bits == 16 else (0xFF0000, 0xFF00, 0xFF, 0))
            for pixel in row:
                value = 0
                for channel, mask in zip(pixel, fields, strict=True):
                    if mask:
                        low = mask & -mask
                        value |= (channel * (mask // low) // 255) * low
                line += value.to_bytes(bits // 8, "little")
        body += line.ljust(stride, b"\0")
    code = compression if compression is not None else (3 if masks else 0)
    if dib == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bits)
        table = b"".join(bytes((b, g, r)) for r, g, b in palette or [])
    else:
        info = struct.pack(
            "<IiiHHIIiiII",
            dib,
            width,
            -height if top_down else height,
            1,
            bits,
            code,
            len(body),
            2835,
            2835,
            len(palette or []),
            0,
        )
        extra = b""
        if masks and dib == 40:
            extra = struct.pack("<IIII", *masks) if code == 6 else struct.pack("<III", *masks[:3])
        elif dib > 40:
            extra = struct.pack("<IIII", *(masks or (0, 0, 0, 0)))
        info = (info + extra).ljust(dib, b"\0") if dib > 40 else info + extra
        table = b"".join(bytes((b, g, r, 0)) for r, g, b in palette or [])
    offset = 14 + len(info) + len(table)
    return b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset) + info + table + bytes(body)


def png_pixels(data: bytes) -> Grid:
    """Decode a PNG of 8-bit RGB or RGBA (every filter type) into pixels, checking its chunks' CRCs."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    position, idat, ihdr = 8, b"", b""
    while position < len(data):
        (length,) = struct.unpack_from(">I", data, position)
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        assert struct.unpack_from(">I", data, position + 8 + length)[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
            else:
                assert kind == 0
        rows.append(line)
        previous = line
    return [
        [
            (
                r[x * channels],
                r[x * channels + 1],
                r[x * channels + 2],
                r[x * channels + 3] if channels == 4 else 255,
            )
            for x in range(width)
        ]
        for r in rows
    ]


def rle8_bmp(pixels: Grid, palette: list[tuple[int, int, int]]) -> bytes:
    """``pixels`` as a run-length compressed 8-bit BMP (RLE8): each pixel a run of one, each row ended."""
    plain = bmp(pixels, 8, palette=palette, compression=1)
    (offset,) = struct.unpack_from("<I", plain, 10)
    body = bytearray()
    for row in pixels[::-1]:  # bottom-up
        for pixel in row:
            body += bytes((1, palette.index(pixel[:3])))
        body += b"\0\0"  # end of line
    body += b"\0\1"  # end of bitmap
    head = bytearray(plain[:offset])
    struct.pack_into("<I", head, 2, offset + len(body))
    struct.pack_into("<I", head, 34, len(body))
    return bytes(head + body)
