"""Images attached to a prompt (RPC ``images``, an extension, a paste) are checked before they reach the
session, as pi 0.87.1 checks them: data that is not a PNG, JPEG, GIF or WebP image is left out and the
prompt's text says so, rather than sent to a provider that would refuse it (Anthropic answers 400 "Could
not process image") on this request and on every later one, the image being part of the history.

pi, side by side over RPC with ``"data": "!!!"``: ``img\\n\\n[Image omitted: could not be resized below
the inline image size limit.]`` and no image block. A declared type that does not match the bytes is
corrected (pi re-encodes the image; the API refuses a mismatched ``media_type``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from pi_tui.ai.types import ImageContent
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import open_session, without_cache_control

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _jpeg() -> str:
    """A real 2x2 JPEG (an image is sent only if it decodes or its header shows it fits)."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 30, 30)).save(out, "JPEG")
    return base64.b64encode(out.getvalue()).decode()


JPEG = _jpeg()
OMITTED = "[Image omitted: could not be resized below the inline image size limit.]"
UNSUPPORTED = "[Image omitted: could not be converted to a supported inline image format.]"


def _models(agent_dir: Path, fake: FakeLLM) -> None:
    assert fake.server is not None
    model = {"id": "claude-eyes", "contextWindow": 200_000, "maxTokens": 8192, "input": ["text", "image"]}
    config = {
        "providers": {
            "fake-eyes": {
                "baseUrl": fake.server.anthropic_base_url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [model],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(config))


async def test_broken_or_mislabelled_prompt_images_never_reach_the_provider(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("seen")]), Reply([text("seen again")])])
    with fake.serve():
        _models(agent_dir, fake)
        async with open_session(["--model", "fake-eyes/claude-eyes"], tmp_path) as session:
            await session.prompt(
                "look",
                [
                    ImageContent(data="!!!", mime_type="image/png"),
                    ImageContent(data=base64.b64encode(b"hello").decode(), mime_type="image/png"),
                    ImageContent(data=base64.b64encode(b"BM....").decode(), mime_type="image/bmp"),
                    ImageContent(data=PNG, mime_type="image/png"),
                    ImageContent(data=JPEG, mime_type="image/png"),
                ],
            )
            await session.prompt("and now?")
    first, second = (r.body["messages"] for r in fake.requests)
    content = first[0]["content"]
    assert content[0]["text"] == f"look\n\n{OMITTED}\n{OMITTED}\n{UNSUPPORTED}"
    images = [(c["source"]["media_type"], c["source"]["data"]) for c in content if c["type"] == "image"]
    assert images == [("image/png", PNG), ("image/jpeg", JPEG)]
    assert without_cache_control(second[0]) == without_cache_control(first[0])  # replayed as sent
    assert fake.violations == []


def test_wrapped_base64_is_still_recognised() -> None:
    """MIME-style base64 (a line break every 76 characters) decodes as providers decode it."""
    from pi_tui.runtime.prompt_images import check_prompt_images

    wrapped = "\n".join(PNG[i : i + 10] for i in range(0, len(PNG), 10))
    kept, notes = check_prompt_images([ImageContent(data=wrapped, mime_type="image/png")])
    assert notes == [] and [k.mime_type for k in kept] == ["image/png"]


async def test_a_bmp_prompt_image_is_sent_as_png_with_pis_note(tmp_path: Path, agent_dir: Path) -> None:
    """As pi converts a BMP attached to a prompt: the request carries a PNG of the same pixels and the
    prompt's text ends with ``[Image converted from image/bmp to image/png.]``."""
    from tests.tools.bmp_helpers import bmp, grid, png_pixels, rle8_bmp

    pixels = grid(5, 3)
    palette = sorted({p[:3] for row in pixels for p in row})
    fake = FakeLLM()
    fake.script([Reply([text("seen")])])
    with fake.serve():
        _models(agent_dir, fake)
        async with open_session(["--model", "fake-eyes/claude-eyes"], tmp_path) as session:
            await session.prompt(
                "look",
                [
                    ImageContent(data=base64.b64encode(bmp(pixels, 24)).decode(), mime_type="image/bmp"),
                    ImageContent(
                        data=base64.b64encode(rle8_bmp(pixels, palette)).decode(), mime_type="image/bmp"
                    ),
                    ImageContent(
                        data=base64.b64encode(bmp(pixels, 24, compression=4)).decode(), mime_type="image/bmp"
                    ),
                ],
            )
    content = fake.requests[0].body["messages"][0]["content"]
    converted = "[Image converted from image/bmp to image/png.]"
    assert content[0]["text"] == f"look\n\n{converted}\n{converted}\n{UNSUPPORTED}"
    images = [c["source"] for c in content if c["type"] == "image"]
    assert [image["media_type"] for image in images] == ["image/png", "image/png"]
    assert [png_pixels(base64.b64decode(image["data"])) for image in images] == [pixels, pixels]
    assert fake.violations == []


async def test_a_large_prompt_image_is_scaled_down_with_pis_note(tmp_path: Path, agent_dir: Path) -> None:
    """As pi fits a prompt's images into the model's limits (2000 pixels a side by default): the request
    carries the smaller image and the prompt's text ends with pi's dimension note."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.linear_gradient("L").resize((4000, 500)).convert("RGB").save(out, "PNG")
    fake = FakeLLM()
    fake.script([Reply([text("seen")])])
    with fake.serve():
        _models(agent_dir, fake)
        async with open_session(["--model", "fake-eyes/claude-eyes"], tmp_path) as session:
            await session.prompt(
                "look", [ImageContent(data=base64.b64encode(out.getvalue()).decode(), mime_type="image/png")]
            )
    content = fake.requests[0].body["messages"][0]["content"]
    assert content[0]["text"] == (
        "look\n\n[Image: original 4000x500, displayed at 2000x250. "
        "Multiply coordinates by 2.00 to map to original image.]"
    )
    [image] = [c["source"] for c in content if c["type"] == "image"]
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as sent:
        assert (image["media_type"], sent.size) == ("image/png", (2000, 250))
