"""Which files a conversation read and modified, from its ``read``/``write``/``edit`` tool calls.

The lists are cumulative: each compaction (and branch summary) stores them in its ``details`` and the next
one starts from there, so the summary always ends with every file the session has touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pi_tui.ai.types import AssistantMessage, ToolCall

__all__ = ["FileOps", "extract_file_ops", "compute_file_lists", "format_file_lists", "strip_file_lists"]


@dataclass(slots=True)
class FileOps:
    """Paths seen in tool calls, by kind."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_details(self, details: object) -> None:
        """Merge a previous summary's ``details`` (``{readFiles, modifiedFiles}``)."""
        if not isinstance(details, dict):
            return
        read, modified = details.get("readFiles"), details.get("modifiedFiles")
        if isinstance(read, list):
            self.read.update(p for p in read if isinstance(p, str))
        if isinstance(modified, list):
            self.edited.update(p for p in modified if isinstance(p, str))

    def to_json(self) -> dict[str, list[str]]:
        return {"read": sorted(self.read), "written": sorted(self.written), "edited": sorted(self.edited)}


def extract_file_ops(messages: Iterable[object], ops: FileOps) -> FileOps:
    """Add the ``path`` of every read/write/edit tool call in ``messages`` (assistant messages only)."""
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for block in message.content:
            if not isinstance(block, ToolCall):
                continue
            args = block.arguments
            path = args.get("path") if isinstance(args, dict) else None
            if not isinstance(path, str) or not path:
                continue
            name = block.name
            if name == "read":
                ops.read.add(path)
            elif name == "write":
                ops.written.add(path)
            elif name == "edit":
                ops.edited.add(path)
    return ops


def compute_file_lists(ops: FileOps) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``: files only read, and files edited or written; both sorted."""
    modified = ops.edited | ops.written
    return sorted(ops.read - modified), sorted(modified)


def format_file_lists(read_files: list[str], modified_files: list[str]) -> str:
    """The tagged lists appended to a summary (empty when there are none)."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def strip_file_lists(summary: str) -> str:
    """A summary without the trailing file lists (they are recomputed, so they must not pile up)."""
    text = summary.rstrip()
    for tag in ("modified-files", "read-files"):
        closing = f"</{tag}>"
        if text.endswith(closing):
            start = text.rfind(f"<{tag}>")
            if start >= 0:
                text = text[:start].rstrip()
    return text
