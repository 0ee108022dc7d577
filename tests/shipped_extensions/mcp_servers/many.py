"""A test MCP server with many tools shaped like a browser-automation server's (stdio).

Run: ``python many.py COUNT PREFIX``. Each tool takes a selector, a timeout and options, and carries a
paragraph of description, so its definition costs about as much as a real server's tools (~200 tokens).
"""

from __future__ import annotations

import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer

VERBS = ["click", "type", "hover", "drag", "select", "upload", "scroll", "wait", "read", "capture"]


def build(count: int, prefix: str) -> MCPServer:
    app = MCPServer(prefix)
    for i in range(count):
        verb = VERBS[i % len(VERBS)]

        def tool(
            selector: str,
            timeout_ms: int = 5000,
            frame: str | None = None,
            mode: Literal["visible", "attached", "any"] = "visible",
            retries: int = 0,
        ) -> str:
            return f"{prefix} tool done on {selector}"

        app.add_tool(
            tool,
            name=f"{prefix}_{verb}_{i}",
            description=(
                f"Performs the '{verb}' action number {i} on the element that the CSS or text selector "
                "points at, in the current page or the given frame. Waits until the element is in the "
                "requested state, retries when the page is still loading, and reports what happened, "
                "including the element's role, accessible name and bounding box, so the next step can "
                "be planned without taking a screenshot."
            ),
        )
    return app


if __name__ == "__main__":
    build(int(sys.argv[1]), sys.argv[2]).run()
