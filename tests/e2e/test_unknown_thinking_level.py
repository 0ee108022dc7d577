"""A session file that records a thinking level pi does not know resumes at the model's first level."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.types import AssistantMessage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli

OPENAI = "fake-openai/gpt-fake"


def test_a_recorded_thinking_level_pi_does_not_know_is_clamped_not_fatal(
    tmp_path: Path, fake: FakeLLM
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake.script([Reply([text("C1")])])
    manager = SessionManager.create(project.resolve())
    manager.append_message(UserMessage(content="first", timestamp=1_700_000_000_000))
    manager.append_message(
        AssistantMessage(
            content=[{"type": "text", "text": "A1"}],
            api="openai-completions",
            provider="fake-openai",
            model="gpt-fake",
            stop_reason="stop",
            timestamp=1_700_000_001_000,
        )
    )
    leaf = manager.get_leaf_id()
    manager.close()
    assert manager.path is not None
    change = {
        "type": "thinking_level_change",
        "id": "7e7e7e7e",
        "parentId": leaf,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "thinkingLevel": "turbo",  # written by another tool, or a newer pi
    }
    with manager.path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(change) + "\n")

    run = run_cli(["--session", str(manager.path), "--model", OPENAI, "-p", "second"], project)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "C1\n"
    assert "Traceback" not in run.stderr
