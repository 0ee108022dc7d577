"""Images that tools return (an extension's, an MCP server's) are converted and fitted into the model's
limits before they enter the history, as pi 0.87.1 normalises tool-result images: a BMP becomes PNG with
``[Image converted from image/bmp to image/png.]`` after it, an image over 2000 pixels (or the model's
``inputLimits.images.resize``) is scaled down with pi's dimension note, and an image that cannot be
processed is kept as the tool returned it. What reaches the provider is read from the request the fake
server recorded.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from pi_tui.ai.types import ImageContent
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.tools.bmp_helpers import bmp, grid, png_pixels

from .helpers import open_session, write_settings

CONVERTED = "[Image converted from image/bmp to image/png.]"
TIFF_CONVERTED = "[Image converted from image/tiff to image/png.]"

EXTENSION = """
import base64, pathlib

PICTURES = pathlib.Path(__file__).parent / "pictures"


def _image(name, mime):
    return {"type": "image", "data": base64.b64encode((PICTURES / name).read_bytes()).decode(), "mimeType": mime}


def register(pi):
    def shot(tool_call_id, params):
        return {"content": [{"type": "text", "text": "shot"}, *[_image(n, m) for n, m in params["images"]]]}

    pi.register_tool(name="shot", description="Takes screenshots.", parameters={"type": "object"}, execute=shot)

    def swap(event):
        if event.tool_name == "read":
            return {"content": [{"type": "text", "text": "swapped"}, _image("small.bmp", "image/bmp")]}

    pi.on("tool_result", swap)
"""


def _encode(image: Image.Image, kind: str) -> bytes:
    out = io.BytesIO()
    image.save(out, kind)
    return out.getvalue()


def _gradient(width: int, height: int) -> Image.Image:
    """A picture that compresses well (so a large one is quick to make) but is not one flat colour."""
    row = bytes(x * 255 // max(1, width - 1) for x in range(width))
    return Image.frombytes("L", (width, height), row * height).convert("RGB")


def _setup(tmp_path: Path, agent_dir: Path, fake: FakeLLM, resize: dict[str, int] | None = None) -> Path:
    """models.json with one image model (its ``inputLimits.images.resize`` when given), the extension
    and its pictures; returns the extension's path."""
    assert fake.server is not None
    model: dict[str, Any] = {"id": "claude-eyes", "contextWindow": 200_000, "maxTokens": 8192}
    model["input"] = ["text", "image"]
    if resize is not None:
        model["inputLimits"] = {"images": {"resize": resize}}
    provider = {"baseUrl": fake.server.anthropic_base_url, "api": "anthropic-messages", "apiKey": "k"}
    config = {"providers": {"fake-eyes": {**provider, "models": [model]}}}
    (agent_dir / "models.json").write_text(json.dumps(config))
    folder = tmp_path / "ext"
    pictures = folder / "pictures"
    pictures.mkdir(parents=True)
    (pictures / "small.bmp").write_bytes(bmp(grid(5, 3), 24))
    (pictures / "wide.png").write_bytes(_encode(_gradient(4000, 1000), "PNG"))
    (pictures / "small.png").write_bytes(_encode(_gradient(30, 20), "PNG"))
    (pictures / "page.tiff").write_bytes(_encode(_gradient(40, 10), "TIFF"))
    (pictures / "junk.png").write_bytes(b"not an image at all")
    path = folder / "shots.py"
    path.write_text(EXTENSION)
    return path


def _tool_result(fake: FakeLLM, request: int = 1) -> list[dict[str, Any]]:
    """The blocks of the tool result a request (by default the second) carried (Anthropic's format)."""
    message = fake.requests[request].body["messages"][-1]
    [result] = [block for block in message["content"] if block["type"] == "tool_result"]
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in result["content"]]


def _size(block: dict[str, Any]) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))) as image:
        return image.size


