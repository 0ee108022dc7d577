"""pi 0.87's ``deferred`` stop reason: an assistant message holding only a handle to an answer the provider
finishes later. It is a modelled message (kept, round-tripped), never part of the model's context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.ai.types import AssistantMessage
from pi_tui.session import SessionManager
from pi_tui.session.entries import MessageEntry, RawEntry
from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import rehome_session
from .test_pi087_sessions import ANTHROPIC, open_session, project  # noqa: F401

_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
_HANDLE = {
    "provider": "fake-anthropic",
    "modelId": "claude-fake",
    "api": "anthropic-messages",
    "id": "deferred_1",
}


def _session(path: Path) -> list[str]:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "01a20e93-08fe-7462-b35c-5d9653c94e61", "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-11-24T17:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "first"}], "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-11-24T17:00:01.000Z",
         "message": {"role": "assistant", "content": [], "api": "anthropic-messages",
                     "provider": "fake-anthropic", "model": "claude-fake", "usage": _USAGE,
                     "stopReason": "deferred", "deferred": _HANDLE, "timestamp": 2}},
        {"type": "message", "id": "u2", "parentId": "a1", "timestamp": "2026-11-24T17:00:02.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "second"}], "timestamp": 3}},
    ]  # fmt: skip
    encoded = [json.dumps(line, separators=(",", ":")) for line in lines]
    path.write_text("\n".join(encoded) + "\n", encoding="utf-8")
    return encoded


def test_a_deferred_message_is_modelled_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "deferred.jsonl"
    _session(path)
    with SessionManager.open(path, read_only=True) as manager:
        entries = manager.get_entries()
        assert not [e for e in entries if isinstance(e, RawEntry)]
        (deferred,) = [e for e in entries if isinstance(e, MessageEntry) and e.id == "a1"]
    message = deferred.message
    assert isinstance(message, AssistantMessage) and message.stop_reason == "deferred"
    assert message.to_json_dict()["deferred"] == _HANDLE  # the handle survives


async def test_a_deferred_message_never_reaches_the_model(
    tmp_path: Path,
    project: Path,  # noqa: F811
    fake: FakeLLM,  # noqa: F811
) -> None:
    path = tmp_path / "deferred.jsonl"
    _session(path)
    rehome_session(path, project)  # the session runs in the directory it records
    before = path.read_text(encoding="utf-8").splitlines()
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(path), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("third")
    assert fake.violations == []
    (request,) = fake.requests
    assert [m["role"] for m in request.messages] == ["user", "user", "user"]  # as pi sends them
    assert path.read_text(encoding="utf-8").split("\n")[: len(before)] == before
