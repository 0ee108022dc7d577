from __future__ import annotations

from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from pi_tui.compaction import (
    FileOps,
    compute_file_lists,
    extract_file_ops,
    format_file_lists,
    serialize_messages,
)
from pi_tui.compaction.file_ops import strip_file_lists
from pi_tui.compaction.prompts import (
    CHECKPOINT_HEADING,
    additional_focus,
    history_instructions,
    is_checkpoint_request,
    prefix_request_text,
    standalone_prompt,
)

from .helpers import call, result, user


def test_conversation_is_serialised_with_role_labels_and_blank_lines() -> None:
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="let me look"),
            TextContent(text="Reading it."),
            ToolCall(id="c1", name="read", arguments={"path": "a.py", "offset": 3}),
            ToolCall(id="c2", name="ls", arguments={}),
        ]
    )
    text = serialize_messages(
        [
            user("fix the bug"),
            assistant,
            result("c1", "read", "print(1)"),
            result("c2", "ls", "a.py"),
            BashExecutionMessage(command="ls", output="a.py", exit_code=0),
            CompactionSummaryMessage(summary="earlier work"),
        ]
    )
    blocks = text.split("\n\n")
    assert blocks[0] == "[User]: fix the bug"
    assert blocks[1] == "[Assistant thinking]: let me look"
    assert blocks[2] == "[Assistant]: Reading it."
    assert blocks[3] == '[Assistant tool calls]: read(path="a.py", offset=3); ls()'
    assert blocks[4] == "[Tool result]: print(1)"
    assert blocks[5] == "[Tool result]: a.py"
    assert blocks[6].startswith("[User]: Ran `ls`")
    assert "earlier work" in text.split("[User]: The conversation history before this point")[1]


def test_tool_results_are_cut_at_two_thousand_characters_with_a_marker() -> None:
    text = serialize_messages([call("c1", "read", {"path": "big"}), result("c1", "read", "x" * 2500)])
    body = text.split("[Tool result]: ", 1)[1]
    assert body == "x" * 2000 + "\n\n[... 500 more characters truncated]"
    short = serialize_messages([call("c1", "read", {"path": "big"}), result("c1", "read", "y" * 2000)])
    assert short.endswith("y" * 2000)


def test_file_lists_separate_read_only_files_from_modified_ones() -> None:
    ops = extract_file_ops(
        [
            call("1", "read", {"path": "b.py"}),
            call("2", "read", {"path": "a.py"}),
            call("3", "edit", {"path": "a.py"}),
            call("4", "write", {"path": "c.py"}),
            call("5", "bash", {"command": "cat z.py"}),
            user("read x.py"),
        ],
        FileOps(),
    )
    read, modified = compute_file_lists(ops)
    assert (read, modified) == (["b.py"], ["a.py", "c.py"])
    listed = format_file_lists(read, modified)
    assert (
        listed == "\n\n<read-files>\nb.py\n</read-files>\n\n<modified-files>\na.py\nc.py\n</modified-files>"
    )
    assert strip_file_lists("Summary" + listed) == "Summary"
    assert format_file_lists([], []) == ""


def test_the_update_prompt_keeps_the_old_checkpoint_and_custom_focus_is_appended() -> None:
    initial = history_instructions(update=False, source="the conversation above")
    update = history_instructions(
        update=True, source="the conversation above", custom_instructions="the tests"
    )
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert heading in initial and heading in update
    assert "<previous-summary>" in update and "KEEP" in update and "<previous-summary>" not in initial
    assert update.endswith("\n\nAdditional focus: the tests")
    assert additional_focus("  ") == ""

    request = prefix_request_text(
        heading=CHECKPOINT_HEADING, scope="scope", instructions=update, previous_summary="OLD"
    )
    assert is_checkpoint_request(request)
    assert "<previous-summary>\nOLD\n</previous-summary>" in request
    assert "Do not call any tools" in request

    standalone = standalone_prompt("[User]: hi", initial, previous_summary="OLD")
    assert standalone.startswith("<conversation>\n[User]: hi\n</conversation>\n\n<previous-summary>\nOLD\n")
    assert not is_checkpoint_request(standalone)
