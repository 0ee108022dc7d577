"""A stdio server's first exchange in plain JSON-RPC, before the SDK is imported.

The SDK's import (~0.2 s of CPU) used to sit on the way to a lazy server's first call, competing with the
server's own start-up for the cores. ``Exchange`` talks to the server over its pipes with nothing of the
SDK: after ``handshake.start``'s ``initialize``, it lists the tools, answers the roots the server asks
for and the pings it sends, pings it back while it applies the roots, and makes the first ``tools/call``.
Once that call is answered (or something needs the SDK's session), ``handover`` stops reading and returns
what the server wrote meanwhile, for the SDK session that takes the pipes over from there.

Only well-formed, ordinary answers are handled here (``plain_call_result``); anything else is left to
the SDK's own checks, so what a user sees does not depend on which of the two read the answer. Request
ids are strings (``pi-tui-early-N``): the SDK numbers its own with integers, so a late answer to one of
ours can never be taken for one of the session's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from .handshake import READ_SIZE, frame

__all__ = ["Closed", "Exchange", "PlainTool", "Progress", "RpcError", "check_structured", "plain_call_result",
           "plain_initialize", "plain_tools"]  # fmt: skip

Progress = Callable[[float, float | None, str | None], None]
PlainTool = tuple[
    str, str, dict[str, Any], dict[str, Any] | None
]  # name, description, input and output schemas


class Closed(ConnectionError):
    """The server's stdout ended (it exited) before it answered."""


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: object, message: object) -> None:
        super().__init__(str(message))
        self.code = code
        self.message = message


class Exchange:
    """Plain JSON-RPC with ``process`` until ``handover``.

    Args:
        process: the server, its ``initialize`` already answered.
        already_read: what was read from its stdout past that answer.
        roots: the ``roots/list`` result to answer with (as the SDK session would write it).
        on_roots_asked / on_roots_answered: told each roots request's id when it arrives / once answered.
        on_garbage: told each stdout line that is not JSON-RPC (it is not passed on).
    """

    def __init__(self, process: asyncio.subprocess.Process, already_read: bytes, roots: dict[str, Any],
                 on_roots_asked: Callable[[object], None], on_roots_answered: Callable[[object], None],
                 on_garbage: Callable[[str], None]) -> None:  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        self._stdin, self._stdout = process.stdin, process.stdout
        self._buffer = bytearray(already_read)
        self._roots = roots
        self._on_roots_asked, self._on_roots_answered = on_roots_asked, on_roots_answered
        self._on_garbage = on_garbage
        self._kept: list[bytes] = []  # lines for the SDK session, in order
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str, Progress] = {}
        self._next = 0
        self._closed = False
        self._reader: asyncio.Task[None] | None = None
        self.called = False  # the first call went out: the SDK session takes the next ones
        self.wanted = asyncio.Event()  # set when the SDK session is wanted (the first call is over, …)

    def start(self) -> None:
        """Start reading the server's stdout."""
        self._reader = asyncio.get_running_loop().create_task(self._read(), name="mcp-first-exchange")

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      on_progress: Progress | None = None) -> dict[str, Any]:  # fmt: skip
        """Send ``method`` and return its result (a JSON object).

        Raises:
            Closed: the server's stdout ended first.
            RpcError: it answered with an error.
        """
        self._next += 1
        ident = f"pi-tui-early-{self._next}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if on_progress is not None:  # as the SDK does for a call with a progress callback: the id as token
            params = {**(params or {}), "_meta": {"progressToken": ident}}
            self._progress[ident] = on_progress
        if params is not None:
            message["params"] = params
        if self._closed:
            raise Closed("Connection closed")
        answer = self._pending[ident] = asyncio.get_running_loop().create_future()
        try:
            self._write(message)
            await self._stdin.drain()
            reply = await answer
        finally:
            self._pending.pop(ident, None)
            self._progress.pop(ident, None)
        error = reply.get("error")
        if "result" not in reply or error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            raise RpcError(code, error.get("message") if isinstance(error, dict) else error)
        result = reply["result"]
        if not isinstance(result, dict):
            raise RpcError(None, f"{method}: the result is not an object")
        return result

    async def list_tools(self) -> list[PlainTool] | None:
        """Every page of ``tools/list``; None when a page is not of the plain shape (``plain_tools``)."""
        found: list[PlainTool] = []
        cursor: str | None = None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            page = plain_tools(result)
            if page is None:
                return None
            found += page
            cursor = result.get("nextCursor")
            if not cursor:
                return found

    async def handover(self) -> bytes:
        """Stop reading (once no request of ours is waiting) and return what the SDK session reads first."""
        while self._pending and not self._closed:
            await asyncio.wait(list(self._pending.values()))
        if self._reader is not None:
            self._reader.cancel()  # waiting in ``read``: what is not read stays in the stream
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        return b"".join(line + b"\n" for line in self._kept) + bytes(self._buffer)

    def _write(self, message: dict[str, Any]) -> None:
        self._stdin.write(frame(message))

    async def _read(self) -> None:
        try:
            while True:
                end = self._buffer.find(b"\n")
                if end < 0:
                    chunk = await self._stdout.read(READ_SIZE)
                    if not chunk:
                        break
                    self._buffer += chunk
                    continue
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if line.strip():
                    self._dispatch(line)
        except (OSError, ConnectionError):
            pass
        self._closed = True
        self.wanted.set()  # the server is gone: the SDK session finds the end and reports it as before
        for future in self._pending.values():
            if not future.done():
                future.set_exception(Closed("Connection closed"))

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._on_garbage(line.decode(errors="replace"))
            return
        method, ident = message.get("method"), message.get("id")
        if method is None:  # an answer: ours, or one nobody waits for (dropped, as the session drops it)
            future = self._pending.get(ident) if isinstance(ident, str) else None
            if future is not None and not future.done():
                future.set_result(message)
            return
        if ident is not None and method in ("roots/list", "ping"):
            if method == "roots/list":
                self._on_roots_asked(ident)
            with contextlib.suppress(OSError):
                self._write(
                    {"jsonrpc": "2.0", "id": ident, "result": self._roots if method == "roots/list" else {}}
                )
            if method == "roots/list":
                self._on_roots_answered(ident)
            return
        if method == "notifications/progress" and ident is None:
            params = message.get("params")
            if isinstance(params, dict) and _progress(params, self._progress):
                return
        self._kept.append(line)  # anything else: the SDK session handles it once it exists


