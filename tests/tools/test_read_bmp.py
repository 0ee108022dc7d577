"""The read tool sends a BMP as PNG, as pi 0.87.1 converts it (``[Image converted from image/bmp to
image/png.]``); pi-tui decodes the common BMP kinds itself (`pi_tui.tools.bmp`) and says which kinds it
cannot. Every PNG made here is decoded back (tests/tools/bmp_helpers.py) and compared pixel by pixel."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pytest

from pi_tui.agent.tool import ToolResult
from pi_tui.ai.types import ImageContent, TextContent
from pi_tui.tools.bmp import BmpError, bmp_to_png
from pi_tui.tools.images import looks_like_bmp
from pi_tui.tools.read import READ_DESCRIPTION, read_file_result

from .bmp_helpers import Grid, bmp, grid, png_pixels, rle8_bmp

CONVERTED = "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"


def _quantised(pixels: Grid, masks: tuple[int, int, int, int]) -> Grid:
    """What channel fields narrower than 8 bits keep of each value, spread back over 0-255."""

    def keep(value: int, mask: int) -> int:
        if not mask:
            return 255
        top = mask // (mask & -mask)
        return value * top // 255 * 255 // top

    return [[tuple(keep(c, m) for c, m in zip(p, masks, strict=True)) for p in row] for row in pixels]  # type: ignore[misc]


def _opaque(pixels: Grid) -> Grid:
    return [[(r, g, b, 255) for r, g, b, _ in row] for row in pixels]


@pytest.mark.parametrize("top_down", [False, True], ids=["bottom-up", "top-down"])
@pytest.mark.parametrize("dib", [40, 108, 124])
@pytest.mark.parametrize("bits", [24, 32])
def test_true_colour_bitmaps_come_back_pixel_for_pixel(bits: int, dib: int, top_down: bool) -> None:
    pixels = grid(7, 5)  # 7 wide: 24-bit rows need padding
    png = bmp_to_png(bmp(pixels, bits, dib=dib, top_down=top_down))
    assert png_pixels(png) == pixels


def test_the_os2_header_and_colour_tables_of_1_4_and_8_bits() -> None:
    colours = [
        (0, 0, 0),
        (255, 255, 255),
        (200, 10, 30),
        (5, 250, 90),
        *[(i, i, 255 - i) for i in range(4, 256)],
    ]
    for bits in (1, 4, 8):
        used = colours[: 1 << bits]
        pixels = [[(*used[(x * 3 + y) % len(used)], 255) for x in range(13)] for y in range(6)]
        for dib in (12, 40):
            assert png_pixels(bmp_to_png(bmp(pixels, bits, dib=dib, palette=used))) == pixels, (bits, dib)


@pytest.mark.parametrize(
    "masks",
    [(0x7C00, 0x3E0, 0x1F, 0), (0xF800, 0x7E0, 0x1F, 0)],
    ids=["16-bit 5-5-5", "16-bit 5-6-5"],
)
def test_sixteen_bit_pixels_with_and_without_masks(masks: tuple[int, int, int, int]) -> None:
    pixels = grid(9, 4)
    given = masks if masks[1] == 0x7E0 else None  # 5-5-5 is the default layout, no masks written
    png = bmp_to_png(bmp(pixels, 16, masks=given))
    assert png_pixels(png) == _quantised(pixels, masks)


def test_alpha_from_a_v4_header_is_kept_and_an_all_zero_alpha_is_ignored() -> None:
    pixels = grid(6, 3, alpha=True)
    masks = (0xFF0000, 0xFF00, 0xFF, 0xFF000000)
    assert png_pixels(bmp_to_png(bmp(pixels, 32, dib=108, masks=masks))) == pixels
    assert png_pixels(bmp_to_png(bmp(pixels, 32, masks=masks, compression=6))) == pixels  # BI_ALPHABITFIELDS
    unused = [[(r, g, b, 0) for r, g, b, _ in row] for row in pixels]
    assert png_pixels(bmp_to_png(bmp(unused, 32, dib=108, masks=masks))) == _opaque(pixels)
    odd = (0x3FF00000, 0xFFC00, 0x3FF, 0)  # 10-bit channels: decoded field by field
    assert png_pixels(bmp_to_png(bmp(pixels, 32, dib=40, masks=odd))) == _quantised(_opaque(pixels), odd)


def test_kinds_not_covered_and_broken_files_say_what_they_are() -> None:
    pixels = grid(4, 4)
    with pytest.raises(BmpError, match="RLE8-compressed BMP is not supported"):
        bmp_to_png(bmp(pixels, 8, palette=sorted({p[:3] for row in pixels for p in row}), compression=1))
    with pytest.raises(BmpError, match="embedded PNG"):
        bmp_to_png(bmp(pixels, 24, compression=5)[:54] + b"\0" * 64)
    whole = bmp(pixels, 24)
    with pytest.raises(BmpError, match="truncated"):
        bmp_to_png(whole[:-10])
    with pytest.raises(BmpError, match="not a BMP"):
        bmp_to_png(b"BM" + b"\0" * 40)
    huge = whole[:18] + struct.pack("<ii", 100_000, 100_000) + whole[26:]
    with pytest.raises(BmpError, match="larger than"):
        bmp_to_png(huge)


def test_only_files_with_pis_bmp_header_count_as_bmps() -> None:
    assert looks_like_bmp(bmp(grid(2, 2), 24)[:30])
    assert not looks_like_bmp(b"BM is how this text file starts, nothing more\n")
    assert not looks_like_bmp(b"BM")


def _image(result: ToolResult) -> ImageContent:
    image = result.content[1]
    assert isinstance(image, ImageContent)
    return image


def test_the_read_tool_sends_a_bmp_as_png_with_pis_note(tmp_path: Path) -> None:
    pixels = grid(5, 4)
    (tmp_path / "shot.bmp").write_bytes(bmp(pixels, 24))
    result = read_file_result(tmp_path, "shot.bmp", None, None)
    assert result.content[0] == TextContent(text=CONVERTED)
    image = _image(result)
    assert image.mime_type == "image/png"
    assert png_pixels(base64.b64decode(image.data)) == pixels
    assert "(jpg, png, gif, webp, bmp)" in READ_DESCRIPTION


def test_a_bmp_the_standard_library_decoder_does_not_cover_is_converted_by_pillow(tmp_path: Path) -> None:
    """Run-length compressed pixels (RLE8) go through Pillow, as pi's image library decodes them."""
    pixels = grid(4, 2)
    palette = sorted({p[:3] for row in pixels for p in row})
    (tmp_path / "rle.bmp").write_bytes(rle8_bmp(pixels, palette))
    result = read_file_result(tmp_path, "rle.bmp", None, None)
    assert result.content[0] == TextContent(text=CONVERTED)
    assert png_pixels(base64.b64decode(_image(result).data)) == pixels


def test_a_bmp_that_cannot_be_decoded_is_left_out_with_the_reason(tmp_path: Path) -> None:
    pixels = grid(4, 2)
    (tmp_path / "jpeg.bmp").write_bytes(bmp(pixels, 24, compression=4))  # claims an embedded JPEG
    result = read_file_result(tmp_path, "jpeg.bmp", None, None, model_takes_images=False)
    assert len(result.content) == 1
    assert result.content[0] == TextContent(
        text="Read image file [image/bmp]\n"
        "[Image omitted: could not be converted to a supported inline image format.]\n"
        "embedded JPEG-compressed BMP is not supported; save it uncompressed\n"
        "[Current model does not support images. The image will be omitted from this request.]"
    )
