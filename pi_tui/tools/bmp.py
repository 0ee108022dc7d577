"""Windows bitmaps (BMP) re-encoded as PNG, which every image-capable provider accepts.

pi converts a BMP it reads to PNG before sending it (its image library decodes BMP). This module decodes
the common kinds with the standard library alone (``struct`` for the headers, ``zlib`` for the PNG), so a
screenshot needs no image library loaded; it is imported only when a BMP is read, and the kinds it does
not cover go to Pillow (`pi_tui.tools.image_process`).

Covered: the OS/2 1.x header (12 bytes) and the Windows headers of 40 to 124 bytes (V3, V4, V5);
uncompressed pixels of 1, 4 or 8 bits (with a colour table), 16, 24 or 32 bits; ``BI_BITFIELDS`` and
``BI_ALPHABITFIELDS`` channel masks on 16- and 32-bit pixels; bottom-up and top-down rows. An alpha
channel (from a mask) is kept unless every pixel's alpha is 0, the mark of a writer that left the
channel unused. Not covered, each with a `BmpError` saying so: run-length compressed pixels (RLE4, RLE8),
embedded JPEG or PNG, and other compression codes.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from dataclasses import dataclass

from .images import looks_like_bmp

__all__ = ["BmpError", "CONVERTED_NOTE", "MAX_BMP_PIXELS", "NOT_CONVERTED_NOTE", "bmp_to_png"]

CONVERTED_NOTE = "[Image converted from image/bmp to image/png.]"
"""pi's line beside an image sent as PNG in place of the BMP read."""
NOT_CONVERTED_NOTE = "[Image omitted: could not be converted to a supported inline image format.]"
"""pi's line in place of an image it could not convert."""
MAX_BMP_PIXELS = 64 * 1024 * 1024
"""Larger bitmaps are refused rather than decoded (a 64-megapixel image is already far past what a
provider takes inline)."""

_FILE_HEADER = 14
_BI_RGB, _BI_RLE8, _BI_RLE4, _BI_BITFIELDS, _BI_JPEG, _BI_PNG, _BI_ALPHABITFIELDS = range(7)
_COMPRESSION_NAMES = {_BI_RLE8: "RLE8", _BI_RLE4: "RLE4", _BI_JPEG: "embedded JPEG", _BI_PNG: "embedded PNG"}
_DEFAULT_MASKS = {16: (0x7C00, 0x03E0, 0x001F, 0), 32: (0xFF0000, 0xFF00, 0xFF, 0)}


class BmpError(ValueError):
    """The file is not a BMP this module can decode; the message says which kind it is or what is wrong."""


@dataclass(frozen=True, slots=True)
class _Header:
    width: int
    height: int  # rows, always positive
    top_down: bool
    bits: int
    compression: int
    pixel_offset: int
    palette: list[bytes]  # RGB triples
    masks: tuple[int, int, int, int]  # red, green, blue, alpha


def bmp_to_png(data: bytes) -> bytes:
    """The bitmap in ``data`` as a PNG file (8-bit RGB, or RGBA when the bitmap has alpha).

    Raises:
        BmpError: not a BMP, a kind not covered (the module docstring lists them), or truncated data.
    """
    header = _read_header(data)
    rows, has_alpha = _decode_rows(data, header)
    return _encode_png(header.width, header.height, rows, has_alpha)


def _read_header(data: bytes) -> _Header:
    if not looks_like_bmp(data[:30]):
        raise BmpError("not a BMP file (its header is missing or inconsistent)")
    pixel_offset, dib_size = struct.unpack_from("<II", data, 10)
    if len(data) < _FILE_HEADER + dib_size:
        raise BmpError("the BMP file is truncated inside its header")
    if dib_size == 12:
        width, height, _, bits = struct.unpack_from("<HHHH", data, 18)
        compression, colours_used, entry = _BI_RGB, 0, 3
    else:
        width, height, _, bits, compression = struct.unpack_from("<iiHHI", data, 18)
        colours_used = struct.unpack_from("<I", data, 46)[0] if dib_size >= 50 else 0
        entry = 4
    if compression in _COMPRESSION_NAMES:
        raise BmpError(
            f"{_COMPRESSION_NAMES[compression]}-compressed BMP is not supported; save it uncompressed"
        )
    if compression not in (_BI_RGB, _BI_BITFIELDS, _BI_ALPHABITFIELDS):
        raise BmpError(f"BMP compression code {compression} is not supported; save it uncompressed")
    if compression != _BI_RGB and bits not in (16, 32):
        raise BmpError(f"BMP channel masks on {bits}-bit pixels are not valid")
    top_down = height < 0
    height = abs(height)
    if width <= 0 or height == 0:
        raise BmpError(f"BMP size {width}x{height} has no pixels")
    if width * height > MAX_BMP_PIXELS:
        raise BmpError(f"BMP of {width}x{height} pixels is larger than the {MAX_BMP_PIXELS} pixels read")
    masks = _DEFAULT_MASKS.get(bits, (0, 0, 0, 0))
    if compression != _BI_RGB:
        count = 4 if compression == _BI_ALPHABITFIELDS or dib_size >= 56 else 3
        where = _FILE_HEADER + 40  # inside a V4/V5 header, or just after a 40-byte one
        if len(data) < where + 4 * count:
            raise BmpError("the BMP file is truncated inside its channel masks")
        found = struct.unpack_from(f"<{count}I", data, where)
        masks = (found[0], found[1], found[2], found[3] if count == 4 else 0)
    palette: list[bytes] = []
    if bits <= 8:
        count = colours_used or 1 << bits
        start = _FILE_HEADER + dib_size
        if count > 1 << bits or len(data) < start + count * entry:
            raise BmpError("the BMP colour table is truncated or too long")
        palette = [
            bytes((data[i + 2], data[i + 1], data[i])) for i in range(start, start + count * entry, entry)
        ]
        palette += [b"\0\0\0"] * ((1 << bits) - count)  # indices past the table: black
    return _Header(width, height, top_down, bits, compression, pixel_offset, palette, masks)


