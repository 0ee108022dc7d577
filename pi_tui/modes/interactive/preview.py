"""A first-frame preview of a session's last messages, read cheaply from the file's tail.

Creating the session (runtime imports, parsing every entry, building Markdown widgets) takes ~0.5 s on a
large file; the user should see where they left off at once. `read_tail` parses only the last bytes of the
file with plain `json` and follows the active path back a few messages; `preview_blocks` turns them into
plain `Static` widgets (styled by the app's `.preview` rules). The real blocks replace them when the session is ready (`ChatLog.load` clears the
log). Anything unusual (no header, compactions or branch summaries on the tail's active path) gives None,
and the app simply shows nothing until the session is ready, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_tui.util import json_safe

TAIL_BYTES = 256 * 1024
"""How much of the file's end is read."""

MAX_MESSAGES = 8
"""At most this many user/assistant text messages are previewed (the screen shows a few)."""

_PLAIN_ENTRY_TYPES = {"message", "model_change", "thinking_level_change", "label", "session_info", "custom"}
"""Entry types the preview can walk past; anything else (compaction, branch summary …) means fall back."""


@dataclass(frozen=True)
class PreviewMessage:
    """One message of the preview: ``role`` is "user" or "assistant"; ``text`` its visible text."""

    role: str
    text: str


def _header(path: Path) -> dict[str, Any] | None:
    with path.open("rb") as handle:
        first = handle.readline(64 * 1024)
    try:
        header = json_safe.loads(first, limit=json_safe.MAX_RECORD_DEPTH)
    except ValueError:
        return None
    return header if isinstance(header, dict) and header.get("type") == "session" else None


def _tail_entries(path: Path, size: int, tail_bytes: int) -> list[dict[str, Any]] | None:
    with path.open("rb") as handle:
        start = max(0, size - tail_bytes)
        handle.seek(start)
        data = handle.read()
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line is cut
    entries: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json_safe.loads(line, limit=json_safe.MAX_RECORD_DEPTH)
        except ValueError:
            continue  # a broken or torn line: the loader skips it too (and keeps its bytes)
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _active_path(entries: list[dict[str, Any]], linear: bool) -> list[dict[str, Any]] | None:
    """The tail's entries on the active path, oldest first: the leaf is the last entry (every write
    hangs off the leaf), and the chain is followed back through ``parentId`` until it leaves the tail.
    Entries off that chain (abandoned branches) are passed over."""
    if linear:
        return entries
    by_id: dict[str, dict[str, Any]] = {}
    for entry in entries:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            return None
        by_id[entry_id] = entry
    path: list[dict[str, Any]] = []
    current: dict[str, Any] | None = entries[-1] if entries else None
    while current is not None and len(path) <= len(entries):
        path.append(current)
        parent = current.get("parentId")
        if parent is None:
            break
        current = by_id.get(parent)  # None: the chain leaves the tail; what we have is enough
    path.reverse()
    return path


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    return "\n\n".join(p for p in parts if p.strip())


def read_tail(
    path: Path, limit: int = MAX_MESSAGES, tail_bytes: int = TAIL_BYTES
) -> list[PreviewMessage] | None:
    """The last user/assistant text messages on the session file's active path, oldest first.

    Args:
        path: A pi session file (JSONL, header first).
        limit: At most this many messages.
        tail_bytes: How much of the file's end is read.

    Returns:
        The messages, or None when the file is missing or anything looks unusual (no session header,
        compactions or branch summaries on the active path within the tail, entries without ids in a
        versioned file; unreadable lines are passed over, as the loader passes over them): the caller then shows nothing until the real session is loaded.
    """
    try:
        size = path.stat().st_size
        header = _header(path)
        if header is None:
            return None
        entries = _tail_entries(path, size, tail_bytes)
    except OSError:
        return None
    if entries is None:
        return None
    if entries and entries[0].get("type") == "session":
        entries = entries[1:]
    if not entries:
        return None
    linear = not header.get("version") or header.get("version") == 1  # v1 files have no ids
    active = _active_path(entries, linear)
    if not active:
        return None
    if any(entry.get("type") not in _PLAIN_ENTRY_TYPES for entry in active):
        return None
    messages: list[PreviewMessage] = []
    for entry in active:
        if entry.get("type") != "message":
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            return None
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        text = _text_of(message)
        if text.strip():
            messages.append(PreviewMessage(role, text))
    return messages[-limit:] or None


def preview_blocks(messages: list[PreviewMessage]) -> list[Any]:
    """Lightweight `Static` widgets for ``messages`` (plain text, no Markdown widget trees)."""
    from rich.text import Text
    from textual.widgets import Static

    blocks: list[Any] = []
    for message in messages:
        block = Static(Text(message.text), classes=f"preview preview-{message.role}")
        blocks.append(block)
    return blocks
