"""Reading an image with a model that takes no images: the tool result says so, in pi 0.87.1's words.

pi's read tool adds "[Current model does not support images. The image will be omitted from this
request.]" to an image's note when the current model's input has no ``image``, so the model (and the user
looking at the tool's output) learns why there is no picture; the request then carries the note and the
history's placeholder instead of the image. A vision model gets the image and no such line.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.pi087 import Pi087

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
NOTE = "[Current model does not support images. The image will be omitted from this request.]"


def _run(tmp_path: Path, agent_dir: Path, model: str, vision: bool) -> FakeLLM:
    (tmp_path / "red.png").write_bytes(PNG)
    fake = FakeLLM()
    fake.script([Reply([tool_call("read", {"path": "red.png"})]), Reply([text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        if vision:  # give the Messages API model image input
            path = agent_dir / "models.json"
            path.write_text(
                path.read_text().replace(
                    '"id": "claude-fake"', '"id": "claude-fake", "input": ["text", "image"]'
                )
            )
        run = run_cli(["--model", model, "-p", "look at red.png"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert len(fake.requests) == 2
    return fake


def test_a_text_only_model_is_told_the_image_is_left_out(tmp_path: Path, agent_dir: Path) -> None:
    fake = _run(tmp_path, agent_dir, "fake-openai/gpt-fake", vision=False)
    tool_message = fake.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith(f"Read image file [image/png]\n{NOTE}\n"), tool_message


def test_a_vision_model_gets_the_image_without_the_note(tmp_path: Path, agent_dir: Path) -> None:
    fake = _run(tmp_path, agent_dir, "fake-anthropic/claude-fake", vision=True)
    result = fake.requests[1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    kinds = [block["type"] for block in result["content"]]
    assert kinds == ["text", "image"]
    assert result["content"][0]["text"] == "Read image file [image/png]"


def _read_bmp(tmp_path: Path, agent_dir: Path, argv: list[str], env: dict[str, str] | None = None) -> Any:
    """The tool result the fake server received after ``argv`` (pi-tui or pi) read shot.bmp."""
    fake = FakeLLM()
    fake.script([Reply([tool_call("read", {"path": "shot.bmp"})]), Reply([text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        path = agent_dir / "models.json"
        path.write_text(
            path.read_text().replace('"id": "claude-fake"', '"id": "claude-fake", "input": ["text", "image"]')
        )
        run = subprocess.run(
            [*argv, "--model", "fake-anthropic/claude-fake", "-p", "look at shot.bmp"],
            cwd=tmp_path,
            env=env or {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert run.returncode == 0, run.stderr
    return fake.requests[1].body["messages"][-1]["content"][0]


def test_a_bmp_reaches_a_vision_model_as_the_same_picture_in_png(
    tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    from tests.tools.bmp_helpers import bmp, grid, png_pixels

    pixels = grid(11, 6)
    (tmp_path / "shot.bmp").write_bytes(bmp(pixels, 24))
    ours = _read_bmp(tmp_path, agent_dir, [sys.executable, "-m", "pi_tui"])
    pis = _read_bmp(tmp_path, agent_dir, pi087.argv(), pi087.env())
    # pi 0.87.1 sends the same note and a PNG of the same pixels (its encoder's bytes differ)
    assert [b["type"] for b in pis["content"]] == ["text", "image"]
    assert pis["content"][0] == ours["content"][0]
    assert png_pixels(base64.b64decode(pis["content"][1]["source"]["data"])) == pixels
    result = ours
    assert result["type"] == "tool_result"
    note, image = result["content"]
    assert note["text"] == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    assert image["source"]["media_type"] == "image/png"
    assert png_pixels(base64.b64decode(image["source"]["data"])) == pixels
