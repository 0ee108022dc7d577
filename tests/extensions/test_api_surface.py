from __future__ import annotations

import pytest

from pi_tui.extensions import api

PUBLIC = {
    "ExtensionAPI", "ExtensionContext", "CommandContext", "SessionView", "ContextUsage", "Event", "EventSpec",
    "EVENTS", "ContextEvent", "ExecResult", "is_tool_call_event_type", "CancelledByExtension",
    "FeatureUnavailableError", "ToolError", "AbortedError", "UIBridge", "NullUIBridge", "NotifyLevel",
    "WidgetPlacement", "ToolResult", "text_result", "AbortSignal", "Model", "TextContent", "ImageContent",
    "ToolCall", "UserMessage", "AssistantMessage", "ToolResultMessage", "CustomMessage", "dump_message",
    "load_message", "message_text", "decode_json", "ContextEnvelope", "SystemPart", "system_part_set", "system_part_remove",
    "system_parts_replace", "tools_replace", "tools_remove", "messages_cached_replace",
    "messages_uncached_append", "options_set", "track_file_changes", "FileChangeTracker", "kill_group_with_pi_tui",
    "BrowserLogin", "BrowserLoginError", "BrowserAuthorization",
}  # fmt: skip


def test_the_public_names_do_not_drift() -> None:
    assert set(api.__all__) == PUBLIC
    assert all(hasattr(api, name) for name in api.__all__)


def test_every_seed_event_is_in_the_event_table() -> None:
    seed = {
        "input", "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end", "context",
        "message", "message_start", "message_update", "message_end", "tool_call", "tool_execution_start",
        "tool_execution_update", "tool_execution_end", "tool_result", "before_provider_request",
        "session_start", "session_before_switch", "session_switch", "session_before_fork", "session_fork",
        "session_before_compact", "session_compact", "session_before_tree", "session_tree",
        "session_shutdown", "model_select", "resources_discover", "user_bash",
    }  # fmt: skip
    pi_087 = {"cache_warming_decision"}  # events of pi 0.87.1 the seed does not list
    assert set(api.EVENTS) == seed | pi_087


def test_patch_helpers_build_ops_the_engine_accepts() -> None:
    from pi_tui.context.patches import validate_ops

    ops = [
        api.system_part_set("policy", "text", "add policy"),
        api.system_part_remove("policy", "drop policy"),
        api.tools_remove(["bash"], "read-only"),
        api.messages_cached_replace([api.UserMessage(content="hi", timestamp=0)], "rewrite"),
    ]
    assert validate_ops(ops, phase="before_request", source="t") == ops
    assert ops[3]["messages"] == [{"role": "user", "content": "hi", "timestamp": 0}]
    ephemeral = [
        api.messages_uncached_append([{"role": "user", "content": "x"}]),
        api.options_set({"temperature": 0}),
    ]
    assert validate_ops(ephemeral, phase="ephemeral", source="t") == ephemeral


def test_events_are_read_only_and_answer_both_spellings() -> None:
    event = api.Event("tool_call", tool_call_id="c1", tool_name="bash", input={"command": "ls"})

    assert event.tool_name == event.toolName == event["toolName"] == event["tool_name"] == "bash"
    assert "toolCallId" in event and event.get("missing") is None
    with pytest.raises(AttributeError, match="read-only"):
        event.tool_name = "write"  # type: ignore[misc]
