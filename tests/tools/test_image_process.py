"""The one path every image takes into the context (`pi_tui.tools.image_process`): sizes read from
headers, pi's limits and fitting strategy, pi's notes, and what happens without Pillow."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pi_tui.tools.image_process import (
    NOT_CONVERTIBLE,
    NOT_RESIZABLE,
    ImageOmitted,
    ProcessedImage,
    ResizeLimits,
    limits_for_model,
    process_image,
)
from pi_tui.tools.image_size import header_dimensions


def _encode(image: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def _noise(width: int, height: int) -> Image.Image:
    return Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))


@pytest.mark.parametrize(
    ("kind", "mime", "options"),
    [
        ("PNG", "image/png", {}),
        ("JPEG", "image/jpeg", {}),
        ("JPEG", "image/jpeg", {"progressive": True}),
        ("GIF", "image/gif", {}),
        ("WEBP", "image/webp", {}),
        ("WEBP", "image/webp", {"lossless": True}),
    ],
)
def test_sizes_come_from_the_header_as_pillow_reads_them(
    kind: str, mime: str, options: dict[str, object]
) -> None:
    data = _encode(Image.new("RGB", (321, 123), (1, 2, 3)), kind, **options)
    assert header_dimensions(data, mime) == (321, 123)
    assert header_dimensions(data[:9], mime) is None  # cut short: unknown, never a guess


def test_a_webp_with_alpha_has_the_extended_header() -> None:
    data = _encode(Image.new("RGBA", (17, 9), (1, 2, 3, 4)), "WEBP")
    assert header_dimensions(data, "image/webp") == (17, 9)


def test_the_models_resize_limits_override_pis_defaults_one_by_one() -> None:
    assert limits_for_model(None) == ResizeLimits(2000, 2000, 4718592, 80)
    limits = limits_for_model({"images": {"resize": {"maxWidth": 800, "jpegQuality": "high", "maxBytes": 0}}})
    assert limits == ResizeLimits(800, 2000, 4718592, 80)


def test_an_image_over_the_byte_limit_is_re_encoded_as_jpeg_at_its_size() -> None:
    """pi's order: PNG first, then JPEG at falling qualities; the first below the limit is sent (its
    dimension note names the same size, as pi's does)."""
    data = _encode(_noise(300, 200), "PNG")
    processed = process_image(data, "image/png", limits=ResizeLimits(max_bytes=len(data) // 2))
    assert isinstance(processed, ProcessedImage)
    assert processed.mime_type == "image/jpeg"
    assert processed.hints == [
        "[Image: original 300x200, displayed at 300x200. Multiply coordinates by 1.00 to map to original image.]"
    ]


def test_an_image_that_fits_nowhere_is_left_out() -> None:
    data = _encode(_noise(64, 64), "PNG")
    assert process_image(data, "image/png", limits=ResizeLimits(max_bytes=4)) == ImageOmitted(NOT_RESIZABLE)


def test_a_jpegs_exif_orientation_is_applied_when_it_is_resized() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    data = _encode(Image.new("RGB", (400, 100)), "JPEG", exif=exif.tobytes())
    processed = process_image(data, "image/jpeg", limits=ResizeLimits(max_width=200, max_height=200))
    assert isinstance(processed, ProcessedImage)
    with Image.open(io.BytesIO(processed.data)) as image:
        assert image.size == (50, 200)  # upright: 100x400, scaled into 200 pixels tall


def test_an_animated_gif_over_the_limits_is_sent_as_its_first_frame() -> None:
    frames = [Image.new("RGB", (300, 30), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    processed = process_image(out.getvalue(), "image/gif", limits=ResizeLimits(max_width=100))
    assert isinstance(processed, ProcessedImage) and processed.mime_type == "image/png"
    with Image.open(io.BytesIO(processed.data)) as image:
        assert image.size == (100, 10) and image.convert("RGB").getpixel((5, 5)) == (255, 0, 0)


def test_declared_types_and_data_that_is_no_image() -> None:
    assert process_image(b"not an image", "image/png") == ImageOmitted(NOT_RESIZABLE)
    assert process_image(b"not an image", "application/pdf") == ImageOmitted(NOT_CONVERTIBLE)
    png = _encode(Image.new("RGB", (2, 2)), "PNG")
    processed = process_image(png, "image/JPG; charset=x")
    assert isinstance(processed, ProcessedImage)
    assert (processed.data, processed.mime_type, processed.hints) == (png, "image/png", [])


def test_a_fitting_image_is_not_decoded_and_without_pillow_only_the_rest_is_lost(tmp_path: Path) -> None:
    """A small PNG passes on its header alone; with Pillow missing, a BMP still converts (the standard
    library decoder), an image to shrink is left out, and a tool's image is kept as it was."""
    script = """
import base64, io, struct, sys, zlib
sys.modules["PIL"] = None  # as if Pillow were not installed
from pi_tui.ai.types import ImageContent
from pi_tui.tools.image_process import process_image
from pi_tui.tools.result_images import normalize_result_images
from tests.tools.bmp_helpers import bmp, grid

def png(width, height):
    raw = b"".join(b"\\0" + bytes(3 * width) for _ in range(height))
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")

small = process_image(png(10, 10), "image/png")
print(small.mime_type, small.hints)
print(process_image(bmp(grid(3, 2), 24), "image/bmp").hints)
print(process_image(png(3000, 10), "image/png").message)
wide = ImageContent(data=base64.b64encode(png(3000, 10)).decode(), mime_type="image/png")
print(normalize_result_images([wide]))
"""
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=30, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "image/png []",
        "['[Image converted from image/bmp to image/png.]']",
        NOT_RESIZABLE,
        "None",
    ]
