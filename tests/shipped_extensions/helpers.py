from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.extensions.helpers import (  # noqa: F401  (re-exported for the test modules)
    MODEL,
    Events,
    model_requests,
    module,
    open_session,
    open_startup,
    session_entries,
    user_texts,
)


def ext(*names: str) -> list[str]:
    """``-e NAME`` for bundled extensions, by bare name (the way users enable them)."""
    return [arg for name in names for arg in ("-e", name)]


def write_settings(agent_dir: Path, settings: dict[str, Any]) -> None:
    path = agent_dir / "settings.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    current.update(settings)
    path.write_text(json.dumps(current))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def panel_text(request: Any, name: str) -> str | None:
    """The body of panel ``name`` in an Anthropic request (after its ``======= [Pn] name =======`` line)."""
    for result in request.tool_results():
        head, _, body = result.content.partition("\n")
        if result.tool_call_id.startswith("panel_") and head.endswith(f"] {name} ======="):
            return body
    return None


def message_index(request: Any, predicate: Any) -> int:
    for i, message in enumerate(request.messages):
        if predicate(message):
            return i
    raise AssertionError("no such message in the request")


def panel_index(request: Any, name: str) -> int:
    def is_panel(message: dict[str, Any]) -> bool:
        content = message.get("content")
        return isinstance(content, list) and any(
            b.get("type") == "tool_result" and f"] {name} =======" in _text(b.get("content")) for b in content
        )

    return message_index(request, is_panel)


def prompt_index(request: Any, text: str) -> int:
    def is_prompt(message: dict[str, Any]) -> bool:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return message.get("role") == "user" and any(
            b.get("type") == "text" and b.get("text") == text for b in blocks
        )

    return message_index(request, is_prompt)


class ScriptedUI:
    """A UI bridge that answers ``confirm`` from a list of answers and records what was asked."""

    def __init__(self, answers: Sequence[bool] = ()) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []
        self.notices: list[tuple[str, str]] = []

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        self.asked.append((title, message))
        return self.answers.pop(0) if self.answers else False

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append((message, level))
