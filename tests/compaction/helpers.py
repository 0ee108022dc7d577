from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_tui.compaction import is_checkpoint_request
from pi_tui.session import SessionManager
from pi_tui.testing import Fault, RecordedRequest, Reply, text, tool_call
from tests.shared_fixtures import PI_SESSIONS

FIXTURES = PI_SESSIONS
ANTHROPIC = "fake-anthropic/claude-fake"
OPENAI_CHAT = "fake-openai/gpt-fake"

SUMMARY = """## Goal
Read every file in data/ and report how many there are.

## Constraints & Preferences
- Read the files one by one

## Progress
### Done
- [x] Read the first files

### In Progress
- [ ] Reading the rest

### Blocked
- (none)

## Key Decisions
- **One read per file**: the user asked for it

## Next Steps
1. Read the next file

## Critical Context
- (none)"""

FILE_LINE = "abcdefghij" * 7 + "\n"


def file_body(n: int) -> str:
    """About 4 KB (about 1,000 fake tokens), different for every file."""
    return "".join(f"{n:04d}:{i:03d} {FILE_LINE}" for i in range(52))


def write_data_files(project: Path, count: int) -> None:
    data = project / "data"
    data.mkdir(exist_ok=True)
    for n in range(count):
        (data / f"f{n:02d}.txt").write_text(file_body(n))


def is_summary_request(request: RecordedRequest) -> bool:
    last = request.last_user_text()
    return is_checkpoint_request(last) or last.startswith("<conversation>")


def summary_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if r.api != "anthropic-count-tokens" and is_summary_request(r)]


def work_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if r.api != "anthropic-count-tokens" and not is_summary_request(r)]


class Reader:
    """A dynamic responder: summary requests get ``summary``; other requests read data/fNN.txt one file
    per request, ``per_prompt`` files for each prompt, then answer "Read N files.".

    ``overflow_next`` makes the next that many work requests fail with a context-overflow error;
    ``fail_summaries`` answers summary requests with a server error.
    """

    def __init__(self, per_prompt: int, summary: str = SUMMARY) -> None:
        self.per_prompt = per_prompt
        self.summary = summary
        self.read = 0  # files read so far
        self.in_prompt = 0
        self.overflow_next = 0
        self.fail_summaries = False

    def __call__(self, request: RecordedRequest) -> Any:
        if is_summary_request(request):
            return Fault("api_error") if self.fail_summaries else Reply([text(self.summary)])
        if self.overflow_next:
            self.overflow_next -= 1
            return Fault("context_overflow")
        if self.in_prompt < self.per_prompt:
            self.in_prompt += 1
            self.read += 1
            return Reply([tool_call("read", {"path": f"data/f{self.read - 1:02d}.txt"})])
        self.in_prompt = 0
        return Reply([text(f"Read {self.read} files.")])


def write_settings(agent_dir: Path, settings: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings))


# --- session building (unit tests) ------------------------------------------------------------------


def user(content: str) -> UserMessage:
    return UserMessage(content=content)


def answer(content: str, total_tokens: int = 0) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=content)],
        provider="p",
        model="m",
        usage=Usage(total_tokens=total_tokens),
    )


def call(call_id: str, name: str, arguments: dict[str, Any], total_tokens: int = 0) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=call_id, name=name, arguments=arguments)],
        provider="p",
        model="m",
        stop_reason="toolUse",
        usage=Usage(total_tokens=total_tokens),
    )


def result(call_id: str, name: str, content: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=content)])


def session_with(*messages: Any) -> SessionManager:
    manager = SessionManager.in_memory("/tmp/project")
    for message in messages:
        manager.append_message(message)
    return manager


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def requests_after_summaries(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """The first work request after each run of summary requests."""
    out = []
    pending = False
    for request in requests:
        if request.api == "anthropic-count-tokens":
            continue
        if is_summary_request(request):
            pending = True
        elif pending:
            out.append(request)
            pending = False
    return out
