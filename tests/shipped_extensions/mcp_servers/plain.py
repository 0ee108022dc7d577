"""A test MCP server in bare JSON-RPC (no SDK: it starts in a few ms), with tools that answer in every way
a first call must handle: text, an image, audio, a resource, structured content (valid or not), an error
result, a JSON-RPC error, progress, the client's roots or a ping asked for during the call, a changed
tool list, an exit mid-call and a call never answered.

Run: ``python plain.py`` (stdio).
"""

from __future__ import annotations

import json
import os
import sys

OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    {"name": name, "description": f"The {name} case.", "inputSchema": OBJECT}
    for name in ("text", "image", "audio", "resource", "error_result", "rpc_error", "progress", "roots", "ping",
                 "grow", "crash", "hang", "empty")
]  # fmt: skip
STRUCTURED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOOLS += [
    {"name": "structured", "inputSchema": OBJECT, "outputSchema": STRUCTURED},
    {"name": "bad_structured", "inputSchema": OBJECT, "outputSchema": STRUCTURED},
    {"name": "no_structured", "inputSchema": OBJECT, "outputSchema": STRUCTURED},
]
GROWN = {"name": "grown", "description": "Appeared during the session.", "inputSchema": OBJECT}


def send(message: dict[str, object]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def text(value: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}]}


def answer(rid: object, name: str, waiting: dict[str, tuple[object, str]]) -> None:
    results: dict[str, dict[str, object]] = {
        "text": text("plain text"),
        "image": {
            "content": [
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "text", "text": "and a caption"},
            ]
        },  # fmt: skip
        "audio": {"content": [{"type": "audio", "data": "aGVsbG8=", "mimeType": "audio/wav"}]},
        "resource": {
            "content": [
                {"type": "resource", "resource": {"uri": "file:///tmp/a.txt", "text": "inside"}},
                {"type": "resource_link", "uri": "https://example.com", "name": "site"},
            ]
        },  # fmt: skip
        "error_result": {"content": [{"type": "text", "text": "it went wrong"}], "isError": True},
        "structured": {"content": [], "structuredContent": {"n": 3}},
        "bad_structured": {"content": [{"type": "text", "text": "x"}], "structuredContent": {"n": "three"}},
        "no_structured": text("no structure"),
        "empty": {"content": []},
    }
    if name in results:
        send({"jsonrpc": "2.0", "id": rid, "result": results[name]})
    elif name == "rpc_error":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "the arguments are wrong"}})
    elif name == "progress":
        token = waiting.pop("token", (None, ""))[0]
        for step in (1, 2):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": step, "total": 2, "message": f"step {step}"}})  # fmt: skip
        send({"jsonrpc": "2.0", "id": rid, "result": text("progressed")})
    elif name in ("roots", "ping"):
        send({"jsonrpc": "2.0", "id": f"ask-{name}", "method": "roots/list" if name == "roots" else "ping"})
        waiting[f"ask-{name}"] = (rid, name)
    elif name == "grow":
        TOOLS.append(GROWN)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": rid, "result": text("grew")})
    elif name == "grown":
        send({"jsonrpc": "2.0", "id": rid, "result": text("I am new")})
    elif name == "crash":
        os._exit(3)
    # "hang": never answered


def main() -> None:
    print("plain server starting", file=sys.stderr, flush=True)
    pending = b""
    waiting: dict[str, tuple[object, str]] = {}
    while chunk := os.read(0, 65536):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in filter(None, lines):
            message = json.loads(line)
            method, rid = message.get("method"), message.get("id")
            if method is None and rid in waiting:  # the client's answer to our roots/list or ping
                call, name = waiting.pop(rid)
                send(
                    {"jsonrpc": "2.0", "id": call, "result": text(f"{name}: {json.dumps(message['result'])}")}
                )
            elif method == "initialize":
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "serverInfo": {"name": "plain", "version": "1"}, "capabilities": {"tools": {"listChanged": True}}}})  # fmt: skip
            elif method == "tools/list":
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
            elif method == "ping":
                send({"jsonrpc": "2.0", "id": rid, "result": {}})
            elif method == "tools/call":
                token = (message["params"].get("_meta") or {}).get("progressToken")
                waiting["token"] = (token, "")
                answer(rid, message["params"]["name"], waiting)


if __name__ == "__main__":
    main()
