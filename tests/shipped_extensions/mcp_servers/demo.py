"""A test MCP server on the SDK's own server classes, with tools that misbehave on request.

Run: ``python demo.py`` (stdio), ``python demo.py http PORT`` (streamable HTTP on 127.0.0.1:PORT/mcp) or
``python demo.py sse PORT`` (the old SSE transport on 127.0.0.1:PORT/sse).
"""

from __future__ import annotations

import os
import signal
import sys
import time

from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("demo")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def echo(text: str) -> str:
    """Echo the text back, with the server's working directory and one environment variable."""
    return f"{text} | cwd={os.getcwd()} | DEMO_TOKEN={os.environ.get('DEMO_TOKEN', '')}"


@app.tool()
def hang(seconds: float = 3600) -> str:
    """Sleep (blocking the whole server, deaf to its stdin closing) for a long time."""
    if os.environ.get("DEMO_PID_FILE"):
        with open(os.environ["DEMO_PID_FILE"] + ".hanging", "w") as marker:
            marker.write("yes")
    time.sleep(seconds)
    return "woke up"


@app.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    print("demo: crashing now", file=sys.stderr, flush=True)
    os._exit(3)


@app.tool()
def huge(size: int = 200_000) -> str:
    """Return a very long text."""
    return "x" * size


@app.tool()
def leak() -> str:
    """Return a text holding something that looks like a secret."""
    return "config: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@app.resource("demo://greeting")
def greeting() -> str:
    """A short text resource."""
    return "Hello from the demo resource"


@app.prompt()
def review(code: str, focus: str = "bugs") -> str:
    """Ask for a code review."""
    return f"Please review this code for {focus}:\n{code}"


@app.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress at each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


@app.tool()
async def grow(ctx: Context) -> str:
    """Add a tool called "grown" and tell the client that the tool list changed."""
    app.add_tool(lambda: "I am new", name="grown", description="A tool that appeared during the session.")
    await ctx.session.send_tool_list_changed()
    return "grew"


if __name__ == "__main__":
    if os.environ.get("DEMO_IGNORE_SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("DEMO_PID_FILE"):
        with open(os.environ["DEMO_PID_FILE"], "a") as pids:
            pids.write(f"{os.getpid()}\n")
    print("demo server starting", file=sys.stderr, flush=True)
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True)
    elif len(sys.argv) > 2 and sys.argv[1] == "sse":
        app.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
