"""Ctrl+V's clipboard image, read with a stand-in ``xclip`` on PATH: PNG, JPEG, WebP and GIF are taken first
(pi's order); an image offered only as a BMP is converted to PNG, as pi converts it; data that is no image
counts as no image."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pi_tui.modes.interactive.clipboard import read_clipboard_image
from tests.tools.bmp_helpers import bmp, grid, png_pixels


def _fake_xclip(folder: Path, offered: dict[str, bytes]) -> None:
    """An ``xclip`` that lists ``offered``'s types and prints the one asked for (files beside it)."""
    folder.mkdir(exist_ok=True)
    for index, (mime, data) in enumerate(offered.items()):
        (folder / f"type{index}").write_text(mime)
        (folder / f"data{index}").write_bytes(data)
    script = folder / "xclip"
    script.write_text(
        "#!/bin/sh\n"
        f'cd "{folder}"\n'
        'if [ "$4" = TARGETS ]; then for t in type*; do cat "$t"; echo; done; exit 0; fi\n'
        'want="$5"\n'
        'for t in type*; do if [ "$(cat "$t")" = "$want" ]; then cat "data${t#type}"; exit 0; fi; done\n'
        "exit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return folder


def test_a_bmp_only_clipboard_image_is_converted_to_png(clipboard: Path) -> None:
    pixels = grid(4, 3)
    _fake_xclip(clipboard, {"TIMESTAMP": b"", "image/bmp": bmp(pixels, 24)})
    found = read_clipboard_image()
    assert found is not None
    data, mime = found
    assert mime == "image/png" and png_pixels(data) == pixels


def test_a_supported_type_is_preferred_and_sent_as_it_is(clipboard: Path) -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c636460f8cf500f0003860180"
        "5a347d6b0000000049454e44ae426082"
    )
    _fake_xclip(clipboard, {"image/bmp": bmp(grid(2, 2), 24), "image/png": png})
    assert read_clipboard_image() == (png, "image/png")


def test_data_that_is_no_image_counts_as_no_image(clipboard: Path) -> None:
    _fake_xclip(clipboard, {"image/tiff": b"not a picture"})
    assert read_clipboard_image() is None
