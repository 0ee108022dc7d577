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

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.session.entries import SystemMessageEntry
from pi_tui.util.json_types import JsonObject

__all__ = [
    "OWN_SECTION",
    "SystemState",
    "content_text",
    "fold_system_messages",
    "system_message_dict",
    "system_update",
    "tool_declaration",
]

OWN_SECTION = "environment"
"""The section only pi-tui writes (the date and the working directory): a prompt on the path that has
it is pi-tui's own. pi names its directory section ``cwd`` and removes sections it does not write when
it patches the prompt, so once pi has written its own prompt into a session, this one is gone."""


def content_text(content: object) -> str:
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
    tools: dict[str, JsonObject] = field(default_factory=dict)
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

    @property
    def own(self) -> bool:
        """Whether this is pi-tui's own prompt (see `OWN_SECTION`), not one pi persisted."""
        return OWN_SECTION in self.sections

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


def system_message_dict(entry: object) -> JsonObject | None:
    """The system message of a `SystemMessageEntry` as pi's JSON dict, else None."""
    if not isinstance(entry, SystemMessageEntry):
        return None
    dumped: JsonObject = entry.system.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def tool_declaration(tool: Mapping[str, object]) -> dict[str, object]:
    """A tool as pi declares it to the model: ``name``, ``description``, ``parameters`` and, when set,
    ``constrainedSampling``, in that order (pi's ``toToolDeclaration``)."""
    out = {
        "name": tool.get("name"),
        "description": tool.get("description", ""),
        "parameters": tool.get("parameters"),
    }
    if tool.get("constrainedSampling") is not None:
        out["constrainedSampling"] = tool["constrainedSampling"]
    return out


def _same_tool(left: Mapping[str, object], right: Mapping[str, object]) -> bool:
    # pi compares the serialised declarations, so key order counts as it does there
    return json.dumps(tool_declaration(left)) == json.dumps(tool_declaration(right))


def system_update(
    state: SystemState,
    sections: Mapping[str, str],
    tools: Sequence[Mapping[str, object]],
    timestamp: int,
) -> dict[str, object] | None:
    """The system message that brings ``state`` to ``sections`` and ``tools``, as pi writes it, or None
    when nothing changed.

    As pi: the sections whose text changed or that are new, in their order, then ``None`` for each
    section that is gone; ``toolsAdded`` holds every tool that is new or declared differently (as
    `tool_declaration`), ``toolsRemoved`` the name of every tool that is gone or redeclared. The first
    message of a session (an empty ``state``) therefore holds every section and every tool.
    """
    patch: dict[str, str | None] = {
        name: text for name, text in sections.items() if state.sections.get(name) != text
    }
    for name in state.sections:
        if name not in sections:
            patch[name] = None
    current = {str(tool.get("name")): tool for tool in tools}
    previous = state.tools
    added = [
        tool_declaration(tool)
        for name, tool in current.items()
        if name not in previous or not _same_tool(previous[name], tool)
    ]
    removed = [
        {"name": name}
        for name, tool in previous.items()
        if name not in current or not _same_tool(tool, current[name])
    ]
    if not patch and not added and not removed:
        return None
    message: dict[str, object] = {"role": "system", "content": ""}
    if patch:
        message["sections"] = patch
    message["timestamp"] = timestamp
    if added:
        message["toolsAdded"] = added
    if removed:
        message["toolsRemoved"] = removed
    return message
