from __future__ import annotations

from pi_tui.agent import (
    ToolCallContext,
    ToolCallDecision,
    ToolResultContext,
    ToolResultPatch,
    chain_after_tool_call,
    chain_before_tool_call,
    text_result,
)
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall

CALL = ToolCall(id="c", name="bash", arguments={"command": "ls"})


def _call_context() -> ToolCallContext:
    return ToolCallContext(AssistantMessage(), CALL, {"command": "ls"}, (), AbortSignal())


def _result_context() -> ToolResultContext:
    return ToolResultContext(
        AssistantMessage(), CALL, {}, text_result("out", {"n": 1}), False, (), AbortSignal()
    )


async def test_first_blocking_handler_wins_and_later_ones_are_skipped():
    calls: list[str] = []

    async def allow(context: ToolCallContext) -> None:
        calls.append("allow")

    async def block(context: ToolCallContext) -> ToolCallDecision:
        calls.append("block")
        return ToolCallDecision(block=True, reason="no")

    async def never(context: ToolCallContext) -> ToolCallDecision:
        calls.append("never")
        return ToolCallDecision(block=True, reason="late")

    decision = await chain_before_tool_call(allow, block, never)(_call_context())
    assert decision == ToolCallDecision(block=True, reason="no")
    assert calls == ["allow", "block"]


async def test_non_blocking_chain_returns_none():
    async def allow(context: ToolCallContext) -> ToolCallDecision:
        return ToolCallDecision(block=False)

    assert await chain_before_tool_call(allow, allow)(_call_context()) is None


async def test_result_patches_accumulate_and_each_handler_sees_the_previous_output():
    seen: list[str] = []

    async def append(context: ToolResultContext) -> ToolResultPatch:
        text = context.result.content[0].text
        seen.append(text)
        return ToolResultPatch(content=[TextContent(text=text + "+")])

    async def flag(context: ToolResultContext) -> ToolResultPatch:
        seen.append(context.result.content[0].text)
        return ToolResultPatch(is_error=True)

    patch = await chain_after_tool_call(append, append, flag)(_result_context())
    assert seen == ["out", "out+", "out++"]
    assert patch is not None
    result, is_error = patch.apply(text_result("out", {"n": 1}), False)
    assert result.content == [TextContent(text="out++")]
    assert result.details == {"n": 1}
    assert is_error is True


async def test_after_chain_without_patches_returns_none():
    async def nothing(context: ToolResultContext) -> None:
        return None

    assert await chain_after_tool_call(nothing)(_result_context()) is None
