from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.shared_fixtures import PI_SESSIONS

FIXTURES = PI_SESSIONS
LARGE = FIXTURES / "large-session.jsonl"
BEFORE_COMPACTION = FIXTURES / "before-compaction.jsonl"

ANTHROPIC = "fake-anthropic/claude-fake"


class HostApp(App[None]):
    """Stands in for the shell's PiApp: a session, an editor to prefill and commands to run."""

    ENABLE_COMMAND_PALETTE = False  # as in pi, Ctrl+P belongs to the app, not Textual's palette

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        self.editor_text = ""
        self.commands: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("host", id="host")

    def set_editor_text(self, text: str) -> None:
        self.editor_text = text

    def require_session(self) -> Any:
        return self.session

    async def run_command(self, text: str) -> None:
        self.commands.append(text)


def fixture_session(fixture: Path, project: Path, *extra: str) -> Any:
    """A runtime session over a copy of a shared pi fixture (faux provider: nothing is sent), run in ``project``."""
    import shutil

    from pi_tui.args import parse_args
    from pi_tui.runtime.factory import create_session

    copy = project / fixture.name
    shutil.copy(fixture, copy)
    # The fixtures record the directory they were made in (another machine): the test's project is where
    # they are shown, as when the user chose to continue in the current directory.
    args = parse_args(["--session", str(copy), "--provider", "faux", *extra])
    return create_session(args, project, keep_cwd=True).session


SNAP_DIR = Path("/tmp/pi-tui-screens-snapshot")
SNAP_LOCK = Path("/tmp/pi-tui-screens-snapshot.lock")
"""Held while a test uses `SNAP_DIR`, which every checkout on the machine shares."""


def freeze_prompt_date(monkeypatch: Any) -> None:
    """The system prompt names today's date; snapshots need a fixed one."""
    import datetime as real

    from pi_tui.resources import system_prompt

    class _Date(real.date):
        @classmethod
        def today(cls) -> _Date:
            return cls(2026, 1, 15)

    class _Dt:
        date = _Date
        datetime = real.datetime

    monkeypatch.setattr(system_prompt, "_dt", _Dt)


def snapshot_project() -> Path:
    """A fixed project directory: the working directory is part of the system prompt (and its size)."""
    import shutil

    if SNAP_DIR.exists():
        shutil.rmtree(SNAP_DIR)
    (SNAP_DIR / "project").mkdir(parents=True)
    return SNAP_DIR / "project"


def write_session(
    cwd: Path,
    first: str,
    *,
    answers: int = 1,
    name: str | None = None,
    parent: Path | None = None,
    at_ms: int | None = None,
) -> Path:
    """A saved session of ``cwd``: ``first`` and ``answers`` question/answer pairs (``parent``: forked from).

    ``at_ms``: the messages' timestamps start there (sessions written in the same millisecond tie in
    the newest-first order otherwise)."""
    from pi_tui.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_tui.session import SessionManager

    manager = SessionManager.create(cwd, parent_session=parent)
    for i in range(answers):
        user = UserMessage(content=first if i == 0 else f"more {i}")
        answer = AssistantMessage(
            content=[TextContent(text=f"answer {i}")], stop_reason="stop", model="m", provider="p"
        )
        if at_ms is not None:
            user.timestamp, answer.timestamp = at_ms + 2 * i, at_ms + 2 * i + 1
        manager.append_message(user)
        manager.append_message(answer)
    if name:
        manager.append_session_info(name)
    path = manager.path
    manager.close()
    assert path is not None
    return path
