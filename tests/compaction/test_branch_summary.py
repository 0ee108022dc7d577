from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import UserMessage
from pi_tui.compaction import (
    CompactionCancelled,
    CompactionResult,
    append_compaction,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
)
from pi_tui.compaction.prompts import BRANCH_SUMMARY_PREAMBLE
from pi_tui.context import request as request_module
from pi_tui.testing import Fault, Reply, text
from tests.runtime.helpers import open_session

from .helpers import (
    ANTHROPIC,
    Reader,
    answer,
    call,
    first_user_text,
    result,
    session_with,
    user,
    write_data_files,
)


def test_entries_are_collected_from_the_old_leaf_back_to_the_common_ancestor() -> None:
    session = session_with(user("u1"), answer("a1"))
    ancestor = session.get_leaf_id()
    session.append_message(user("u2"))
    session.append_message(answer("a2"))
    old_leaf = session.get_leaf_id()
    session.branch(ancestor)
    session.append_message(user("other"))
    target = session.get_leaf_id()

    entries, common = collect_entries_for_branch_summary(session, old_leaf, target)
    assert common == ancestor
    assert [
        e.message.content if isinstance(e.message, UserMessage) else e.message.text() for e in entries
    ] == [
        "u2",
        "a2",
    ]
    assert collect_entries_for_branch_summary(session, None, target) == ([], None)


def test_collecting_a_short_branch_reads_that_branch_not_the_whole_path() -> None:
    session = session_with(*[m for n in range(500) for m in (user(f"q{n}"), answer(f"a{n}"))])
    fork = session.get_leaf_id()
    for n in range(3):
        session.append_message(user(f"left {n}"))
    old_leaf = session.get_leaf_id()
    session.branch(fork)
    session.append_message(user("new way"))
    target = session.get_leaf_id()

    class Counting:
        """The session, counting the entries looked up."""

        def __init__(self) -> None:
            self.looked_up = 0

        def get_entry(self, entry_id: str) -> Any:
            self.looked_up += 1
            return session.get_entry(entry_id)

        def get_branch(self, leaf: str | None = None) -> Any:
            raise AssertionError("the whole path is not needed")

    counting = Counting()
    entries, common = collect_entries_for_branch_summary(counting, old_leaf, target)
    assert common == fork
    assert [e.message.content for e in entries] == ["left 0", "left 1", "left 2"]
    assert counting.looked_up < 20  # the two short branches, not 1,000 entries
    # The same answers as walking the whole paths: the target on the old path, and the old leaf itself.
    middle = session.get_branch(old_leaf)[400].id
    assert collect_entries_for_branch_summary(session, old_leaf, middle)[1] == middle
    assert collect_entries_for_branch_summary(session, old_leaf, old_leaf) == ([], old_leaf)
    assert collect_entries_for_branch_summary(session, target, old_leaf)[0][-1].message.content == "new way"


def test_the_budget_keeps_the_newest_messages_skips_tool_results_and_lets_summaries_in() -> None:
    session = session_with(user("old" * 400), answer("o" * 400))
    append_compaction(session, CompactionResult("c" * 400, session.get_branch()[0].id, 1))
    for message in (
        user("u" * 400),
        call("c1", "edit", {"path": "x.py"}),
        result("c1", "edit", "r" * 40_000),
        answer("a" * 400),
    ):
        session.append_message(message)
    entries = session.get_branch()[2:]  # the compaction and what follows it

    everything = prepare_branch_entries(entries)
    assert [m.role for m in everything.messages] == ["compactionSummary", "user", "assistant", "assistant"]
    assert everything.file_ops.edited == {"x.py"}

    # newest first: the answer (100), the call (5), the user (100) = 205; the summary (100) does not fit
    tight = prepare_branch_entries(entries, token_budget=220)  # 205 is past 90% of 220: no summary
    assert [m.role for m in tight.messages] == ["user", "assistant", "assistant"]
    lenient = prepare_branch_entries(entries, token_budget=250)  # 205 is under 90% of 250: let in
    assert [m.role for m in lenient.messages] == ["compactionSummary", "user", "assistant", "assistant"]