async def test_an_extension_tools_images_are_converted_and_fitted(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    images = [
        ("small.bmp", "image/bmp"),
        ("wide.png", "image/png"),
        ("small.png", "image/png"),
        ("page.tiff", "image/tiff"),
        ("junk.png", "image/png"),
    ]
    fake.script([Reply([tool_call("shot", {"images": images})]), Reply([text("seen")])])
    with fake.serve():
        extension = _setup(tmp_path, agent_dir, fake)
        async with open_session(
            ["--model", "fake-eyes/claude-eyes", "-e", str(extension)], tmp_path
        ) as session:
            await session.prompt("look")
    blocks = _tool_result(fake)
    kinds = [(b["type"], b.get("text") or b["source"]["media_type"]) for b in blocks]
    assert kinds == [
        ("text", "shot"),
        ("image", "image/png"),
        ("text", CONVERTED),
        ("image", "image/png"),
        (
            "text",
            "[Image: original 4000x1000, displayed at 2000x500. "
            "Multiply coordinates by 2.00 to map to original image.]",
        ),
        ("image", "image/png"),
        ("image", "image/png"),
        ("text", TIFF_CONVERTED),
        ("image", "image/png"),  # the junk: kept as the tool returned it (pi does not delete a tool's output)
    ]
    pictures = tmp_path / "ext" / "pictures"
    assert png_pixels(base64.b64decode(blocks[1]["source"]["data"])) == grid(5, 3)
    assert _size(blocks[3]) == (2000, 500)
    assert base64.b64decode(blocks[5]["source"]["data"]) == (pictures / "small.png").read_bytes()  # untouched
    assert _size(blocks[6]) == (40, 10)
    assert base64.b64decode(blocks[8]["source"]["data"]) == b"not an image at all"
    assert fake.violations == []


async def test_the_models_limits_and_the_auto_resize_setting_are_followed(
    tmp_path: Path, agent_dir: Path
) -> None:
    """``inputLimits.images.resize`` (here 500 pixels wide) bounds what a tool's image is fitted into; with
    ``images.autoResize`` off the image goes at its size, and a BMP is still converted."""
    fake = FakeLLM()
    call = tool_call("shot", {"images": [["wide.png", "image/png"], ["small.bmp", "image/bmp"]]})
    fake.script([Reply([call]), Reply([text("seen")]), Reply([call]), Reply([text("seen")])])
    with fake.serve():
        extension = _setup(tmp_path, agent_dir, fake, resize={"maxWidth": 500, "maxHeight": 500})
        argv = ["--model", "fake-eyes/claude-eyes", "-e", str(extension), "--no-session"]
        async with open_session(argv, tmp_path) as session:
            await session.prompt("look")
        fitted = _tool_result(fake)
        write_settings(agent_dir, {"images": {"autoResize": False}})
        async with open_session(argv, tmp_path) as session:
            await session.prompt("look")
        as_is = _tool_result(fake, 3)
    assert _size(fitted[1]) == (500, 125)
    assert fitted[2]["text"] == (
        "[Image: original 4000x1000, displayed at 500x125. Multiply coordinates by 8.00 to map to original image.]"
    )
    assert _size(as_is[1]) == (4000, 1000)
    assert [b.get("text") for b in as_is if b["type"] == "text"] == ["shot", CONVERTED]


async def test_images_a_tool_result_handler_puts_in_are_converted_too(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    (tmp_path / "a.txt").write_text("hello")
    fake.script([Reply([tool_call("read", {"path": "a.txt"})]), Reply([text("seen")])])
    with fake.serve():
        extension = _setup(tmp_path, agent_dir, fake)
        async with open_session(
            ["--model", "fake-eyes/claude-eyes", "-e", str(extension)], tmp_path
        ) as session:
            await session.prompt("look")
    blocks = _tool_result(fake)
    assert [(b["type"], b.get("text") or b["source"]["media_type"]) for b in blocks] == [
        ("text", "swapped"),
        ("image", "image/png"),
        ("text", CONVERTED),
    ]


async def test_a_model_switched_in_before_agent_start_sets_the_prompt_images_limits(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi fits a prompt's images after ``before_agent_start``: a handler that switches to a model with
    smaller limits (here 500 pixels) gets the image fitted to that model."""
    fake = FakeLLM()
    fake.script([Reply([text("seen")])])
    with fake.serve():
        _setup(tmp_path, agent_dir, fake)
        config = json.loads((agent_dir / "models.json").read_text())
        small = {**config["providers"]["fake-eyes"]["models"][0], "id": "claude-small-eyes"}
        small["inputLimits"] = {"images": {"resize": {"maxWidth": 500}}}
        config["providers"]["fake-eyes"]["models"].append(small)
        (agent_dir / "models.json").write_text(json.dumps(config))
        switcher = tmp_path / "ext" / "switch.py"
        switcher.write_text(
            "def register(pi):\n"
            "    pi.on('before_agent_start', lambda event: pi.set_model('fake-eyes/claude-small-eyes') and None)\n"
        )
        wide = base64.b64encode((tmp_path / "ext" / "pictures" / "wide.png").read_bytes()).decode()
        argv = ["--model", "fake-eyes/claude-eyes", "-e", str(switcher)]
        async with open_session(argv, tmp_path) as session:
            await session.prompt("look", [ImageContent(data=wide, mime_type="image/png")])
    body = fake.requests[0].body
    assert body["model"] == "claude-small-eyes"
    content = body["messages"][0]["content"]
    assert content[0]["text"].endswith(
        "displayed at 500x125. Multiply coordinates by 8.00 to map to original image.]"
    )
    [image] = [block for block in content if block["type"] == "image"]
    assert _size(image) == (500, 125)