def _decode_rows(data: bytes, header: _Header) -> tuple[list[bytes], bool]:
    """Each row top to bottom as RGB (or RGBA) bytes, and whether they carry alpha."""
    stride = (header.bits * header.width + 31) // 32 * 4
    end = header.pixel_offset + stride * header.height
    if len(data) < end:
        raise BmpError(f"the BMP file is truncated: its pixels need {end} bytes, it has {len(data)}")
    order = range(header.height) if header.top_down else range(header.height - 1, -1, -1)
    used = (header.bits * header.width + 7) // 8
    raw = [data[header.pixel_offset + r * stride : header.pixel_offset + r * stride + used] for r in order]
    if header.bits <= 8:
        return _palette_rows(raw, header), False
    if header.bits == 24:
        return [_interleave((row[2::3], row[1::3], row[0::3])) for row in raw], False
    alpha = header.masks[3]
    wanted = header.masks if alpha else header.masks[:3]
    whole_bytes = [_byte_of(m) for m in wanted] if header.bits == 32 else [None]
    if None not in whole_bytes:  # each channel one byte of the pixel: sliced out, no per-pixel work
        rows = [_interleave(tuple(row[b::4] for b in whole_bytes if b is not None)) for row in raw]
    else:
        rows = [_masked_row(row, header.bits, wanted) for row in raw]
    if alpha and not any(any(row[3::4]) for row in rows):
        rows = [_interleave((row[0::4], row[1::4], row[2::4])) for row in rows]  # alpha left unused
        alpha = 0
    return rows, alpha != 0


def _byte_of(mask: int) -> int | None:
    """Which byte of a little-endian 32-bit pixel ``mask`` selects whole, if it selects exactly one."""
    for index in range(4):
        if mask == 0xFF << (8 * index):
            return index
    return None


def _interleave(channels: tuple[bytes, ...]) -> bytes:
    out = bytearray(len(channels[0]) * len(channels))
    for index, channel in enumerate(channels):
        out[index :: len(channels)] = channel
    return bytes(out)


def _palette_rows(raw: list[bytes], header: _Header) -> list[bytes]:
    """Rows of colour-table indices (1, 4 or 8 bits each, the leftmost pixel in the highest bits) as RGB."""
    bits, width = header.bits, header.width
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    # one table per pixel of a byte (the index it holds), and one per colour channel (index -> value)
    unpack = [bytes((v >> (8 - bits * (slot + 1))) & mask for v in range(256)) for slot in range(per_byte)]
    colours = [bytes(entry[c] for entry in header.palette).ljust(256, b"\0") for c in range(3)]
    rows = []
    for row in raw:
        indices = bytearray(len(row) * per_byte)
        for slot, table in enumerate(unpack):
            indices[slot::per_byte] = row.translate(table)
        pixels = bytes(indices[:width])
        rows.append(_interleave(tuple(pixels.translate(table) for table in colours)))
    return rows


def _masked_row(row: bytes, bits: int, masks: tuple[int, ...]) -> bytes:
    """Pixels whose channels are arbitrary bit fields (16-bit 5-5-5 or 5-6-5, unusual 32-bit layouts);
    a channel whose mask is 0 reads as 0."""
    values = array("H" if bits == 16 else "I", row)  # both are 2 and 4 bytes on every CPython platform
    if sys.byteorder == "big":
        values.byteswap()
    fields = [(m, (m & -m).bit_length() - 1, max(1, m // (m & -m))) for m in masks]
    out = bytearray(len(values) * len(fields))
    position = 0
    for value in values:
        for mask, shift, top in fields:
            out[position] = ((value & mask) >> shift) * 255 // top
            position += 1
    return bytes(out)


def _encode_png(width: int, height: int, rows: list[bytes], has_alpha: bool) -> bytes:
    compressor = zlib.compressobj(6)
    parts = [compressor.compress(b"\0" + row) for row in rows]  # filter type 0 (none) on every row
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if has_alpha else 2, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", b"".join(parts)),
            _chunk(b"IEND", b""),
        )
    )


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
