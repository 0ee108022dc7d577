"""Sessions written by pi 0.87.1 (tests/fixtures/pi087, recorded against the fake server): they load,
answer validly through pi-tui and take new entries, and pi's persisted prompt is what gets sent."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session import SessionManager
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    MessageEntry,
    RawEntry,
    SystemMessageEntry,
)
from pi_tui.testing import FakeLLM, Reply, text, turns_from_json

from ..e2e.helpers import open_session, rehome_session, write_models_json
from ..pi087 import Pi087

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi087"
ANTHROPIC = "fake-anthropic/claude-fake"
OPENAI = "fake-openai/gpt-fake"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


def _copy(name: str, tmp_path: Path) -> Path:
    """The fixture ``name`` copied into ``tmp_path``, recording the ``project`` folder as its directory."""
    target = tmp_path / name
    shutil.copyfile(FIXTURES / name, target)
    project = (tmp_path / "project").resolve()
    project.mkdir(exist_ok=True)
    rehome_session(target, project)
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


def _post_anthropic(base_url: str, body: dict[str, Any]) -> None:
    """Send a recorded pi request to the fake as pi did (same key), warming its prompt cache."""
    request = urllib.request.Request(
        base_url + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={
            "x-api-key": "test-key",
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
        },
    )
    with urllib.request.urlopen(request) as response:
        response.read()


def _normalised(messages: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """Messages as (role, blocks) with cache markers dropped, tool results as text and neighbouring
    turns of one role merged (the model sees one turn either way)."""
    out: list[tuple[str, list[Any]]] = []
    for message in messages:
        blocks: list[Any] = []
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            block = {k: v for k, v in block.items() if k not in ("cache_control", "is_error")}
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                block["content"] = "\n".join(b.get("text", "") for b in block["content"])
            blocks.append(block)
        if out and out[-1][0] == message["role"]:
            out[-1][1].extend(blocks)
        else:
            out.append((message["role"], blocks))
    return out


async def test_resumed_pi_session_reads_pis_prompt_cache(
    tmp_path: Path, project: Path, agent_dir: Path
) -> None:
    last = json.loads((FIXTURES / "plain.last-request.json").read_text())
    session = _copy("plain.jsonl", tmp_path)
    fake = FakeLLM()
    fake.script([Reply([text("warm")]), Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        _post_anthropic(server.anthropic_base_url, last)  # pi's own last request, replayed
        async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
            await agent.prompt("one more")
    assert fake.violations == []
    ours = fake.requests[1].cache
    assert ours.cache_read / ours.total >= 0.9, ours


@pytest.mark.parametrize("name", ["plain", "rich", "retain-none"])
async def test_resumed_pi_session_with_summaries_reads_pis_prompt_cache(
    name: str, tmp_path: Path, project: Path, agent_dir: Path
) -> None:
    """pi sends a branch summary and the next prompt as two user messages (and never merges turns):
    pi-tui must send the same wire shape, or the cached prefix breaks at the summary."""
    last = json.loads((FIXTURES / f"{name}.last-request.json").read_text())
    session = _copy(f"{name}.jsonl", tmp_path)
    fake = FakeLLM()
    fake.script([Reply([text("warm")]), Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        _post_anthropic(server.anthropic_base_url, last)
        async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
            await agent.prompt("one more")
    assert fake.violations == []
    ours = fake.requests[1].cache
    assert ours.cache_read / ours.total >= 0.9, ours
    sent = [{k: v for k, v in m.items()} for m in fake.requests[1].messages[: len(last["messages"])]]
    assert [m["role"] for m in sent] == [m["role"] for m in last["messages"]]


def _post_openai(base_url: str, body: dict[str, Any]) -> None:
    """Send a recorded pi Chat Completions request to the fake as pi did, warming its prefix cache."""
    request = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"authorization": "Bearer test-key", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        response.read()


async def test_resumed_pi_openai_completions_session_reads_pis_prompt_cache(
    tmp_path: Path, project: Path, agent_dir: Path
) -> None:
    """pi sends no prompt_cache_key to a non-OpenAI host and writes tool arguments compactly: pi-tui's
    request must start with pi's bytes, or the prefix cache of the session's own history misses."""
    last = json.loads((FIXTURES / "openai.last-request.json").read_text())
    session = _copy("openai.jsonl", tmp_path)
    fake = FakeLLM()
    fake.script([Reply([text("warm")]), Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        _post_openai(server.openai_base_url, last)
        async with open_session(["--session", str(session), "--model", OPENAI], project) as agent:
            await agent.prompt("one more")
    assert fake.violations == []
    pi_prompt, ours = fake.requests[0].cache, fake.requests[1].cache
    assert ours.cache_read >= pi_prompt.total // 128 * 128 - 128, (ours, pi_prompt)
    assert ours.cache_read / ours.total >= 0.9, ours
    assert "prompt_cache_key" not in fake.requests[1].body
    sent = fake.requests[1].messages[: len(last["messages"])]
    # pi's bytes, message for message (key order included: JSON text is what the cache sees)
    assert [json.dumps(m) for m in sent] == [json.dumps(m) for m in last["messages"]]


async def test_compaction_branch_summary_and_context_edit_reach_the_model_as_pi_sent_them(
    tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    pi_sent = json.loads((FIXTURES / "rich.last-request.json").read_text())
    session = _copy("rich.jsonl", tmp_path)
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("one more")
    assert fake.violations == []
    (request,) = fake.requests
    # pi's last request ended at "Anything else?"; ours adds pi's answer and the new prompt.
    assert _normalised(request.messages[:-2]) == _normalised(pi_sent["messages"])
    assert "[output elided by record_ext]" in json.dumps(request.messages)
    assert "hi from bash\\n" not in json.dumps(request.messages)
    assert request.body["system"][0]["text"] == pi_sent["system"][0]["text"]
    assert [t["name"] for t in request.body["tools"]] == [t["name"] for t in pi_sent["tools"]]


def test_rich_session_entries_are_read_as_current_pi_means_them() -> None:
    with SessionManager.open(FIXTURES / "rich.jsonl", read_only=True) as manager:
        entries = manager.get_entries()
        assert not manager.load_report.has_problems
        assert not [e for e in entries if isinstance(e, RawEntry)]
        compaction = next(e for e in entries if isinstance(e, CompactionEntry))
        assert compaction.system_message is not None and compaction.usage is not None
        summary = next(e for e in entries if isinstance(e, BranchSummaryEntry))
        left = next(e for e in entries if e.id == summary.from_id)
        assert isinstance(left, MessageEntry) and left.message.role == "assistant"  # the old leaf
        edit = next(e for e in entries if isinstance(e, ContextEditEntry))
        context = manager.build_context()
    assert context.context_edits == {edit.target_id: edit.replacement}
    assert context.system.sections == compaction.system_message["sections"]
    edited = [m for m in context.messages if getattr(m, "role", None) == "toolResult"]
    assert [m.content[0].text for m in edited] == ["[output elided by record_ext]"]


@pytest.mark.parametrize("seed", range(12))
async def test_session_with_foreign_lines_still_answers_validly_and_appends(
    seed: int, tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    from ..session.test_foreign_lines_fuzz import _fuzzed_lines

    session = tmp_path / "fuzzed.jsonl"
    lines = _fuzzed_lines(_copy("rich.jsonl", tmp_path), seed)
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("one more")
    assert fake.violations == []
    after = session.read_text(encoding="utf-8").split("\n")[:-1]
    assert after[: len(lines)] == lines
    assert json.loads(after[-1])["message"]["role"] == "assistant"


@pytest.mark.slow
async def test_pi_tui_session_opens_in_pi_0_87_1_and_comes_back(
    tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    script = turns_from_json(json.loads((FIXTURES / "plain.script.json").read_text()))
    fake = FakeLLM()
    fake.script([*script, Reply([text("pi answers")]), Reply([text("pi-tui answers")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        async with open_session(["--model", ANTHROPIC], project) as agent:
            await agent.prompt("Change world to there in hello.txt and show it")
            path = agent.session_manager.path
        assert path is not None
        ours = _lines(path)
        run = subprocess.run(
            pi087.argv("--session", str(path), "--model", ANTHROPIC, "-p", "one more"),
            cwd=project,
            env=pi087.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "pi answers"
        pi_request = fake.requests[-1]
        assert [m["role"] for m in pi_request.messages][:8] == ["user", "assistant"] * 4  # the whole history
        after_pi = _lines(path)
        assert after_pi[: len(ours)] == ours  # pi kept every line of ours
        # pi-tui recorded its prompt as pi would; pi patched it into its own, section by section
        ours_system = [_system(line) for line in ours if _system(line) is not None]
        assert len(ours_system) == 1 and ours_system[0]["sections"]["environment"]
        (pi_patch,) = [_system(line) for line in after_pi[len(ours) :] if _system(line) is not None]
        assert pi_patch["sections"]["environment"] is None and "cwd" in pi_patch["sections"]
        # pi persisted its prompt into our file; continuing in pi-tui sends that prompt and reads pi's cache
        async with open_session(["--session", str(path), "--model", ANTHROPIC], project) as agent:
            await agent.prompt("and again")
    assert fake.violations == []
    last = fake.requests[-1]
    assert last.cache.cache_read / last.cache.total >= 0.9, last.cache
    assert _lines(path)[: len(after_pi)] == after_pi
    assert not [line for line in _lines(path)[len(after_pi) :] if _system(line) is not None]  # pi's is kept


def _system(line: str) -> dict[str, Any] | None:
    """The system message of a session line, if it holds one."""
    entry = json.loads(line)
    message = entry.get("message") if entry.get("type") == "message" else None
    return message if isinstance(message, dict) and message.get("role") == "system" else None


async def test_session_totals_include_summary_calls_as_pi_counts_them(
    tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    session = _copy("rich.jsonl", tmp_path)
    raw = [json.loads(line) for line in _lines(session)[1:]]
    usages = [
        e["message"]["usage"] for e in raw if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    usages += [e["usage"] for e in raw if e["type"] in ("compaction", "branch_summary")]
    assert len(usages) == 6 + 2  # six answers, the compaction and the branch summary
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        stats = agent.stats()
    assert stats.output == sum(u["output"] for u in usages)
    assert stats.cache_write == sum(u["cacheWrite"] for u in usages)
    assert stats.cost == pytest.approx(sum(u["cost"]["total"] for u in usages))


def test_tree_rows_name_pi_0_87_entries_as_pi_does() -> None:
    from pi_tui.session.export_html import tree_row_text

    with SessionManager.open(FIXTURES / "rich.jsonl", read_only=True) as manager:
        rows = [tree_row_text(e) for e in manager.get_entries()]
    assert "[system]" in rows
    assert "[context replace: d38f11ab]" in rows


async def test_pi_tui_compacts_a_pi_0_87_session_and_keeps_pi_s_prompt(
    tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    session = _copy("rich.jsonl", tmp_path)
    before = _lines(session)
    fake.script([Reply([text("## Goal\nSummary by pi-tui.")]), Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.compact()
        await agent.prompt("after compaction")
    assert fake.violations == []
    summary_request, request = fake.requests
    summarised = json.dumps(summary_request.messages)
    assert "[output elided by record_ext]" in summarised  # the summary sees the context-edited history
    assert "hi from bash\\n" not in summarised
    assert "Summary by pi-tui." in json.dumps(request.messages)
    pi_sent = json.loads((FIXTURES / "rich.last-request.json").read_text())
    assert request.body["system"][0]["text"] == pi_sent["system"][0]["text"]  # still pi's prompt
    after = _lines(session)
    assert after[: len(before)] == before


async def test_retain_none_compaction_recorded_by_pi_reaches_the_model_as_pi_sent_it(
    tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    pi_sent = json.loads((FIXTURES / "retain-none.last-request.json").read_text())
    session = _copy("retain-none.jsonl", tmp_path)
    with SessionManager.open(session, read_only=True) as manager:
        compaction = next(e for e in manager.get_entries() if isinstance(e, CompactionEntry))
        assert compaction.first_kept_entry_id == compaction.id
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("one more")
    assert fake.violations == []
    (request,) = fake.requests
    assert _normalised(request.messages[:-2]) == _normalised(pi_sent["messages"])
    assert "Read hello.txt" not in json.dumps(request.messages)
    assert request.body["system"][0]["text"] == pi_sent["system"][0]["text"]
