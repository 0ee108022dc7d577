"""The first-frame preview: the session file's last messages, read from its tail before the session exists."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks import AssistantText, UserBlock
from pi_tui.modes.interactive.preview import PreviewMessage, read_tail
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from tests.shared_fixtures import PI_SESSIONS

from .helpers import until

FIXTURES = PI_SESSIONS


def _write_session(path: Path, cwd: Path, exchanges: int) -> None:
    manager = SessionManager.open(path, cwd=cwd)
    for i in range(exchanges):
        manager.append_message(UserMessage(content=f"question {i}"))
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {i}")], provider="faux", model="faux-1")
        )
    manager.close()


def test_the_large_pi_fixture_previews_its_last_assistant_text() -> None:
    messages = read_tail(FIXTURES / "large-session.jsonl")
    assert messages is not None
    assert messages[-1].role == "assistant"
    assert "API mismatches" in messages[-1].text


def test_a_tail_with_a_compaction_falls_back(tmp_path: Path) -> None:
    source = FIXTURES / "before-compaction.jsonl"
    # The whole file as the tail: its compactions are in it.
    assert read_tail(source, tail_bytes=source.stat().st_size) is None
    # A copy that ends a few entries after its last compaction.
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if '"type":"compaction"' in line)
    copy = tmp_path / "compacted.jsonl"
    copy.write_text("".join(lines[: last + 4]), encoding="utf-8")
    assert read_tail(copy) is None


def test_a_test_written_session_follows_its_parent_chain(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write_session(path, tmp_path, 20)
    messages = read_tail(path, limit=4)
    assert messages == [
        PreviewMessage("user", "question 18"),
        PreviewMessage("assistant", "answer 18"),
        PreviewMessage("user", "question 19"),
        PreviewMessage("assistant", "answer 19"),
    ]


def _entry(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "message": {"role": role, "content": content},
    }


def test_branches_missing_header_and_junk_fall_back(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "x", "cwd": str(tmp_path)}
    a, b = _entry("a", None, "user", "hi"), _entry("b", "a", "assistant", "one")
    headless = tmp_path / "headless.jsonl"
    headless.write_text("".join(json.dumps(e) + "\n" for e in [a, b]), encoding="utf-8")
    assert read_tail(headless) is None
    junk = tmp_path / "junk.jsonl"
    junk.write_text(json.dumps(header) + "\n{not json\n", encoding="utf-8")
    assert read_tail(junk) is None
    assert read_tail(tmp_path / "missing.jsonl") is None
    linear = tmp_path / "linear.jsonl"
    linear.write_text("".join(json.dumps(e) + "\n" for e in [header, a, b]), encoding="utf-8")
    assert read_tail(linear) == [PreviewMessage("user", "hi"), PreviewMessage("assistant", "one")]


def test_the_active_path_is_previewed_past_branches_and_broken_lines(tmp_path: Path) -> None:
    """The leaf is the file's last entry (as the loader makes it); an abandoned branch, a corrupt line
    and a torn last line are passed over, as the loader passes over them."""
    header = {"type": "session", "version": 3, "id": "x", "cwd": str(tmp_path)}
    a, b, c, d = (
        _entry("a", None, "user", "hi"),
        _entry("b", "a", "assistant", "abandoned"),
        _entry("c", "a", "assistant", "kept"),
        _entry("d", "c", "user", "next"),
    )
    path = tmp_path / "branched.jsonl"
    lines = [json.dumps(e) for e in (header, a, b)] + ["{corrupt"] + [json.dumps(e) for e in (c, d)]
    path.write_text("\n".join(lines) + '\n{"type":"message","id":"e","par', encoding="utf-8")
    assert read_tail(path) == [
        PreviewMessage("user", "hi"),
        PreviewMessage("assistant", "kept"),
        PreviewMessage("user", "next"),
    ]


async def test_the_preview_shows_the_last_messages_until_the_session_is_ready(
    tmp_path: Path, agent_dir: Path
) -> None:
    session_file = tmp_path / "s.jsonl"
    _write_session(session_file, tmp_path, 30)
    gate = threading.Event()

    def create(trust: bool | None) -> Any:
        gate.wait(30)  # the session is "slow" until the test has looked at the preview
        parsed = parse_args(["--provider", "faux", "--session", str(session_file)])
        return create_session(parsed, tmp_path, stream_fn=FauxScript().stream)

    app = PiApp(create, cwd=tmp_path, agent_dir=agent_dir, preview_path=session_file)
    async with app.run_test(size=(100, 30)) as pilot:
        try:
            await pilot.pause()
            previews = list(app.chat.query(".preview"))
            assert app.session is None
            texts = [str(widget.render()) for widget in previews]
            assert texts[-2:] == ["question 29", "answer 29"]
            assert previews[-1].region.height > 0  # on screen: the log is anchored to its end
        finally:
            gate.set()
        await until(pilot, app.ready.is_set)
        await until(pilot, lambda: not app.chat.query(".preview"))  # `remove()` completes on a later tick
        assert [b.text for b in app.chat.query(UserBlock)][-1] == "question 29"
        assert [b.text for b in app.chat.query(AssistantText)][-1] == "answer 29"
