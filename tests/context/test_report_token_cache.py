"""Opening ``/context`` again counts only the messages that are new since the last report: the session
keeps each message's token count, and the numbers are the same as counting afresh."""

from __future__ import annotations

from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.context.report import message_tokens
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

ANTHROPIC = "fake-anthropic/claude-fake"


async def test_reopening_counts_only_new_messages(fake: FakeLLM, tmp_path: Path) -> None:
    fake.responder = lambda _request: Reply([text("ok " * 50)])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    for n in range(3):
        await session.prompt(f"question {n}: " + "words " * 40)
    first = await session.context_report()
    cache = first.token_cache
    assert len(first.cached) + len(first.uncached) == 6
    assert cache.counted == 6
    first.projection()  # the projection sizes its blocks from the same counts
    assert cache.counted == 6

    second = await session.context_report()
    assert second.token_cache is cache
    assert cache.counted == 6  # nothing new: nothing tokenised
    rows = [(r.index, r.tokens) for r in (*second.cached, *second.uncached)]
    assert rows == [(r.index, r.tokens) for r in (*first.cached, *first.uncached)]
    assert rows == [(r.index, message_tokens(r.message)) for r in (*second.cached, *second.uncached)]
    assert second.projection().total == first.projection().total
    assert second.cached[0] is first.cached[0]  # the rows themselves are kept, not built again

    await session.prompt("one more question")
    third = await session.context_report()
    assert len(third.cached) + len(third.uncached) == 8
    assert cache.counted == 8  # the new prompt and its answer only
    assert [(r.index, r.tokens) for r in (*third.cached, *third.uncached)] == [
        (i, message_tokens(m)) for i, m in enumerate((*third.envelope.cached, *third.envelope.uncached))
    ]
    await session.close()
    assert fake.violations == []


def _every_kind() -> list[object]:
    from pi_tui.ai.types import (
        AssistantMessage,
        BashExecutionMessage,
        BranchSummaryMessage,
        CompactionSummaryMessage,
        CustomMessage,
        ImageContent,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

    image = ImageContent(data="aGk=", mime_type="image/png")
    return [
        UserMessage(content="plain text é🙂"),
        UserMessage(content=[TextContent(text="look"), image]),
        AssistantMessage(content=[]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm " * 30),
                TextContent(text="answer"),
                ToolCall(
                    id="c", name="edit", arguments={"path": "é.py", "edits": [{"old": "a", "new": 1e-5}]}
                ),
            ]
        ),
        ToolResultMessage(tool_call_id="c", tool_name="edit", content=[TextContent(text="ok"), image]),
        ToolResultMessage(tool_call_id="d", tool_name="edit", content=[]),
        BashExecutionMessage(command="ls", output="a\nb"),
        BashExecutionMessage(command="secret", output="kept out", exclude_from_context=True),
        CustomMessage(custom_type="note", content="a note"),
        BranchSummaryMessage(summary="went back"),
        CompactionSummaryMessage(summary="earlier work"),
    ]


def test_rows_counted_ahead_are_the_rows_of_each_message_counted_alone() -> None:
    from pi_tui.agent.convert import reaches_model
    from pi_tui.ai.tokens import count_message_tokens
    from pi_tui.ai.types import message_role
    from pi_tui.context.report import MessageTokenCache

    messages = _every_kind() + _every_kind() + _every_kind()  # distinct objects
    cache = MessageTokenCache()
    assert list(cache.prime_in_steps(messages, 4)) == [4, 8, 12, 16, 20, 24, 28, 32, 33]
    assert cache.counted == len(messages)
    rows = cache.rows("cached", messages, 0)
    assert cache.counted == len(messages)  # the report reuses the rows counted ahead
    expected = [(i, message_role(m), message_tokens(m), reaches_model(m)) for i, m in enumerate(messages)]
    assert [(r.index, r.role, r.tokens, r.sent) for r in rows] == expected
    assert all(r.message is m for r, m in zip(rows, messages, strict=True))
    assert [cache.estimate(m) for m in messages] == [count_message_tokens(m) for m in messages]
    tail = cache.rows("uncached", _every_kind(), len(rows))  # new messages, numbered after the cached ones
    assert [(r.index, r.tokens) for r in tail] == [
        (len(rows) + i, message_tokens(m)) for i, m in enumerate(_every_kind())
    ]
