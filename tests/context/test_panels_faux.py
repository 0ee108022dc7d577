from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.providers.faux import FAUX_MODEL, default_faux_response
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.context.panels import Panel, PanelManager
from tests.e2e.helpers import run_cli

EXTENSIONS = Path(__file__).resolve().parents[2] / "extensions"


async def _tail_panels() -> list[object]:
    panels = PanelManager()
    panels.register(Panel("Git status", lambda: "branch main, 2 files changed", placement="tail"))
    await panels.refresh()
    tail = panels.messages_for("tail")
    assert tail  # a panel pair and the footer pair
    return tail


async def test_faux_answers_the_prompt_not_the_tail_panel_after_it() -> None:
    request = LlmRequest(
        system_prompt="",
        messages=[UserMessage(content="read README.md"), *await _tail_panels()],
        tools=[ToolDefinition(name="read")],
    )
    response = default_faux_response(FAUX_MODEL, request, StreamOptions())
    [call] = [block for block in response.content if isinstance(block, ToolCall)]
    assert (call.name, call.arguments) == ("read", {"path": "README.md"})


async def test_faux_summarises_the_tool_result_not_the_tail_panel_after_it() -> None:
    request = LlmRequest(
        system_prompt="",
        messages=[
            UserMessage(content="read a.txt"),
            AssistantMessage(content=[ToolCall(id="t1", name="read", arguments={"path": "a.txt"})]),
            ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="one\ntwo")]),
            *await _tail_panels(),
        ],
    )
    text = default_faux_response(FAUX_MODEL, request, StreamOptions()).content[0]
    assert isinstance(text, TextContent)
    assert text.text.startswith("The `read` tool returned 2 lines:\n```\none\ntwo\n```")
    assert "dynamic_panel" not in text.text


@pytest.mark.slow
def test_print_mode_with_the_git_status_panel_reads_the_file_it_was_asked_to(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Hello from the readme\n")
    run = run_cli(
        [
            "--provider",
            "faux",
            "--no-session",
            "-e",
            str(EXTENSIONS / "git_status.py"),
            "-p",
            "read README.md",
        ],
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "The `read` tool returned" in run.stdout and "# Hello from the readme" in run.stdout
    assert "dynamic_panel" not in run.stdout
