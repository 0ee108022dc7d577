"""An image's width and height read from its header, without decoding it (standard library only).

This lets an image that already fits the model's limits pass without loading an image library: only
images that need resizing, converting, or whose header cannot be read go to `pi_tui.tools.image_resize`.
"""

from __future__ import annotations

import struct

__all__ = ["header_dimensions"]

# JPEG start-of-frame markers (SOF0..SOF15) hold the size; C4 (DHT), C8 (JPG) and CC (DAC) do not
_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_SCAN_LIMIT = 1 << 20
"""How far into a JPEG to look for its frame header (EXIF and ICC segments come first)."""


def header_dimensions(data: bytes, mime_type: str) -> tuple[int, int] | None:
    """``(width, height)`` of a PNG, JPEG, GIF or WebP from its header, or ``None`` when it cannot be read."""
    try:
        if mime_type == "image/png":
            return _png(data)
        if mime_type == "image/gif":
            return _gif(data)
        if mime_type == "image/jpeg":
            return _jpeg(data)
        if mime_type == "image/webp":
            return _webp(data)
    except struct.error:  # a header cut short
        return None
    return None


def _png(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack_from(">II", data, 16)
    return width, height


def _gif(data: bytes) -> tuple[int, int]:
    width, height = struct.unpack_from("<HH", data, 6)
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    position = 2
    end = min(len(data), _JPEG_SCAN_LIMIT)
    while position + 4 <= end:
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            position += 2
            continue
        (length,) = struct.unpack_from(">H", data, position + 2)
        if marker in _JPEG_FRAME_MARKERS:
            height, width = struct.unpack_from(">HH", data, position + 5)
            return width, height
        if marker == 0xDA or length < 2:  # image data starts: no frame header came before it
            return None
        position += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = struct.unpack_from("<HH", data, 26)
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L":
        if data[20:21] != b"\x2f":
            return None
        (bits,) = struct.unpack_from("<I", data, 21)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None
