from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import AssistantMessage, ToolResultMessage, UserMessage, message_text
from pi_tui.session import EntryNotFoundError, SessionManager, default_session_dir, list_sessions
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text
from tests.shared_fixtures import PI_SESSIONS

from .helpers import open_session, rehome_session, run_cli

FIXTURES = PI_SESSIONS
OPENAI = "fake-openai/gpt-fake"
ANTHROPIC = "fake-anthropic/claude-fake"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _by_role(request: RecordedRequest, role: str) -> list[dict[str, Any]]:
    return [m for m in request.messages if m.get("role") == role]


def _message_entries(path: Path) -> list[dict[str, Any]]:
    """The conversation's message entries (the recorded prompt, a system message, left out)."""
    return [e for e in _lines(path)[1:] if e["type"] == "message" and e["message"]["role"] != "system"]


def _copy_fixture(name: str, tmp_path: Path, project: Path) -> Path:
    """The fixture ``name`` copied into ``tmp_path``, recording ``project`` as its working directory."""
    target = tmp_path / name
    shutil.copyfile(FIXTURES / name, target)
    rehome_session(target, project.resolve())
    return target


# --- real pi sessions ----------------------------------------------------------------------------


def _expected_from(path: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """(user-side messages, replayable assistants, all messages) of the file's active path."""
    with SessionManager.open(path, read_only=True) as manager:
        messages = manager.build_context().messages
    users = [m for m in messages if not isinstance(m, AssistantMessage | ToolResultMessage)]
    assistants = [
        m for m in messages if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted")
    ]
    return users, assistants, messages


@pytest.mark.slow
@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_real_pi_session_resumes_with_its_whole_active_path(
    name: str, tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    session = _copy_fixture(name, tmp_path, project)
    copied = session.read_bytes()
    users, assistants, messages = _expected_from(session)
    fake.script([Reply([text("ok")])])

    run = run_cli(["--session", str(session), "--model", OPENAI, "-p", "one more"], project)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "ok\n"
    assert "Traceback" not in run.stderr
    assert fake.violations == []
    (request,) = fake.requests
    sent_users = _by_role(request, "user")
    assert len(sent_users) == len(users) + 1
    assert len(_by_role(request, "assistant")) == len(assistants)
    assert message_text(users[0]) in _text(sent_users[0]["content"])
    assert message_text(users[-1]) in _text(sent_users[-2]["content"])
    assert _text(sent_users[-1]["content"]) == "one more"
    answered = {c.id for m in assistants for c in m.tool_calls()}
    replayed_results = [
        m for m in messages if isinstance(m, ToolResultMessage) and m.tool_call_id in answered
    ]
    assert len(request.tool_results()) >= len(replayed_results)
    # migrated on the first append: the original is kept byte for byte, the file is now v3 plus the turn
    assert (tmp_path / f"{name}.v1.bak").read_bytes() == copied
    header, *entries = _lines(session)
    assert header["version"] == 3
    # a session from before pi 0.86 gets its first recorded prompt at its next request, as pi does
    assert [e["message"]["role"] for e in entries[-3:]] == ["system", "user", "assistant"]
    original = [e for e in _lines(FIXTURES / name)[1:] if e["type"] == "message"]
    assert len([e for e in entries if e["type"] == "message"]) == len(original) + 3


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
async def test_real_pi_session_replays_to_anthropic_without_violations(
    name: str, tmp_path: Path, project: Path, fake: FakeLLM
) -> None:
    # Foreign thinking (signed by the real Anthropic API) is replayed as plain text, so the fake accepts it.
    session = _copy_fixture(name, tmp_path, project)
    users, _, _ = _expected_from(session)
    fake.script([Reply([text("ok")])])
    async with open_session(["--session", str(session), "--model", ANTHROPIC], project) as agent:
        await agent.prompt("one more")
    assert fake.violations == []
    (request,) = fake.requests
    # Neighbouring messages of one role are sent apart, as pi sends them (the API joins them into one
    # turn); only consecutive tool results share a message. Compare the ends, not the counts.
    assert all(
        not (a["role"] == b["role"] == "user" and _only_tool_results(a) and _only_tool_results(b))
        for a, b in zip(request.messages, request.messages[1:], strict=False)
    )
    assert message_text(users[0]) in _text(request.messages[0]["content"])
    user_turns = [_text(m["content"]) for m in _by_role(request, "user")]
    assert any(message_text(users[-1]) in turn for turn in user_turns)
    assert request.last_user_text().endswith("one more")


def _only_tool_results(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and all(b.get("type") == "tool_result" for b in content)


# --- round trip ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_session_written_by_pi_tui_round_trips_with_continue(project: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("The capital is Paris.")]), Reply([text("About 2.1 million.")])])

    first = run_cli(["--model", OPENAI, "-p", "What is the capital of France?"], project)
    second = run_cli(["-c", "--model", OPENAI, "-p", "How many people live there?"], project)

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert second.stdout == "About 2.1 million.\n"
    assert fake.violations == []
    sent = [(m["role"], _text(m["content"])) for m in fake.requests[1].messages if m["role"] != "system"]
    assert sent == [
        ("user", "What is the capital of France?"),
        ("assistant", "The capital is Paris."),
        ("user", "How many people live there?"),
    ]
    (path,) = default_session_dir(project).glob("*.jsonl")
    texts = [message_text_of(e) for e in _message_entries(path)]
    assert texts == [t for _, t in sent] + ["About 2.1 million."]


def message_text_of(entry: dict[str, Any]) -> str:
    return _text(entry["message"]["content"])


# --- tree ----------------------------------------------------------------------------------------


def _entry_id(manager: SessionManager, role: str, wanted: str) -> str:
    for entry in manager.get_entries():
        message = getattr(entry, "message", None)
        if getattr(message, "role", None) == role and message_text(message) == wanted:
            return entry.id  # type: ignore[return-value]
    raise AssertionError(f"no {role} entry {wanted!r}")


async def test_navigating_back_and_prompting_keeps_both_branches_and_sends_only_the_active_one(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")]), Reply([text("C1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("first question")
        await agent.prompt("second question")
        manager = agent.session_manager
        second = _entry_id(manager, "user", "second question")
        a1 = _entry_id(manager, "assistant", "A1")

        editor_text = await agent.navigate(second)

        assert editor_text == "second question"
        assert manager.get_leaf_id() == a1
        assert [message_text(m) for m in agent.messages] == ["first question", "A1"]
        await agent.prompt("second question, rephrased")
        path = manager.path

    assert fake.violations == []
    sent = [(m["role"], _text(m["content"])) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == [
        ("user", "first question"),
        ("assistant", "A1"),
        ("user", "second question, rephrased"),
    ]
    entries = _lines(path)[1:]
    children_of_a1 = [message_text_of(e) for e in entries if e.get("parentId") == a1]
    assert children_of_a1 == ["second question", "second question, rephrased"]
    assert "B1" in [message_text_of(e) for e in entries if e["type"] == "message"]
    with SessionManager.open(path, read_only=True) as reopened:
        assert [message_text(m) for m in reopened.build_context().messages] == [
            "first question",
            "A1",
            "second question, rephrased",
            "C1",
        ]


async def test_navigating_to_an_assistant_entry_makes_it_the_leaf_and_leaves_the_editor_alone(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("one")
        await agent.prompt("two")
        a1 = _entry_id(agent.session_manager, "assistant", "A1")
        assert await agent.navigate(a1) is None
        assert agent.session_manager.get_leaf_id() == a1
        assert [message_text(m) for m in agent.messages] == ["one", "A1"]
        with pytest.raises(EntryNotFoundError):
            await agent.navigate("ffffffff")


async def test_navigating_to_the_first_user_message_empties_the_context(project: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("A1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("only question")
        first = _entry_id(agent.session_manager, "user", "only question")
        assert await agent.navigate(first) == "only question"
        assert agent.messages == []


async def test_navigating_with_a_summary_records_it_and_sends_it_as_a_user_message(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")]), Reply([text("C1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("one")
        await agent.prompt("two")
        a1 = _entry_id(agent.session_manager, "assistant", "A1")
        await agent.navigate(a1, summary="We tried two and it went nowhere.")
        await agent.prompt("three")
        path = agent.session_manager.path

    summaries = [e for e in _lines(path)[1:] if e["type"] == "branch_summary"]
    assert [(e["parentId"], e["summary"]) for e in summaries] == [(a1, "We tried two and it went nowhere.")]
    sent = [_text(m["content"]) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent[:2] == ["one", "A1"] and sent[-1] == "three"
    assert "We tried two and it went nowhere." in sent[2] and "two" not in sent


async def test_label_and_name_are_written_and_shown_by_the_listing(project: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("A1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("label me")
        target = _entry_id(agent.session_manager, "user", "label me")
        agent.label(target, "checkpoint")
        agent.set_session_name("Refactor notes")
        with pytest.raises(EntryNotFoundError):
            agent.label("ffffffff", "nope")
        path = agent.session_manager.path

    labels = [e for e in _lines(path)[1:] if e["type"] == "label"]
    assert [(e["targetId"], e["label"]) for e in labels] == [(target, "checkpoint")]
    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.get_label(target) == "checkpoint"
    (info,) = list_sessions(project)
    assert info.name == "Refactor notes"


# --- fork, new, switch ---------------------------------------------------------------------------


@pytest.mark.slow
def test_fork_flag_writes_a_linked_file_and_leaves_the_original_untouched(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("Forked answer.")])])
    original = _write_session(project, [("original question", "Original answer.")], 1_700_000_000_000)
    before = original.read_bytes()

    run = run_cli(["--fork", str(original), "--model", OPENAI, "-p", "fork question"], project)

    assert run.returncode == 0, run.stderr
    assert original.read_bytes() == before
    (forked,) = [p for p in default_session_dir(project).glob("*.jsonl") if p != original]
    header = _lines(forked)[0]
    assert header["parentSession"] == str(original)
    assert header["id"] != _lines(original)[0]["id"]
    assert [message_text_of(e) for e in _message_entries(forked)] == [
        "original question",
        "Original answer.",
        "fork question",
        "Forked answer.",
    ]
    assert fake.requests[-1].last_user_text() == "fork question"
    assert fake.violations == []


async def test_fork_at_a_user_message_continues_in_a_new_file_without_it(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")]), Reply([text("C1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("one")
        await agent.prompt("two")
        original = agent.session_manager.path
        before = original.read_bytes()
        two = _entry_id(agent.session_manager, "user", "two")

        editor_text = await agent.fork(two)

        assert editor_text == "two"
        assert agent.session_manager.path != original
        assert agent.session_manager.parent_session == str(original)
        assert [message_text(m) for m in agent.messages] == ["one", "A1"]
        await agent.prompt("two, again")
        forked = agent.session_manager.path

    assert original.read_bytes() == before
    assert [message_text_of(e) for e in _message_entries(forked)] == ["one", "A1", "two, again", "C1"]
    assert _lines(forked)[0]["parentSession"] == str(original)
    sent = [_text(m["content"]) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == ["one", "A1", "two, again"]


async def test_fork_at_an_assistant_entry_keeps_it_and_leaves_the_editor_alone(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("one")
        await agent.prompt("two")
        original = agent.session_manager.path
        a1 = _entry_id(agent.session_manager, "assistant", "A1")
        assert await agent.fork(a1) is None
        forked = agent.session_manager.path
        assert [message_text(m) for m in agent.messages] == ["one", "A1"]

    assert forked != original
    assert [message_text_of(e) for e in _message_entries(forked)] == ["one", "A1"]
    assert _lines(forked)[0]["parentSession"] == str(original)


async def test_new_session_starts_empty_and_releases_the_old_file(project: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("A1")]), Reply([text("B1")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("old conversation")
        old = agent.session_manager.path
        before = old.read_bytes()
        await agent.new_session()
        assert agent.messages == []
        await agent.prompt("new conversation")
        new = agent.session_manager.path
        with SessionManager.open(old) as reopened:  # the lock was released
            assert reopened.get_leaf_id() is not None

    assert new != old and old.read_bytes() == before
    assert [message_text_of(e) for e in _message_entries(new)] == ["new conversation", "B1"]
    assert fake.requests[-1].last_user_text() == "new conversation"
    assert len(_by_role(fake.requests[-1], "user")) == 1


async def test_switch_session_rebuilds_the_agent_from_the_other_file(project: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("About cats.")]), Reply([text("About dogs.")]), Reply([text("Still cats.")])])
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("cats?")
        cats = agent.session_manager.path
    async with open_session(["--model", OPENAI], project) as agent:
        await agent.prompt("dogs?")
        await agent.switch_session(SessionManager.open(cats, cwd=project))
        assert [message_text(m) for m in agent.messages] == ["cats?", "About cats."]
        await agent.prompt("more cats?")

    sent = [_text(m["content"]) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == ["cats?", "About cats.", "more cats?"]
    assert [message_text_of(e) for e in _message_entries(cats)][-2:] == ["more cats?", "Still cats."]


# --- damaged files -------------------------------------------------------------------------------


@pytest.mark.slow
def test_torn_last_line_and_corrupt_middle_line_are_reported_and_nothing_is_lost(
    project: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("C1")])])
    path = _write_session(project, [("first", "A1"), ("second", "B1")], 1_700_000_000_000)
    lines = path.read_bytes().splitlines(keepends=True)
    roles = [json.loads(line).get("message", {}).get("role") for line in lines]
    corrupt_no = roles.index("assistant") + 1  # 1-based: the first answer, "A1"
    corrupt = b'{"type":"message","id":"0badf00d",' + b"\x00not json\n"
    lines[corrupt_no - 1] = corrupt
    torn = b'{"type":"message","id":"deadbeef","parentId":"x","message":{"role":"us'
    path.write_bytes(b"".join(lines) + torn)
    torn_no = len(lines) + 1

    run = run_cli(["--session", str(path), "--model", OPENAI, "-p", "third"], project)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "C1\n"
    warnings = [line for line in run.stderr.splitlines() if line]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Warning: Session {path.name}: skipped 2 unreadable lines")
    assert f"line {corrupt_no}: invalid JSON" in warnings[0]
    assert f"line {torn_no}: incomplete last line" in warnings[0]
    assert fake.violations == []
    sent = [_text(m["content"]) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == ["first", "second", "B1", "third"]

    after = path.read_bytes().splitlines(keepends=True)
    # every earlier byte kept, the corrupt line included, and the torn one ended with a newline in place
    assert after[: len(lines) + 1] == [*lines, torn + b"\n"]
    assert not list(path.parent.glob("*.bak"))
    for number, line in enumerate(after, 1):
        if number not in (corrupt_no, torn_no):
            json.loads(line)
    new = [json.loads(line) for line in after[len(lines) + 1 :]]
    # (written without a recorded prompt: it gets its first one before the prompt, as pi does)
    assert [e["message"]["role"] for e in new if e["type"] == "message"] == ["system", "user", "assistant"]
    assert [message_text_of(e) for e in new if e["type"] == "message"][1:] == ["third", "C1"]

    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.load_report.skipped_line_numbers == [corrupt_no, torn_no]
        texts = [message_text(m) for m in reopened.build_context().messages]
    assert texts == ["first", "second", "B1", "third", "C1"]


# --- the command line ----------------------------------------------------------------------------


def _write_session(
    project: Path,
    exchanges: list[tuple[str, str]],
    when_ms: int,
    *,
    name: str | None = None,
    session_id: str | None = None,
) -> Path:
    manager = SessionManager.create(project, session_id=session_id)
    for n, (prompt, answer) in enumerate(exchanges):
        at = when_ms + n * 10_000
        manager.append_message(UserMessage(content=prompt, timestamp=at))
        manager.append_message(
            AssistantMessage(
                content=[{"type": "text", "text": answer}],
                api="openai-completions",
                provider="fake-openai",
                model="gpt-fake",
                stop_reason="stop",
                timestamp=at + 1000,
            )
        )
    if name:
        manager.append_session_info(name)
    manager.close()
    assert manager.path is not None
    return manager.path


@pytest.mark.slow
def test_resume_lists_this_directorys_sessions_newest_first(project: Path) -> None:
    empty = run_cli(["-r"], project)
    assert empty.returncode == 0
    assert empty.stdout.strip() == f"No sessions in {default_session_dir(project)}"

    old = _write_session(project, [("an older question", "old answer")], 1_700_000_000_000)
    new = _write_session(project, [("a newer question", "new answer")], 1_700_000_900_000, name="Named one")
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    _write_session(elsewhere, [("not this project", "x")], 1_700_001_000_000)

    run = run_cli(["-r"], project)

    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.endswith(".jsonl")]
    assert len(rows) == 2
    assert rows[0].startswith(_lines(new)[0]["id"][:8]) and rows[0].endswith(str(new))
    assert "Named one" in rows[0] and "2 msgs" in rows[0]
    assert rows[1].startswith(_lines(old)[0]["id"][:8]) and "an older question" in rows[1]


@pytest.mark.slow
def test_export_accepts_an_id_prefix_or_a_path(project: Path) -> None:
    path = _write_session(project, [("export this <b>please</b>", "done")], 1_700_000_000_000)
    prefix = _lines(path)[0]["id"][:8]

    by_id = run_cli(["--export", prefix], project)
    by_path = run_cli(["--export", str(path), str(project / "out.html")], project)

    assert by_id.returncode == 0 and by_path.returncode == 0, by_id.stderr + by_path.stderr
    default_out = project / f"pi-session-{path.stem}.html"
    assert by_id.stdout.strip() == f"Exported to: {default_out}"  # pi 0.87.1's line
    assert by_path.stdout.strip() == f"Exported to: {project / 'out.html'}"
    page = (project / "out.html").read_text()
    assert "export this &lt;b&gt;please&lt;/b&gt;" in page
    missing = run_cli(["--export", "ffffffff"], project)
    assert missing.returncode == 1 and len(missing.stderr.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--session", "--fork"])
def test_unknown_or_ambiguous_session_id_is_one_line_and_exit_1(
    flag: str, project: Path, fake: FakeLLM
) -> None:
    unknown = run_cli([flag, "0123abcd", "--model", OPENAI, "-p", "hi"], project)
    _write_session(
        project, [("q1", "a1")], 1_700_000_000_000, session_id="abcd1111-0000-4000-8000-000000000001"
    )
    _write_session(
        project, [("q2", "a2")], 1_700_000_100_000, session_id="abcd2222-0000-4000-8000-000000000002"
    )
    ambiguous = run_cli([flag, "abcd", "--model", OPENAI, "-p", "hi"], project)

    for run in (unknown, ambiguous):
        assert run.returncode == 1
        assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert "0123abcd" in unknown.stderr
    assert "matches 2 sessions" in ambiguous.stderr
    assert fake.requests == []


@pytest.mark.slow
def test_second_writer_on_the_same_session_is_refused(project: Path, fake: FakeLLM) -> None:
    path = _write_session(project, [("q", "a")], 1_700_000_000_000)
    with SessionManager.open(path, cwd=project):
        run = run_cli(["--session", str(path), "--model", OPENAI, "-p", "hi"], project)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "already open" in run.stderr
    assert fake.requests == []


@pytest.mark.slow
def test_session_path_that_can_never_be_written_fails_before_the_request(
    project: Path, tmp_path: Path, fake: FakeLLM
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = run_cli(["--session", str(blocker / "s.jsonl"), "--model", OPENAI, "-p", "hi"], project)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Cannot create session file" in run.stderr
    assert fake.requests == []


@pytest.mark.slow
def test_resume_list_shows_ids_that_open_the_session_they_name(project: Path) -> None:
    # session ids are time-ordered: two started in the same minute share their first 8 characters
    first = _write_session(
        project, [("first", "a")], 1_700_000_000_000, session_id="01a21a66-fd0a-7c66-b90c-e3edc83859fd"
    )
    second = _write_session(
        project, [("second", "b")], 1_700_000_100_000, session_id="01a21a66-fe91-7d3a-a314-1eb6ec1b2be8"
    )
    run = run_cli(["-r"], project)
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.endswith(".jsonl")}
    assert sorted(rows) == ["01a21a66-fd", "01a21a66-fe"]
    assert rows["01a21a66-fd"].endswith(str(first)) and rows["01a21a66-fe"].endswith(str(second))
    shown = run_cli(["--provider", "faux", "--session", "01a21a66-fd", "-p", "/session"], project)
    assert shown.returncode == 0, shown.stderr
    assert str(first) in shown.stdout


@pytest.mark.slow
def test_a_file_with_no_session_in_it_is_refused_and_left_alone(project: Path) -> None:
    notes = project / "notes.jsonl"
    notes.write_text("these are my notes, not a session\n")
    run = run_cli(["--provider", "faux", "--session", str(notes), "-p", "hi"], project)
    assert run.returncode == 1
    assert run.stderr.strip().endswith(
        f"Session file is not a valid pi session: {notes} (no line of it is a session header or entry; "
        "the file was left as it is)"
    )
    assert notes.read_text() == "these are my notes, not a session\n"
    assert sorted(p.name for p in project.iterdir()) == ["notes.jsonl"]  # no backup, no lock left

    rpc_in = json.dumps({"id": "w", "type": "switch_session", "sessionPath": str(notes)}) + "\n"
    rpc = run_cli(["--provider", "faux", "--mode", "rpc"], project, stdin=rpc_in)
    [answer] = [json.loads(line) for line in rpc.stdout.splitlines()]
    assert answer["success"] is False and "is not a valid pi session" in answer["error"]
    assert notes.read_text() == "these are my notes, not a session\n"
