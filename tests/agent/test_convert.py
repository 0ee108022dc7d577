from __future__ import annotations

from pi_tui.agent.convert import convert_to_llm, transform_messages
from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .helpers import pairing_violations


def _text(message: object) -> str:
    assert isinstance(message, UserMessage)
    assert isinstance(message.content, list)
    return "".join(c.text for c in message.content if isinstance(c, TextContent))


def _assistant(*calls: str, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=c, name="read", arguments={}) for c in calls] or [TextContent(text="ok")],
        stop_reason=stop,  # type: ignore[arg-type]
    )


def _result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text="r")])


def test_compaction_summary_becomes_user_text_with_pis_wrapper():
    [message] = convert_to_llm([CompactionSummaryMessage(summary="We fixed the parser.", timestamp=7)])
    assert _text(message) == (
        "The conversation history before this point was compacted into the following summary:\n\n"
        "<summary>\nWe fixed the parser.\n</summary>"
    )
    assert message.timestamp == 7


def test_branch_summary_wrapper_has_no_newline_before_the_closing_tag():
    [message] = convert_to_llm([BranchSummaryMessage(summary="Tried X.\n", from_id="abc")])
    assert _text(message) == (
        "The following is a summary of a branch that this conversation came back from:\n\n"
        "<summary>\nTried X.\n</summary>"
    )


def test_bash_execution_with_output_and_failure():
    message = BashExecutionMessage(command="make test", output="FAIL", exit_code=2)
    assert (
        _text(convert_to_llm([message])[0]) == "Ran `make test`\n```\nFAIL\n```\n\nCommand exited with code 2"
    )


def test_bash_execution_without_output_cancelled_and_truncated():
    message = BashExecutionMessage(
        command="sleep 9",
        output="",
        exit_code=None,
        cancelled=True,
        truncated=True,
        full_output_path="/tmp/o.log",
    )
    assert _text(convert_to_llm([message])[0]) == (
        "Ran `sleep 9`\n(no output)\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o.log]"
    )


def test_bash_execution_exit_zero_adds_no_exit_line():
    message = BashExecutionMessage(command="ls", output="a\nb", exit_code=0)
    assert _text(convert_to_llm([message])[0]) == "Ran `ls`\n```\na\nb\n```"


def test_bash_execution_excluded_from_context_is_dropped():
    messages = [UserMessage(content="hi"), BashExecutionMessage(command="ls", exclude_from_context=True)]
    assert convert_to_llm(messages) == [messages[0]]


def test_custom_message_becomes_a_user_message_with_a_text_block():
    custom = CustomMessage(custom_type="ctx", content="remember this", display=False, timestamp=5)
    [message] = convert_to_llm([custom])
    assert isinstance(message, UserMessage)
    assert message.content == [TextContent(text="remember this")]
    assert message.timestamp == 5


def test_llm_messages_pass_through_unchanged():
    messages = [UserMessage(content="q"), _assistant(stop="stop")]
    converted = convert_to_llm(messages)
    assert converted[0] is messages[0] and converted[1] is messages[1]


def test_block_images_replaces_images_with_text():
    image = ImageContent(data="aGk=", mime_type="image/png")
    [message] = convert_to_llm([UserMessage(content=[TextContent(text="see"), image])], block_images=True)
    assert message.content == [TextContent(text="see"), TextContent(text="Image reading is disabled.")]


def test_transform_drops_errored_and_aborted_assistant_messages():
    messages = [
        UserMessage(content="q"),
        AssistantMessage(stop_reason="error", error_message="overloaded"),
        AssistantMessage(content=[TextContent(text="half")], stop_reason="aborted"),
        UserMessage(content="again"),
    ]
    assert transform_messages(messages) == [messages[0], messages[3]]


def test_orphaned_tool_call_gets_no_result_provided_before_the_next_user_message():
    messages = [UserMessage(content="q"), _assistant("a", "b"), _result("a"), UserMessage(content="next")]
    out = transform_messages(messages)
    synthetic = out[3]
    assert isinstance(synthetic, ToolResultMessage)
    assert synthetic.tool_call_id == "b" and synthetic.is_error
    assert synthetic.content == [TextContent(text="No result provided")]
    assert out[4] is messages[3]
    assert pairing_violations(out) == []


def test_orphaned_tool_call_at_the_end_is_answered():
    out = transform_messages([UserMessage(content="q"), _assistant("a")])
    assert [m.role for m in out] == ["user", "assistant", "toolResult"]
    assert pairing_violations(out) == []


def test_results_of_a_dropped_aborted_message_are_dropped_too():
    aborted = AssistantMessage(content=[ToolCall(id="x", name="read")], stop_reason="aborted")
    out = transform_messages([UserMessage(content="q"), aborted, _result("x"), UserMessage(content="again")])
    assert [m.role for m in out] == ["user", "user"]


def test_duplicate_and_stray_results_are_dropped():
    messages = [UserMessage(content="q"), _assistant("a"), _result("a"), _result("a"), _result("zzz")]
    out = transform_messages(messages)
    assert out == messages[:3]


def test_valid_history_is_kept_as_is():
    messages = [UserMessage(content="q"), _assistant("a"), _result("a"), _assistant(stop="stop")]
    assert transform_messages(messages) == messages


def test_pairing_checker_flags_missing_and_orphan_results():
    assert pairing_violations([UserMessage(content="q"), _assistant("a"), UserMessage(content="n")])
    assert pairing_violations([UserMessage(content="q"), _result("a")])


def _reference_transform(messages: list[object]) -> list[object]:
    """The tool-pairing rules written out plainly (call by call, as the docstring states them)."""
    out: list[object] = []
    calls: list[ToolCall] = []
    answered: set[str] = set()

    def close() -> None:
        for call in calls:  # one result per id: a second call with the same id gets none
            if call.id not in answered:
                answered.add(call.id)
                out.append(("synthetic", call.id))

    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id in {c.id for c in calls} and message.tool_call_id not in answered:
                answered.add(message.tool_call_id)
                out.append(message)
            continue
        close()
        calls, answered = [], set()
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted", "deferred"):
                continue
            calls = message.tool_calls()
        out.append(message)
    close()
    return out


def test_transform_follows_the_pairing_rules_on_random_histories() -> None:
    import random

    rng = random.Random(7)
    for _ in range(1_500):
        history: list[object] = []
        for _step in range(rng.randrange(1, 12)):
            pick = rng.random()
            if pick < 0.3:
                ids = [rng.choice("abcd") for _ in range(rng.randrange(0, 4))]  # repeats on purpose
                history.append(_assistant(*ids, stop=rng.choice(["toolUse", "toolUse", "aborted", "error"])))
            elif pick < 0.8:
                history.append(_result(rng.choice("abcde")))
            else:
                history.append(UserMessage(content="u", timestamp=1))
        got = [
            ("synthetic", m.tool_call_id) if isinstance(m, ToolResultMessage) and m.is_error else m
            for m in transform_messages(history)  # type: ignore[arg-type]
        ]
        assert got == _reference_transform(history)


def test_a_call_id_repeated_in_one_turn_gets_one_synthetic_result() -> None:
    # A provider takes one result per call id; a second synthetic result would be dropped later anyway.
    out = transform_messages([UserMessage(content="q"), _assistant("a", "b", "a"), UserMessage(content="n")])
    synthetic = [m.tool_call_id for m in out if isinstance(m, ToolResultMessage)]
    assert synthetic == ["a", "b"]
