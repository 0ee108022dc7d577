"""Sessions written by pi 0.87.1 (tests/fixtures/pi087, recorded against the fake server): they load,
answer validly through pi-tui and take new entries, and pi's persisted prompt is what gets sent."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pi_tui.args import parse_args
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from pi_tui.session.entries import SystemMessageEntry
from pi_tui.testing import FakeLLM, Reply, text

from ..e2e.helpers import write_models_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi087"
ANTHROPIC = "fake-anthropic/claude-fake"
OPENAI = "fake-openai/gpt-fake"


@pytest.fixture
def fake(agent_dir: Path) -> Iterator[FakeLLM]:
    llm = FakeLLM()
    with llm.serve() as server:
        write_models_json(agent_dir, server)
        yield llm


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


@asynccontextmanager
async def open_session(argv: list[str], cwd: Path) -> AsyncIterator[AgentSession]:
    startup = create_session(parse_args(argv), cwd)
    try:
        yield startup.session
    finally:
        await startup.session.close()


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copyfile(FIXTURES / name, target)
    return target


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_pi_system_message_loads_as_its_own_entry_and_round_trips() -> None:
    path = FIXTURES / "plain.jsonl"
    with SessionManager.open(path, read_only=True) as manager:
        entries = manager.get_entries()
        systems = [e for e in entries if isinstance(e, SystemMessageEntry)]
        assert len(systems) == 1
        assert systems[0].system.sections is not None
        assert list(systems[0].system.sections)[0] == "preamble"
        assert [t["name"] for t in systems[0].system.tools_added or []] == ["read", "bash", "edit", "write"]
        assert not manager.load_report.has_problems
        roles = [getattr(m, "role", None) for m in manager.build_context().messages]
    assert "system" not in roles
    assert roles[0] == "user"


@pytest.mark.parametrize("model", [ANTHROPIC, OPENAI])
async def test_pi087_session_resumes_answers_validly_and_appends(
    model: str, tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    session = _copy("plain.jsonl", tmp_path)
    before = _lines(session)
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", model], project) as agent:
        await agent.prompt("one more")
    assert fake.violations == []
    (request,) = fake.requests
    assert request.last_user_text().endswith("one more")
    after = _lines(session)
    assert after[: len(before)] == before  # nothing rewritten
    appended = [json.loads(line) for line in after[len(before) :]]
    assert [e["message"]["role"] for e in appended if e["type"] == "message"] == ["user", "assistant"]


async def test_resumed_pi_session_sends_the_prompt_and_tools_pi_persisted(
    tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    session = _copy("plain.jsonl", tmp_path)
    raw = [json.loads(line) for line in _lines(session)]
    system: dict[str, Any] = next(
        e["message"] for e in raw if e["type"] == "message" and e["message"]["role"] == "system"
    )
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("one more")
    (request,) = fake.requests
    sent_system = "".join(block["text"] for block in request.body["system"])
    assert sent_system == "\n\n".join(system["sections"].values())
    sent_tools = [(t["name"], t["input_schema"]) for t in request.body["tools"]]
    assert sent_tools == [(t["name"], t["parameters"]) for t in system["toolsAdded"]]
