"""``pi-tui @shot.png "what is this"`` in a terminal: as in pi's interactive mode, the image goes with the
first prompt as an image block, exactly as print mode sends it (the full-screen app and the line mode
alike). Checked on the request the fake server recorded."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text

from .test_real_terminal import _env as terminal_env

pytestmark = pytest.mark.slow

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def _prompt_shown(screen: str) -> bool:
    lines = [line for line in screen.splitlines() if line.strip()]
    return bool(lines) and lines[-1] == ">"


@pytest.mark.parametrize("mode", [[], ["--plain"]], ids=["tui", "line-mode"])
def test_an_image_file_argument_goes_with_the_first_prompt(
    tmp_path: Path, isolated_home: Path, mode: list[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "shot.png").write_bytes(PNG_1X1)
    agent_dir = isolated_home / ".pi" / "agent"
    fake = FakeLLM()
    fake.script([Reply([text("A single red pixel.")])])
    with fake.serve() as server:
        env = terminal_env(isolated_home, agent_dir, server)
        config = json.loads((agent_dir / "models.json").read_text())
        config["providers"]["fake"]["models"][0]["input"] = ["text", "image"]
        (agent_dir / "models.json").write_text(json.dumps(config))
        argv = [
            sys.executable,
            "-m",
            "pi_tui",
            "--model",
            "fake/claude-fake",
            *mode,
            "@shot.png",
            "what is this",
        ]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("A single red pixel.", timeout=30)
            assert "attached in print" not in term.text()  # no warning that it is not attached
            if mode:  # the line mode: Ctrl+D once its prompt is back
                term.wait_for(_prompt_shown)
            term.send("\x04" if mode else "\x03\x03")
            assert term.wait_exit(timeout=20) == 0
    assert fake.violations == []
    (request,) = fake.requests
    [user] = [m for m in request.body["messages"] if m["role"] == "user"]
    images = [b for b in user["content"] if b["type"] == "image"]
    assert [b["source"]["data"] for b in images] == [base64.b64encode(PNG_1X1).decode()]
    sent = "".join(b["text"] for b in user["content"] if b["type"] == "text")
    assert sent == f'<file name="{project / "shot.png"}"></file>\nwhat is this'
