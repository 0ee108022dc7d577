"""The SDK session's listings of a server's tools, prompts and resources, as the extension's records; a
filled prompt and a read resource as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .records import PromptInfo, ToolInfo

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp_types import GetPromptResult, ReadResourceResult

__all__ = ["list_prompts", "list_resources", "list_tools", "prompt_text", "resource_text"]


async def list_tools(session: ClientSession, server: str) -> list[ToolInfo]:
    """Every page of the server's tools."""
    tools: list[ToolInfo] = []
    cursor: str | None = None
    from mcp_types import PaginatedRequestParams

    while True:
        result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in result.tools:
            schema = dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
            tools.append(ToolInfo(server, tool.name, tool.description or "", schema))
        cursor = result.next_cursor
        if not cursor:
            return tools


async def list_prompts(session: ClientSession, server: str) -> list[PromptInfo]:
    """The server's prompts (none when it cannot list them)."""
    try:
        result = await session.list_prompts()
    except Exception:  # a server that announces prompts but cannot list them: no prompts
        return []
    return [
        PromptInfo(
            server,
            p.name,
            p.description or "",
            tuple((a.name, bool(a.required)) for a in p.arguments or ()),
        )
        for p in result.prompts
    ]


async def list_resources(session: ClientSession) -> list[tuple[str, str]]:
    """The server's resources as (uri, name or description), at most about a thousand."""
    from mcp_types import PaginatedRequestParams

    found: list[tuple[str, str]] = []
    cursor: str | None = None
    try:
        while True:
            result = await session.list_resources(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            found += [(str(r.uri), r.description or r.name or "") for r in result.resources]
            cursor = result.next_cursor
            if not cursor or len(found) > 1000:
                return found
    except Exception:  # a server that announces resources but cannot list them: none to complete
        return found


def prompt_text(result: GetPromptResult) -> str:
    """A filled prompt's text: its messages' text, one after another (other content named, not inlined)."""
    from mcp_types import EmbeddedResource, TextContent, TextResourceContents

    texts = []
    for message in result.messages:
        content = message.content
        if isinstance(content, TextContent):
            texts.append(content.text)
        elif isinstance(content, EmbeddedResource) and isinstance(content.resource, TextResourceContents):
            texts.append(content.resource.text)
        else:  # an image, audio, a binary resource or a link: named, not inlined
            texts.append(f"[{content.type}]")
    return "\n\n".join(texts)


def resource_text(result: ReadResourceResult) -> str:
    """A read resource's text (binary parts named, not decoded)."""
    from mcp_types import TextResourceContents

    parts = [
        item.text if isinstance(item, TextResourceContents) else f"[binary {item.mime_type or 'data'}]"
        for item in result.contents
    ]
    return "\n".join(parts)
