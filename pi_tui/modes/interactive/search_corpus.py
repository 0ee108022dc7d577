"""The transcript's text for search: every chat item's shown words, mounted or not.

A long session keeps only a window of its items mounted as widgets (`chat.ChatLog`), so searching the
widgets would miss most of the conversation. Search reads the items instead: each item's text as its
blocks show it (an answer's text, a thought unless thinking is hidden, a tool card's title and the
output it shows, cut to its preview while tool output is collapsed), whitespace folded to single
spaces and lower-cased, all items joined into one string with a line feed between them. A line feed is
never part of a folded query, so a match never spans two items. Counting and finding matches are then
`str.count` / `str.find` over that one string, which C does at a few hundred megabytes a second: a key
press costs a scan of the text, not a walk of the items.

Matching is case-insensitive and treats any run of whitespace as one space, as pi's transcript search
does (its rendered lines are joined the same way).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    UserMessage,
    message_text,
)

from .blocks import PREVIEW_LINES, args_summary
from .chat import Notice

__all__ = ["SearchCorpus", "TextSettings", "fold", "item_text"]

ResultLookup = Callable[[str], "tuple[str, bool, object] | None"]
"""A tool call's id → its finished result (text, is-error, details), as the chat keeps them."""


@dataclass(frozen=True)
class TextSettings:
    """What changes the shown text of an item besides the item itself."""

    tools_expanded: bool = False
    thinking_hidden: bool = False
    hidden_thinking_label: str = "Thinking..."


def fold(text: str) -> str:
    """``text`` as search compares it: lower-cased, each run of whitespace one space, no ends."""
    return " ".join(text.lower().split())


def _cut_lines(text: str, limit: int, *, tail: bool) -> str:
    """The first (``tail``: last) ``limit`` lines of ``text``, splitting no further than needed."""
    if tail:
        parts = text.rsplit("\n", limit)
        return "\n".join(parts[1:]) if len(parts) > limit else text
    parts = text.split("\n", limit)
    return "\n".join(parts[:limit]) if len(parts) > limit else text


def _tool_text(
    name: str, args: dict[str, object], result: tuple[str, bool, object] | None, expanded: bool
) -> str:
    """A tool card's shown words: its title, then its output (its preview while collapsed)."""
    title = f"$ {args_summary(name, args)}" if name == "bash" else f"{name} {args_summary(name, args)}"
    if result is None:
        return title
    text, is_error, details = result
    if name == "read" and not expanded and not is_error:
        return title  # a collapsed read shows only its title
    body = text
    if isinstance(details, dict) and isinstance(details.get("diff"), str) and not is_error:
        body = details["diff"]
    elif name == "write" and not is_error and isinstance(content := args.get("content"), str):
        body = "\n".join("+" + line for line in content.splitlines())
    body = body.rstrip("\n")
    if not expanded:
        body = _cut_lines(body, PREVIEW_LINES.get(name, 8), tail=name == "bash")
    return f"{title}\n{body}"


def item_text(item: object, results: ResultLookup, settings: TextSettings) -> str:
    """The words chat item ``item`` shows (empty for an item that draws nothing, such as a tool result,
    whose output its call's card shows)."""
    if isinstance(item, UserMessage):
        return message_text(item)
    if isinstance(item, AssistantMessage):
        parts: list[str] = []
        for part in item.content:
            if part.type == "text":
                parts.append(part.text)
            elif part.type == "thinking" and part.thinking.strip():
                parts.append(settings.hidden_thinking_label if settings.thinking_hidden else part.thinking)
            elif part.type == "toolCall":
                args = dict(part.arguments or {})
                parts.append(_tool_text(part.name, args, results(part.id), settings.tools_expanded))
        if item.stop_reason == "error":
            parts.append(f"Error: {item.error_message or 'unknown error'}")
        elif item.stop_reason == "aborted":
            parts.append("Operation aborted")
        return "\n".join(parts)
    if isinstance(item, BashExecutionMessage):
        output = item.output.rstrip("\n")
        if not settings.tools_expanded:
            output = _cut_lines(output, 20, tail=True)
        return f"$ {item.command}\n{output}"
    if isinstance(item, CompactionSummaryMessage | BranchSummaryMessage):
        label = "[compaction]" if isinstance(item, CompactionSummaryMessage) else "[branch]"
        return f"{label}\n{item.summary}" if settings.tools_expanded else label
    if isinstance(item, CustomMessage):
        return f"[{item.custom_type}] {message_text(item)}" if item.display else ""
    if isinstance(item, Notice):
        if settings.tools_expanded and item.expanded is not None:
            return item.expanded
        return item.text
    return ""


class SearchCorpus:
    """The folded text of a list of chat items, kept up to date item by item.

    `refresh` compares the items with those it folded last (by identity: the chat appends items, and
    replaces one in place when a streamed answer ends) and folds only the new or changed ones; the
    joined text is made again only when something changed.
    """

    def __init__(self) -> None:
        self._sources: list[object] = []
        self._texts: list[str] = []
        self._settings: TextSettings | None = None
        self.text = ""
        """Every item's folded text, joined by line feeds (one per item, empty ones too)."""
        self._starts: list[int] = []

    def refresh(self, items: Sequence[object], results: ResultLookup, settings: TextSettings) -> bool:
        """Fold what changed in ``items``; True when the text changed."""
        sources, texts = self._sources, self._texts
        if settings != self._settings:
            sources.clear()
            texts.clear()
            self._settings = settings
        changed = len(sources) != len(items)
        del sources[len(items) :], texts[len(items) :]
        for index, item in enumerate(items):
            if index < len(sources):
                if sources[index] is item:
                    continue
                sources[index] = item
                texts[index] = fold(item_text(item, results, settings))
            else:
                sources.append(item)
                texts.append(fold(item_text(item, results, settings)))
            changed = True
        if changed or not self._starts and items:
            self.text = "\n".join(texts)
            starts: list[int] = []
            at = 0
            for text in texts:
                starts.append(at)
                at += len(text) + 1
            self._starts = starts
            return True
        return False

    def item_at(self, offset: int) -> int:
        """The index of the item whose text holds ``offset`` of `text`."""
        return max(0, bisect_right(self._starts, offset) - 1)

    def item_start(self, index: int) -> int:
        """Where item ``index``'s text starts in `text` (its end when past the last item)."""
        if index < len(self._starts):
            return self._starts[index]
        return len(self.text)

    def count(self, query: str, start: int = 0, end: int | None = None) -> int:
        """Matches of folded ``query`` in `text` (between ``start`` and ``end``)."""
        if not query:
            return 0
        return self.text.count(query, start, len(self.text) if end is None else end)

    def find(self, query: str, start: int = 0) -> int:
        """The first match of ``query`` at or after ``start``, wrapping to the top; -1 when none."""
        if not query:
            return -1
        found = self.text.find(query, start)
        return found if found >= 0 else self.text.find(query)

    def rfind(self, query: str, before: int) -> int:
        """The last match of ``query`` that starts before ``before``, wrapping to the bottom; -1 when none."""
        if not query:
            return -1
        found = self.text.rfind(query, 0, max(0, before + len(query) - 1))
        return found if found >= 0 else self.text.rfind(query)
