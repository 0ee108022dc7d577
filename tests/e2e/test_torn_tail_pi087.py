"""A session opened with pi 0.87.1 and pi-tui in turn, after crashes that left a torn last line: no
line is lost, no entry is glued onto the torn bytes, and each program's request carries everything the
other wrote.

pi ends a torn last line with a newline when it loads the file and keeps its bytes as a line it skips;
pi-tui does the same on its first append. The file only ever grows: every earlier byte stays a prefix.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from ..pi087 import Pi087
from .helpers import run_cli

pytestmark = pytest.mark.slow

OPENAI = "fake-openai/gpt-fake"
TORN_BY_TUI = b'{"type":"message","id":"deadbeef","parentId":"x","timestamp":"2025-01-01T00:00:00.000Z","mes'
TORN_BY_PI = b'{"type":"message","id":"feedf00d","parentId":"y","message":{"role":"assistant","content":[{"ty'


def _sent(fake: FakeLLM) -> list[str]:
    texts = []
    for message in fake.requests[-1].messages:
        if message["role"] in ("user", "assistant"):
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return texts


def _pi(pi087: Pi087, path: Path, prompt: str, cwd: Path) -> None:
    run = subprocess.run(
        pi087.argv("--session", str(path), "--model", OPENAI, "-p", prompt),
        cwd=cwd,
        env=pi087.env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr


def _tui(path: Path | None, prompt: str, cwd: Path) -> None:
    args = ["--model", OPENAI, "-p", prompt]
    run = run_cli(["--session", str(path), *args] if path is not None else args, cwd)
    assert run.returncode == 0, run.stderr


def _check_lines(data: bytes, torn: list[bytes]) -> list[dict[str, Any]]:
    """Every line parses, except the torn ones, which are there whole and on lines of their own."""
    entries = []
    for line in data.splitlines():
        if line in torn:
            continue
        entries.append(json.loads(line))
    assert data.endswith(b"\n")
    return entries


def test_pi_and_pi_tui_take_turns_on_a_session_with_torn_lines_and_lose_nothing(
    tmp_path: Path, fake: FakeLLM, pi087: Pi087
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake.script([Reply([text(answer)]) for answer in ("A1", "B1", "C1", "D1", "E1")])

    _tui(None, "first", project)
    (path,) = list((Path(pi087.env()["PI_CODING_AGENT_DIR"]) / "sessions").glob("*/*.jsonl"))
    with path.open("ab") as handle:
        handle.write(TORN_BY_TUI)  # pi-tui killed in the middle of a write
    grown = path.read_bytes()

    _tui(path, "second", project)
    assert _sent(fake) == ["first", "A1", "second"]
    assert path.read_bytes().startswith(grown + b"\n")

    _pi(pi087, path, "third", project)
    assert _sent(fake) == ["first", "A1", "second", "B1", "third"]
    with path.open("ab") as handle:
        handle.write(TORN_BY_PI)  # pi killed in the middle of a write
    grown = path.read_bytes()

    _tui(path, "fourth", project)
    assert _sent(fake) == ["first", "A1", "second", "B1", "third", "C1", "fourth"]
    assert path.read_bytes().startswith(grown + b"\n")
    grown = path.read_bytes()

    _pi(pi087, path, "fifth", project)
    assert _sent(fake) == ["first", "A1", "second", "B1", "third", "C1", "fourth", "D1", "fifth"]
    data = path.read_bytes()
    assert data.startswith(grown)
    entries = _check_lines(data, [TORN_BY_TUI, TORN_BY_PI])
    assert not list(path.parent.glob("*.bak"))
    messages = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(messages) == 5
