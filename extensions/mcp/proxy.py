"""The proxy tool ``mcp``: one tool, one fixed schema, to search, describe and call every server's tools.

Its name, description and parameters never change — not when a server connects, disconnects or
changes its tool list — so the prompt-cache prefix is never touched by MCP activity. Everything that
varies (server names, tool lists) reaches the model only as tool *results*.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pi_tui.extensions.api import ImageContent, TextContent

from .servers import ServerPool, ToolInfo, tokens_of

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["NAME", "DESCRIPTION", "PARAMETERS", "proxy_tokens", "find_tool", "search", "describe",
           "status_text", "result_text", "plain_result_text"]  # fmt: skip

NAME = "mcp"
MAX_RESULT_CHARS = 50_000
SEARCH_LIMIT = 20

DESCRIPTION = """Use tools of the user's MCP servers (Model Context Protocol).
- {} lists the servers and how many tools each has.
- {"search": "words"} finds tools by name and description ("" lists every tool; add "server" to narrow).
- {"describe": "server/tool"} shows a tool's description and its JSON parameters.
- {"tool": "server/tool", "args": {...}} calls a tool (describe it first unless you know its parameters).
Servers start on first use; a slow first call is normal."""

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "search": {"type": "string", "description": "Words to look for in tool names and descriptions"},
        "describe": {
            "type": "string",
            "description": "A tool to describe: server/tool (or a unique tool name)",
        },
        "tool": {"type": "string", "description": "A tool to call: server/tool (or a unique tool name)"},
        "args": {"type": "object", "description": "The arguments of the call"},
        "server": {"type": "string", "description": "Limit search to this server"},
    },
}


def proxy_tokens() -> int:
    """What the proxy tool's definition costs in every request."""
    return tokens_of({"name": NAME, "description": DESCRIPTION, "parameters": PARAMETERS})


def _norm(name: str) -> str:
    return name.lower().replace("-", "_")


def find_tool(pool: ServerPool, ref: str, server: str | None = None) -> ToolInfo | str:
    """The tool ``ref`` names (``server/tool``, ``server:tool`` or a bare unique name), or why not."""
    server_name, _, tool_name = ref.rpartition("/") if "/" in ref else ref.rpartition(":")
    server_name = server_name or (server or "")
    candidates = [t for t in pool.all_tools() if _norm(t.name) == _norm(tool_name)]
    if not candidates and not server_name:  # pi-mcp-adapter's prefixed form: server_tool
        candidates = [t for t in pool.all_tools() if _norm(f"{t.server}_{t.name}") == _norm(tool_name)]
    if server_name:
        candidates = [t for t in candidates if _norm(t.server) == _norm(server_name)]
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        return f'"{ref}" is offered by several servers: ' + ", ".join(
            f"{t.server}/{t.name}" for t in candidates
        )
    close = [f"{t.server}/{t.name}" for t in pool.all_tools() if _norm(tool_name) in _norm(t.name)][:5]
    hint = f" Similar: {', '.join(close)}." if close else ' Search with {"search": "..."}.'
    return f'No MCP tool "{ref}".{hint}'


def search(pool: ServerPool, query: str, server: str | None = None) -> str:
    """Tools whose name or description holds every word of ``query``, best matches first."""
    words = [w for w in re.split(r"\W+", query.lower()) if w]
    scored: list[tuple[int, ToolInfo]] = []
    for tool in pool.all_tools():
        if server and _norm(tool.server) != _norm(server):
            continue
        name, text = tool.name.lower(), f"{tool.server} {tool.name} {tool.description}".lower()
        if all(w in text for w in words):
            scored.append((sum(3 if w in name else 1 for w in words), tool))
    scored.sort(key=lambda pair: (-pair[0], pair[1].server, pair[1].name))
    if not scored:
        return f'No MCP tool matches "{query}".' + (
            "" if pool.all_tools() else " No server offered any tools."
        )
    lines = [f"{t.server}/{t.name}: {_first_line(t.description)}" for _, t in scored[:SEARCH_LIMIT]]
    more = len(scored) - SEARCH_LIMIT
    if more > 0:
        lines.append(f"… and {more} more; narrow the search.")
    return "\n".join(lines)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no description)"
    return line if len(line) <= 160 else line[:159] + "…"


def describe(tool: ToolInfo) -> str:
    """A tool's full description and parameter schema."""
    schema = json.dumps(tool.input_schema, indent=1, ensure_ascii=False)
    return f"{tool.server}/{tool.name}\n{tool.description.strip()}\n\nParameters (JSON schema):\n{schema}"


def status_text(pool: ServerPool) -> str:
    """One line per server for the model: name, status, tool count."""
    if not pool.servers:
        return "No MCP servers are configured."
    lines = []
    for server in pool.servers.values():
        count = (
            f"{len(server.tools)} tools"
            if server.tools or server.status == "connected"
            else "tools not listed yet"
        )
        reason = f" ({server.reason})" if server.reason else ""
        lines.append(f"{server.name}: {server.status}{reason}, {count}")
    return "\n".join(lines)


def result_text(result: CallToolResult) -> tuple[list[TextContent | ImageContent], bool]:
    """A ``CallToolResult`` as pi-tui content blocks (text and images), and whether the server called it
    an error. Audio is named, not sent; a long text is cut at ``MAX_RESULT_CHARS``."""
    from mcp_types import EmbeddedResource, ResourceLink, TextResourceContents
    from mcp_types import ImageContent as McpImage
    from mcp_types import TextContent as McpText

    blocks: list[TextContent | ImageContent] = []
    for item in result.content:
        if isinstance(item, McpText):
            blocks.append(_text(item.text))
        elif isinstance(item, McpImage):
            blocks.append(ImageContent(data=item.data, mime_type=item.mime_type))
        elif isinstance(item, EmbeddedResource):
            body = item.resource.text if isinstance(item.resource, TextResourceContents) else "(binary)"
            blocks.append(_text(f"[resource {item.resource.uri}]\n{body}"))
        elif isinstance(item, ResourceLink):
            blocks.append(_text(f"[resource link {item.uri}] {item.name}"))
        else:
            blocks.append(_text(f"[{item.type} content]"))
    if not blocks and result.structured_content is not None:
        blocks.append(_text(json.dumps(result.structured_content, ensure_ascii=False)))
    if not blocks:
        blocks.append(_text("(no content)"))
    return blocks, bool(result.is_error)


def plain_result_text(result: dict[str, Any]) -> tuple[list[TextContent | ImageContent], bool]:
    """``result_text`` for a plain JSON ``tools/call`` result (``firstcall.plain_call_result`` holds: text,
    image and audio parts only), giving the same blocks the SDK's model of it would."""
    blocks: list[TextContent | ImageContent] = []
    for item in result["content"]:
        if item["type"] == "text":
            blocks.append(_text(item["text"]))
        elif item["type"] == "image":
            blocks.append(ImageContent(data=item["data"], mime_type=item["mimeType"]))
        else:
            blocks.append(_text(f"[{item['type']} content]"))
    if not blocks and result.get("structuredContent") is not None:
        blocks.append(_text(json.dumps(result["structuredContent"], ensure_ascii=False)))
    if not blocks:
        blocks.append(_text("(no content)"))
    return blocks, bool(result.get("isError", False))


def _text(text: str) -> TextContent:
    if len(text) <= MAX_RESULT_CHARS:
        return TextContent(text=text)
    cut = len(text) - MAX_RESULT_CHARS
    return TextContent(
        text=text[:MAX_RESULT_CHARS] + f"\n\n[{cut} more characters cut: ask the tool for less]"
    )
