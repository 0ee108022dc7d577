from __future__ import annotations

import base64
import unicodedata
from pathlib import Path

import pytest

from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import ImageContent, TextContent
from pi_tui.tools.images import ResizedImage, detect_image_mime_type
from pi_tui.tools.read import create_read_tool

from .helpers import run, run_error, run_text

# a real 1x1 PNG: an image is sent only when it decodes (or its header shows it fits the model's limits)
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _numbered(count: int) -> str:
    return "\n".join(f"line{i}" for i in range(1, count + 1))


async def test_reads_a_whole_small_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    result = await run(create_read_tool(tmp_path), {"path": "a.txt"})
    assert result.content == [TextContent(text="hello\nworld\n")]
    assert result.details is None


async def test_offset_and_limit_select_lines_and_say_what_is_left(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(_numbered(10))
    text = await run_text(create_read_tool(tmp_path), {"path": "a.txt", "offset": 3, "limit": 2})
    assert text == "line3\nline4\n\n[6 more lines in file. Use offset=5 to continue.]"


async def test_limit_reaching_the_end_adds_no_notice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(_numbered(5))
    text = await run_text(create_read_tool(tmp_path), {"path": "a.txt", "offset": 4, "limit": 10})
    assert text == "line4\nline5"


async def test_offset_beyond_the_end_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(_numbered(10))
    error = await run_error(create_read_tool(tmp_path), {"path": "a.txt", "offset": 20})
    assert str(error) == "Offset 20 is beyond end of file (10 lines total)"


async def test_long_files_stop_at_2000_lines_with_a_continue_notice(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_numbered(2500))
    result = await run(create_read_tool(tmp_path), {"path": "big.txt"})
    text = result.content[0].text
    body, notice = text.split("\n\n")
    assert body.split("\n")[-1] == "line2000"
    assert notice == "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_continuing_from_the_offset_reads_the_rest(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_numbered(2500))
    text = await run_text(create_read_tool(tmp_path), {"path": "big.txt", "offset": 2001})
    assert text.split("\n")[0] == "line2001"
    assert text.endswith("line2500")


async def test_wide_files_stop_at_50kb_with_a_byte_limit_notice(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("\n".join(f"{i:04d}" + "x" * 96 for i in range(1000)))
    text = await run_text(create_read_tool(tmp_path), {"path": "wide.txt"})
    body, notice = text.split("\n\n")
    assert len(body.split("\n")) == 506
    assert notice == "[Showing lines 1-506 of 1000 (50.0KB limit). Use offset=507 to continue.]"


async def test_a_single_line_over_50kb_points_at_bash(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 60000 + "\nsecond")
    result = await run(create_read_tool(tmp_path), {"path": "min.js"})
    assert result.content[0].text == (
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    )
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_a_missing_file_is_an_enoent_error(tmp_path: Path) -> None:
    error = await run_error(create_read_tool(tmp_path), {"path": "nope.txt"})
    assert str(error) == f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'"


async def test_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    error = await run_error(create_read_tool(tmp_path), {"path": "d"})
    assert "EISDIR" in str(error)


async def test_images_are_recognised_by_magic_bytes_not_extension(tmp_path: Path) -> None:
    (tmp_path / "picture.dat").write_bytes(PNG)
    result = await run(create_read_tool(tmp_path), {"path": "picture.dat"})
    assert result.content[0] == TextContent(text="Read image file [image/png]")
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG


async def test_a_png_named_file_with_text_inside_is_read_as_text(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("just text")
    assert await run_text(create_read_tool(tmp_path), {"path": "fake.png"}) == "just text"


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"GIF87a\x01\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", None),
        (b"BM\x00\x00", None),
        (b"hello", None),
    ],
)
def test_magic_byte_detection(head: bytes, mime: str | None) -> None:
    assert detect_image_mime_type(head) == mime


async def test_a_resizer_adds_pis_dimension_note(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(PNG)

    def resize(data: bytes, mime_type: str) -> ResizedImage:
        return ResizedImage(b"small", "image/jpeg", 4000, 3000, 2000, 1500, was_resized=True)

    result = await run(create_read_tool(tmp_path, image_resizer=resize), {"path": "big.png"})
    assert result.content[0].text == (
        "Read image file [image/jpeg]\n"
        "[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to original image.]"
    )
    assert result.content[1] == ImageContent(data=base64.b64encode(b"small").decode(), mime_type="image/jpeg")


async def test_an_image_the_resizer_cannot_fit_is_omitted(tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(PNG)
    result = await run(
        create_read_tool(tmp_path, image_resizer=lambda data, mime: None), {"path": "huge.png"}
    )
    assert len(result.content) == 1
    assert result.content[0].text.startswith("Read image file [image/png]\n[Image omitted:")


async def test_auto_resize_off_sends_the_image_untouched(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)

    def refuse(data: bytes, mime_type: str) -> ResizedImage:
        raise AssertionError("the resizer must not run")

    tool = create_read_tool(tmp_path, image_resizer=refuse, auto_resize_images=False)
    result = await run(tool, {"path": "a.png"})
    assert base64.b64decode(result.content[1].data) == PNG


async def test_reads_macos_spellings_of_the_name(tmp_path: Path) -> None:
    (tmp_path / unicodedata.normalize("NFD", "résumé.txt")).write_text("cv")
    text = await run_text(create_read_tool(tmp_path), {"path": unicodedata.normalize("NFC", "@résumé.txt")})
    assert text == "cv"


async def test_numeric_strings_are_accepted_for_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(_numbered(5))
    text = await run_text(create_read_tool(tmp_path), {"path": "a.txt", "offset": "2", "limit": 1.0})
    assert text.startswith("line2\n\n[3 more lines")


async def test_an_aborted_signal_stops_the_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    signal = AbortSignal()
    signal.abort()
    error = await run_error(create_read_tool(tmp_path), {"path": "a.txt"}, signal=signal)
    assert str(error) == "Operation aborted"
