"""pi 0.86+'s persisted system prompt: replaying ``role: "system"`` messages into one prompt and tool list.

pi stores the prompt it sends inside the session: the first request writes a system message with
named ``sections`` (or a forced ``content``) and every tool declaration (``toolsAdded``); later changes
append patches (changed sections by name, ``None`` removes one, tools added or removed). A compaction
carries a full checkpoint (``systemMessage``) that replaces everything before it.

`SystemState` is the fold of those messages, as pi's ``getCurrentSystemMessage``: content texts are
joined by a blank line, sections are patched by name (a re-set section keeps its place, a removed and
re-added one moves to the end), and tools are keyed by name in declaration order. The rendered prompt
is the content followed by every section, non-empty parts joined by a blank line, exactly what pi sends
to providers that take one leading system prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_tui.session.entries import SystemMessageEntry

__all__ = ["SystemState", "fold_system_messages", "system_message_dict", "content_text"]


def content_text(content: Any) -> str:
    """The text of a message content (a string, or the text blocks joined by newlines, as pi)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        )
    return ""


@dataclass
class SystemState:
    """The current prompt and tools after replaying a path's system messages."""

    content: list[str] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: bool = False  # at least one system message was applied

    def apply(self, message: Mapping[str, Any]) -> None:
        """Apply one system message (a JSON dict in pi's shape)."""
        self.seen = True
        text = content_text(message.get("content"))
        if text:
            self.content.append(text)
        sections = message.get("sections")
        if isinstance(sections, Mapping):
            for name, value in sections.items():
                if value is None:
                    self.sections.pop(name, None)
                elif isinstance(value, str):
                    self.sections[name] = value
        for tool in message.get("toolsRemoved") or ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                self.tools.pop(tool["name"], None)
        for tool in message.get("toolsAdded") or ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = dict(tool)

    def reset(self) -> None:
        self.content.clear()
        self.sections.clear()
        self.tools.clear()
        self.seen = False

    def copy(self) -> SystemState:
        return SystemState(list(self.content), dict(self.sections), dict(self.tools), self.seen)

    @property
    def prompt(self) -> str:
        """The rendered prompt: content, then each section, non-empty parts joined by a blank line."""
        parts = ["\n\n".join(self.content), *self.sections.values()]
        return "\n\n".join(p for p in parts if p)

    def parts(self) -> list[tuple[str, str]]:
        """``(name, text)`` pairs whose concatenation is `prompt` (separators folded into the texts)."""
        out: list[tuple[str, str]] = []
        for name, text in [("content", "\n\n".join(self.content)), *self.sections.items()]:
            if text:
                out.append((name, text if not out else "\n\n" + text))
        return out


def fold_system_messages(messages: Iterable[Mapping[str, Any]]) -> SystemState:
    state = SystemState()
    for message in messages:
        state.apply(message)
    return state


def system_message_dict(entry: Any) -> dict[str, Any] | None:
    """The system message of a `SystemMessageEntry` as pi's JSON dict, else None."""
    if not isinstance(entry, SystemMessageEntry):
        return None
    dumped: dict[str, Any] = entry.system.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped
