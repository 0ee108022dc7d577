from __future__ import annotations

from typing import Any

from pi_tui.agent.tool import AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent


async def run(
    tool: AgentTool,
    params: dict[str, Any],
    *,
    signal: AbortSignal | None = None,
    on_update: ToolUpdateFn | None = None,
) -> ToolResult:
    return await tool.execute("call-1", params, signal or AbortSignal(), on_update)


async def run_text(tool: AgentTool, params: dict[str, Any], **kwargs: Any) -> str:
    return text_of(await run(tool, params, **kwargs))


async def run_error(tool: AgentTool, params: dict[str, Any], **kwargs: Any) -> ToolError:
    try:
        await run(tool, params, **kwargs)
    except ToolError as exc:
        return exc
    raise AssertionError("the tool did not fail")


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))
