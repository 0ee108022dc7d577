from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pi_tui.agent.serialize import serialize_conversation
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_message,
)
from pi_tui.args import parse_args
from pi_tui.modes.rpc.context_view import context_view
from pi_tui.runtime.factory import create_session
from pi_tui.session import SessionManager
from pi_tui.session.export_html import render_session_html
from pi_tui.util.json_safe import MAX_DEPTH


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):  # lists and objects in turn
        value = {"k": value} if level % 2 else [value]
    return value


def _write_session(cwd: Path) -> Path:
    """A session whose tool call and tool-result details nest as deeply as a load accepts from a model."""
    arguments = {"command": "echo hi", "tree": _nested(MAX_DEPTH - 1)}
    manager = SessionManager.create(str(cwd))
    manager.append_message(UserMessage(content="go", timestamp=1))
    manager.append_message(
        AssistantMessage(
            content=[ToolCall(id="c1", name="bash", arguments=arguments)],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
            timestamp=2,
        )
    )
    manager.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="bash",
            content=[TextContent(text="hi")],
            details={"deep": _nested(MAX_DEPTH - 1)},
            timestamp=3,
        )
    )
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="done")],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="stop",
        )
    )
    manager.close()
    assert manager.path is not None
    return manager.path


async def test_values_at_the_depth_limit_survive_every_walk_over_the_history(tmp_path: Path) -> None:
    path = _write_session(tmp_path)
    session = create_session(parse_args(["--provider", "faux", "--session", str(path)]), tmp_path).session
    try:
        messages = list(session.agent.messages)
        assert len(messages) == 4
        copied = copy.deepcopy(messages)  # what extension events hand out
        assert json.dumps([dump_message(m) for m in copied]) == json.dumps(
            [dump_message(m) for m in messages]
        )
        assert "echo hi" in serialize_conversation(messages)  # the compaction summariser's input
        assert "echo hi" in render_session_html(session.session_manager)
        rpc = await context_view(session)
        assert [row["role"] for row in rpc["messages"]["cached"]] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        tui = await session.context_report()
        assert len(tui.cached) == 4
        await session.prompt("again")  # the request is built and the answer saved
        assert session.last_assistant_message() is not None
    finally:
        await session.close()
    with SessionManager.open(path, read_only=True) as again:
        assert again.load_report.summary() == ""
        assert len(again.build_context().messages) == 6