def _progress(params: dict[str, Any], listeners: dict[str, Progress]) -> bool:
    """Report a progress notification to the call it belongs to; False when it belongs to none of ours."""
    token, done = params.get("progressToken"), params.get("progress")
    listener = listeners.get(token) if isinstance(token, str) else None
    if listener is None or not isinstance(done, int | float) or isinstance(done, bool):
        return False
    total, text = params.get("total"), params.get("message")
    total_n = float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None
    listener(float(done), total_n, text if isinstance(text, str) else None)
    return True


def plain_tools(result: dict[str, Any]) -> list[PlainTool] | None:
    """The tools of a ``tools/list`` result as (name, description, input schema, output schema), or None
    when any tool is not the plain shape read here (the SDK's checks then decide)."""
    tools = result.get("tools")
    if not isinstance(tools, list) or not set(result) <= {"tools", "nextCursor"}:
        return None
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        return None
    found = []
    for tool in tools:
        if (
            not isinstance(tool, dict)
            or not isinstance(tool.get("name"), str)
            or not set(tool) <= _TOOL_FIELDS
        ):
            return None
        if not isinstance(tool.get("title", ""), str) or not _plain_hints(tool.get("annotations", {})):
            return None
        execution = tool.get("execution", {})
        if not isinstance(execution, dict) or not set(execution) <= {"taskSupport"}:
            return None
        if execution.get("taskSupport", "forbidden") not in _TASK_SUPPORT:
            return None
        description, schema, output = (
            tool.get("description"),
            tool.get("inputSchema"),
            tool.get("outputSchema"),
        )
        if (description is not None and not isinstance(description, str)) or not isinstance(schema, dict):
            return None
        if schema.get("type") != "object" or (output is not None and not isinstance(output, dict)):
            return None
        found.append((tool["name"], description or "", schema, output))
    return found


_TOOL_FIELDS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution"}
_TASK_SUPPORT = ("forbidden", "optional", "required")
_HINTS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


def _plain_hints(hints: object) -> bool:
    return (
        isinstance(hints, dict)
        and set(hints) <= _HINTS
        and all(
            isinstance(value, str) if key == "title" else isinstance(value, bool)
            for key, value in hints.items()
        )
    )


_PLAIN_CONTENT = {"text": {"text"}, "image": {"data", "mimeType"}, "audio": {"data", "mimeType"}}


def plain_call_result(result: dict[str, Any]) -> bool:
    """Whether a ``tools/call`` result is of the plain shape ``proxy.plain_result_text`` converts: text,
    image and audio parts with exactly their fields as strings, ``isError`` a boolean, ``structuredContent``
    an object. Anything else (resources, links, annotations, ``_meta``) is left to the SDK's models."""
    if not set(result) <= {"content", "isError", "structuredContent"} or not isinstance(
        result.get("content"), list
    ):
        return False
    if not isinstance(result.get("isError", False), bool):
        return False
    if not isinstance(result.get("structuredContent", {}), dict):
        return False
    for item in result["content"]:
        kind = item.get("type") if isinstance(item, dict) else None
        fields = _PLAIN_CONTENT.get(kind) if isinstance(kind, str) else None
        if (
            fields is None
            or set(item) != fields | {"type"}
            or not all(isinstance(item[f], str) for f in fields)
        ):
            return False
    return True


def plain_initialize(answer: dict[str, Any] | None, accepted: tuple[str, ...]) -> dict[str, Any] | None:
    """The ``initialize`` result when it is of the plain shape (an agreed version, capabilities and server
    info as objects), else None: the SDK's own check (``handshake.Early.adopt``) then decides at once."""
    result = (answer or {}).get("result")
    if not isinstance(result, dict) or (answer or {}).get("error") is not None:
        return None
    info = result.get("serverInfo")
    if result.get("protocolVersion") not in accepted or not isinstance(result.get("capabilities"), dict):
        return None
    if (
        not isinstance(info, dict)
        or not isinstance(info.get("name"), str)
        or not isinstance(info.get("version"), str)
    ):
        return None
    return result


def check_structured(name: str, schema: dict[str, Any], result: dict[str, Any]) -> None:
    """Check a tool's structured content against its output schema, as the SDK's session does.

    Raises:
        RuntimeError: with the SDK's words, when it is missing or does not conform, or the schema is invalid.
    """
    from jsonschema import SchemaError
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    if "structuredContent" not in result:
        raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
    kind = validator_for(schema)
    try:
        kind.check_schema(schema)
    except SchemaError as exc:
        raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from None
    validator = kind(schema, registry=Registry())
    try:
        error = best_match(validator.iter_errors(result["structuredContent"]))
    except Unresolvable as exc:
        raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from exc
    if error is not None:
        raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}") from error
