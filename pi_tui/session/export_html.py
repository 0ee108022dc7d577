"""``--export``: one self-contained HTML page of a session (inline CSS, no external assets).

The page shows the header, the conversation along the active path (every entry of it, including what a
compaction summarised away, with tool results folded in ``<details>``), and the whole tree with every
branch, its labels, and the active path marked. All session text is HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_role,
    message_text,
)
from pi_tui.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    ContextTransformEntry,
    CustomEntry,
    CustomMessageEntry,
    EphemeralEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    RawEntry,
    SessionEntry,
    SessionInfoEntry,
    SystemMessageEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from pi_tui.session.manager import SessionManager
from pi_tui.session.tree import TreeNode

__all__ = ["export_session_html", "render_session_html", "tree_row_text"]

_ROW_LIMIT = 200
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}

_CSS = """
:root { --bg:#fafafa; --fg:#1d1d1f; --muted:#6b6b70; --line:#dcdce0; --user:#e8f0fe; --asst:#ffffff;
  --tool:#f3f3f5; --err:#fdecea; --sum:#fff7e0; --accent:#3563d0; }
@media (prefers-color-scheme: dark) { :root { --bg:#16161a; --fg:#e6e6ea; --muted:#9a9aa2; --line:#33333a;
  --user:#1f2a40; --asst:#1c1c21; --tool:#222228; --err:#3a1f1f; --sum:#3a3320; --accent:#8fb0ff; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); font:15px/1.5 system-ui, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 64px; }
h1 { font-size: 20px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 32px 0 12px; }
dl.meta { display:grid; grid-template-columns: max-content 1fr; gap: 2px 12px; color: var(--muted); }
dl.meta dd { margin:0; color: var(--fg); word-break: break-all; }
.msg { border:1px solid var(--line); border-radius:8px; padding:10px 14px; margin:10px 0; background:var(--asst); }
.msg .who { font-size:12px; font-weight:600; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
.user { background:var(--user); } .summary { background:var(--sum); } .error { background:var(--err); }
.note { color:var(--muted); font-size:13px; margin:6px 2px; }
.text, pre { white-space: pre-wrap; word-wrap: break-word; }
pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; background:var(--tool);
  padding:8px 10px; border-radius:6px; margin:6px 0; overflow-x:auto; }
.thinking { color:var(--muted); font-style: italic; }
details { margin:6px 0; } summary { cursor:pointer; color:var(--muted); }
.tree ul { list-style:none; margin:0; padding-left: 18px; border-left:1px dashed var(--line); }
.tree > ul { padding-left: 0; border-left: none; }
.tree li { font: 13px/1.6 ui-monospace, Menlo, monospace; white-space: nowrap; overflow:hidden; text-overflow: ellipsis; }
.tree li.on-path { font-weight: 600; } .tree li.leaf::after { content: "  \\2190 active"; color: var(--accent); }
.label { color: var(--accent); } img { max-width: 100%; border-radius: 6px; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cut(text: str, limit: int = _ROW_LIMIT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tree_row_text(entry: SessionEntry) -> str:
    """A one-line description of an entry, as the tree shows it (pi's ``/tree`` wording)."""
    if isinstance(entry, MessageEntry):
        m = entry.message
        if isinstance(m, UserMessage):
            return "user: " + _cut(message_text(m))
        if isinstance(m, AssistantMessage):
            text = m.text()
            if m.stop_reason == "aborted" and not text:
                return "assistant: (aborted)"
            if m.stop_reason == "error" and not text:
                return "assistant: " + _cut(m.error_message or "error")
            calls = ", ".join(c.name for c in m.tool_calls())
            return "assistant: " + _cut(text or (f"[{calls}]" if calls else "(no content)"))
        if isinstance(m, ToolResultMessage):
            return f"{m.tool_name}: " + _cut(message_text(m))
        if isinstance(m, BashExecutionMessage):
            return "[bash]: " + _cut(m.command)
        if isinstance(m, CustomMessage):
            return f"[{m.custom_type}]: " + _cut(message_text(m))
        return f"[{message_role(m) or 'message'}]"
    if isinstance(entry, CustomMessageEntry):
        body = (
            entry.content
            if isinstance(entry.content, str)
            else " ".join(c.text for c in entry.content if isinstance(c, TextContent))
        )
        return f"[{entry.custom_type}]: " + _cut(body)
    if isinstance(entry, CompactionEntry):
        return f"[compaction: {round(entry.tokens_before / 1000)}k tokens]"
    if isinstance(entry, BranchSummaryEntry):
        return "[branch summary]: " + _cut(entry.summary)
    if isinstance(entry, ModelChangeEntry):
        return f"[model: {entry.model_id}]"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f"[thinking: {entry.thinking_level}]"
    if isinstance(entry, CustomEntry):
        return f"[custom: {entry.custom_type}]"
    if isinstance(entry, LabelEntry):
        return f"[label: {entry.label or '(cleared)'}]"
    if isinstance(entry, SessionInfoEntry):
        return f"[name: {entry.name or ''}]"
    if isinstance(entry, ContextTransformEntry):
        title = (entry.display or {}).get("title") if isinstance(entry.display, dict) else None
        return f"[context transform: {entry.transformer_name}]" + (f" {_cut(str(title))}" if title else "")
    if isinstance(entry, EphemeralEntry):
        return f"[ephemeral: {len(entry.messages)} messages]"
    if isinstance(entry, SystemMessageEntry):
        return "[system]"
    if isinstance(entry, ContextEditEntry):  # pi's /tree labels
        action = "omit" if entry.replacement is None else "replace"
        return f"[context {action}: {entry.target_id}]"
    if isinstance(entry, UsageEntry):
        return f"[usage: {entry.kind}]"
    if isinstance(entry, RawEntry):
        return f"[{entry.type or 'unknown'}]"
    return f"[{entry.type}]"


# --- conversation ---------------------------------------------------------------------------------


def _content_blocks(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield f'<div class="text">{_e(content)}</div>'
        return
    for block in content or []:
        if isinstance(block, TextContent):
            yield f'<div class="text">{_e(block.text)}</div>'
        elif isinstance(block, ThinkingContent):
            if block.thinking:
                yield f'<details><summary>thinking</summary><div class="text thinking">{_e(block.thinking)}</div></details>'
        elif isinstance(block, ToolCall):
            args = json.dumps(block.arguments, indent=2, ensure_ascii=False)
            yield f'<div class="note">tool call <b>{_e(block.name)}</b></div><pre>{_e(args)}</pre>'
        elif isinstance(block, ImageContent):
            if block.mime_type in _IMAGE_TYPES:
                yield f'<img alt="image" src="data:{block.mime_type};base64,{_e(block.data)}">'
            else:
                yield f'<div class="note">[image {_e(block.mime_type)}]</div>'


def _box(css: str, who: str, body: str) -> str:
    return f'<div class="msg {css}"><div class="who">{_e(who)}</div>{body}</div>'


def _render_message(m: Any) -> str:
    if isinstance(m, UserMessage):
        return _box("user", "user", "".join(_content_blocks(m.content)))
    if isinstance(m, AssistantMessage):
        body = "".join(_content_blocks(m.content))
        if m.stop_reason in ("error", "aborted"):
            body += f'<div class="note">{_e(m.stop_reason)}{": " + _e(m.error_message) if m.error_message else ""}</div>'
        who = f"assistant · {m.provider}/{m.model}" if m.model else "assistant"
        return _box("error" if m.stop_reason == "error" else "", who, body)
    if isinstance(m, ToolResultMessage):
        text = message_text(m)
        lines = text.count("\n") + 1 if text else 0
        extra = "".join(b for b in _content_blocks([c for c in m.content if isinstance(c, ImageContent)]))
        status = "error" if m.is_error else f"{lines} lines"
        return (
            f'<details class="msg {"error" if m.is_error else ""}"><summary>{_e(m.tool_name)} result '
            f"({_e(status)})</summary><pre>{_e(text)}</pre>{extra}</details>"
        )
    if isinstance(m, BashExecutionMessage):
        status = "cancelled" if m.cancelled else f"exit {m.exit_code}" if m.exit_code is not None else ""
        return _box("", f"bash · {status}", f"<pre>$ {_e(m.command)}\n{_e(m.output)}</pre>")
    if isinstance(m, CustomMessage):
        return _box("", m.custom_type, "".join(_content_blocks(m.content)))
    return _box("", message_role(m) or "message", f'<div class="text">{_e(message_text(m))}</div>')


def _render_entry(entry: SessionEntry) -> str:
    if isinstance(entry, MessageEntry):
        return _render_message(entry.message)
    if isinstance(entry, CustomMessageEntry):
        if not entry.display:
            return f'<div class="note">[{_e(entry.custom_type)}] (hidden message)</div>'
        return _box("", entry.custom_type, "".join(_content_blocks(entry.content)))
    if isinstance(entry, CompactionEntry):
        body = f'<div class="text">{_e(entry.summary)}</div>'
        return _box("summary", f"compaction · {entry.tokens_before} tokens before", body)
    if isinstance(entry, BranchSummaryEntry):
        return _box("summary", "branch summary", f'<div class="text">{_e(entry.summary)}</div>')
    if isinstance(entry, ModelChangeEntry):
        return f'<div class="note">model → {_e(entry.provider)}/{_e(entry.model_id)}</div>'
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f'<div class="note">thinking → {_e(entry.thinking_level)}</div>'
    if isinstance(entry, ContextTransformEntry | EphemeralEntry | RawEntry):
        return f'<div class="note">{_e(tree_row_text(entry))}</div>'
    return ""  # labels, names and extension state are not part of the conversation


# --- tree -----------------------------------------------------------------------------------------


def _fork(children: list[TreeNode]) -> list[str | TreeNode]:
    """Work items that render each branch of a fork as its own sub-list."""
    items: list[str | TreeNode] = []
    for child in children:
        items.extend(("<li><ul>", child, "</ul></li>"))
    return items


def _render_tree(roots: list[TreeNode], on_path: set[str], leaf_id: str | None) -> str:
    """Nested lists in which a chain stays flat and only a fork opens one sub-list per branch.

    Iterative, so a session thousands of entries deep renders without recursion.
    """
    out: list[str] = ['<div class="tree"><ul>']
    stack: list[str | TreeNode] = list(reversed(roots if len(roots) == 1 else _fork(roots)))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node: TreeNode | None = item
        while node is not None:
            entry = node.entry
            classes = [c for c, on in (("on-path", entry.id in on_path), ("leaf", entry.id == leaf_id)) if on]
            cls = f' class="{" ".join(classes)}"' if classes else ""
            label = f' <span class="label">[{_e(node.label)}]</span>' if node.label else ""
            out.append(f"<li{cls}>{_e(tree_row_text(entry))}{label}</li>")
            if len(node.children) == 1:
                node = node.children[0]
            else:
                stack.extend(reversed(_fork(node.children)))
                node = None
    out.append("</ul></div>")
    return "".join(out)


def render_session_html(manager: SessionManager) -> str:
    """The export page of a loaded session, as a string."""
    header = manager.header
    path = manager.get_branch()
    on_path = {e.id for e in path if e.id is not None}
    title = manager.name or (manager.path.name if manager.path else manager.id)
    meta_rows = [
        ("Session", header.id),
        ("Name", manager.name or ""),
        ("Created", header.timestamp),
        ("Working directory", header.cwd),
        ("File", str(manager.path) if manager.path else "(in memory)"),
        ("Forked from", header.parent_session or ""),
        ("Entries", str(len(manager.get_entries()))),
    ]
    meta = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in meta_rows if v)
    conversation = "".join(_render_entry(e) for e in path) or '<div class="note">(no messages)</div>'
    tree = _render_tree(manager.get_tree(), on_path, manager.get_leaf_id())
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)} · pi-tui session</title><style>{_CSS}</style></head><body><main>"
        f'<h1>{_e(title)}</h1><dl class="meta">{meta}</dl>'
        f"<h2>Conversation (active branch)</h2>{conversation}"
        f"<h2>Tree (all branches)</h2>{tree}"
        "</main></body></html>\n"
    )


def export_session_html(session: str | Path | SessionManager, out_path: str | Path | None = None) -> Path:
    """Write the export page and return where it went.

    Args:
        session: a session file (opened read-only, never locked or modified) or an open manager.
        out_path: the page to write; default ``pi-session-<session file name>.html`` in the cwd.
    """
    if isinstance(session, SessionManager):
        manager, owned = session, False
    else:
        manager, owned = SessionManager.open(Path(session), read_only=True), True
    try:
        page = render_session_html(manager)
        stem = manager.path.stem if manager.path is not None else manager.id
    finally:
        if owned:
            manager.close()
    target = Path(out_path) if out_path is not None else Path.cwd() / f"pi-session-{stem}.html"
    from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

    # Whole or not at all: a full disk leaves an earlier export of that name as it was.
    replace_file_bytes(target, page.encode("utf-8"))
    return target