async def test_leaving_a_branch_with_a_summary_writes_it_where_the_conversation_continues(
    serve: Any, agent_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_data_files(project, 1)
    fake = serve(responder=Reader(per_prompt=0))
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("First question")
        target = session.session_manager.get_leaf_id()
        await session.prompt("Explore the idea of a cache")
        built: list[object] = []
        real = request_module.to_llm_request

        def counting(*args: Any, **kwargs: Any) -> Any:
            built.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(request_module, "to_llm_request", counting)
        editor = await session.navigate_with_summary(target, True, "the cache idea")
        leaf = session.session_manager.get_leaf_entry()
        await session.prompt("Back on the main line")

    assert editor is None
    assert built == []  # a branch summary is a standalone request: the session's own is not built
    assert leaf.type == "branch_summary" and leaf.parent_id == target
    assert leaf.summary.startswith(BRANCH_SUMMARY_PREAMBLE)
    [request] = [r for r in fake.requests if r.last_user_text().startswith("<conversation>")]
    assert "[User]: Explore the idea of a cache" in request.last_user_text()
    assert "[User]: First question" not in request.last_user_text()
    assert request.last_user_text().endswith("Additional focus: the cache idea")
    assert request.tool_names == [] and request.body["max_tokens"] == 4096  # pi 0.85+: min(4096, the model's)
    assert "## Goal" in request.last_user_text()
    last = fake.requests[-1]
    assert "The following is a summary of a branch" in str(last.messages)
    assert "Explore the idea of a cache" not in str(last.messages)
    assert first_user_text(last).startswith("First question")


async def test_an_extension_can_supply_or_cancel_the_branch_summary(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    fake = serve(responder=Reader(per_prompt=0))
    async with open_session(["--model", ANTHROPIC], project) as session:
        await session.prompt("First question")
        target = session.session_manager.get_leaf_id()
        await session.prompt("A detour")
        old_leaf = session.session_manager.get_leaf_id()
        requests = len(fake.requests)

        async def cancel(_prep: Any, _signal: Any) -> Any:
            return {"cancel": True}

        session.compaction.before_tree = cancel
        with pytest.raises(CompactionCancelled):
            await session.navigate_with_summary(target, True)
        assert session.session_manager.get_leaf_id() == old_leaf

        seen: list[Any] = []

        async def supply(prep: Any, _signal: Any) -> Any:
            seen.append([e.id for e in prep.entries_to_summarize])
            return {"summary": {"summary": "EXTENSION BRANCH SUMMARY"}}

        async def on_tree(event: dict[str, Any]) -> None:
            seen.append(event)

        session.compaction.before_tree = supply
        session.compaction.on_tree = on_tree
        await session.navigate_with_summary(target, True)
        leaf = session.session_manager.get_leaf_entry()

    assert len(fake.requests) == requests
    assert leaf.summary == "EXTENSION BRANCH SUMMARY"
    assert len(seen[0]) == 2 and seen[0][-1] == old_leaf
    assert seen[1]["oldLeafId"] == old_leaf and seen[1]["fromExtension"] is True
    assert seen[1]["summaryEntry"].id == leaf.id


async def test_a_long_branch_summary_fits_the_window_of_the_model(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    from bench.big_sessions import write_big_session

    # ~10k entries of short thinking + tool-call messages: their chars/4 sum stays under the budget pi
    # uses (window − reserveTokens), but the "[Assistant thinking]: …" / "[Assistant tool calls]: …"
    # lines of the serialised conversation are much longer than the messages' text
    fake = serve(responder=lambda _request: Reply([text("## Goal\nRead the files.")]))
    path = write_big_session(project / "big.jsonl", 10_000, project)
    async with open_session(["--session", str(path), "--model", ANTHROPIC], project) as session:
        branch = session.session_manager.get_branch()
        first_user = next(e for e in branch if e.type == "message" and e.message.role == "user")
        await session.navigate_with_summary(first_user.parent_id, True)
        leaf = session.session_manager.get_leaf_entry()
    assert fake.violations == []
    [request] = [r for r in fake.requests if r.last_user_text().startswith("<conversation>")]
    assert request.prompt_tokens + request.body["max_tokens"] <= 200_000
    assert leaf.type == "branch_summary" and "Read the files." in leaf.summary
    # the newest part of the branch is what was kept
    newest = [e for e in branch if e.type == "message" and e.message.role == "assistant"][-1]
    assert newest.message.content[0].text in request.last_user_text()


async def test_a_branch_the_provider_still_finds_too_long_is_sent_again_with_half_of_it(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    # the provider's tokenizer counts more than chars/4: its first answer is an overflow
    fake = serve(model_window=8_000)
    fake.script([Fault("context_overflow"), Reply([text("## Goal\nShorter.")])])
    async with open_session(["--model", ANTHROPIC], project) as session:
        manager = session.session_manager
        fork = manager.get_leaf_id()
        for n in range(40):
            manager.append_message(user(f"question {n:02d} " + "q" * 400))
            manager.append_message(answer(f"answer {n:02d} " + "a" * 400))
        await session.navigate_with_summary(fork, True)
        leaf = manager.get_leaf_entry()
    first, second = [r.last_user_text() for r in fake.requests]
    assert first.startswith("<conversation>") and second.startswith("<conversation>")
    assert "answer 39" in second and len(second) < len(first) * 0.7
    assert "earlier parts of the conversation omitted" in second
    assert leaf.type == "branch_summary" and "Shorter." in leaf.summary
