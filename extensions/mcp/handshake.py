"""A stdio server's ``initialize`` exchange, sent as soon as the server is spawned, while the SDK still loads.

A first call waits for two things: the server's start-up and the SDK's import (~0.2 s of CPU, pydantic
building the protocol types). A server that starts faster than that (the reference Node servers) used to
sit idle, ready, until the import was done and the SDK's session sent ``initialize``: one more round trip
after the import, in the wait of the first call. ``start`` sends the same request the moment the process
exists, with nothing of the SDK imported: plain JSON, the protocol version read from the SDK's own
``mcp_types/version.py`` (a module of constants, executed alone, not its package). The answer waits,
unchecked, until the SDK is loaded; ``Early.adopt`` then checks it as the SDK's own ``initialize`` does (the
result model of the protocol era, the version among those a handshake may agree on) and hands it to the
session through ``ClientSession.adopt``, the SDK's way to install a result obtained elsewhere. What comes
after (the roots the server asks for, the listings, the calls) is the SDK's session, or, when the SDK is
not loaded yet, plain JSON-RPC up to the first call's answer (``firstcall.py``), the session after that.

``notifications/initialized`` goes out as soon as the answer is in, so a server that asks for the client's
roots right after it (the reference filesystem server does) asks while the SDK still loads; the session
answers once it exists.

Whatever the server writes besides the answer is kept, in order, for the session (``Early.rest``); a line
that is not JSON ends the early exchange at once, so the session reports it as before. When there is no
early exchange (the version module is not where this SDK keeps it), the session's own ``initialize`` runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import json
import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_tui import __version__

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp_types import InitializeResult

__all__ = ["CLIENT_INFO", "INITIALIZE_ID", "READ_SIZE", "Early", "Versions", "frame", "initialize_params", "start",
           "versions"]  # fmt: skip

CLIENT_INFO = {"name": "pi-tui", "version": __version__}
# The SDK's session numbers its own requests from 1: the early request's answer can never be taken for one
# of them (it is consumed before the session exists anyway).
INITIALIZE_ID = 0
READ_SIZE = 1 << 16  # bytes asked of a server's stdout at a time


@dataclass(frozen=True)
class Versions:
    """What the SDK says about protocol versions: the one a client offers, those a handshake may agree on."""

    latest: str
    accepted: tuple[str, ...]


@functools.cache
def versions() -> Versions | None:
    """The SDK's handshake versions, without importing the SDK (None when they are not where this SDK keeps them).

    ``mcp_types.version`` defines constants only; importing it the usual way would run ``mcp_types``'
    ``__init__`` first, which builds every protocol type. Once the package is imported it is read from there.
    """
    loaded = sys.modules.get("mcp_types.version")
    module: types.ModuleType | None = loaded
    if module is None:
        try:
            spec = importlib.util.find_spec("mcp_types")  # top-level: found, not imported
        except (ImportError, ValueError):
            return None
        folders = spec.submodule_search_locations if spec is not None else None
        if not folders:
            return None
        path = f"{list(folders)[0]}/version.py"
        single = importlib.util.spec_from_file_location("mcp_types.version", path)
        if single is None or single.loader is None:
            return None
        module = importlib.util.module_from_spec(single)
        try:
            single.loader.exec_module(module)
        except (OSError, ImportError, SyntaxError):
            return None
    latest = module.__dict__.get("LATEST_HANDSHAKE_VERSION")
    accepted = module.__dict__.get("HANDSHAKE_PROTOCOL_VERSIONS")
    if not isinstance(latest, str) or not isinstance(accepted, tuple):
        return None
    return Versions(latest, tuple(str(v) for v in accepted))


def initialize_params(version: str) -> dict[str, Any]:
    """The ``initialize`` params pi-tui's sessions send: the roots capability (the session answers
    ``roots/list`` with the project), nothing else, as the SDK declares for a session with a roots callback."""
    return {
        "protocolVersion": version,
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": CLIENT_INFO,
    }


@dataclass(frozen=True)
class Early:
    """The early exchange: the server's answer to ``initialize`` (None: none came, see ``rest``), the bytes
    it wrote before or after it (for the session to read first) and the versions it was asked with."""

    answer: dict[str, Any] | None
    rest: bytes
    versions: Versions

    def adopt(self, session: ClientSession) -> InitializeResult:
        """Check the answer as the SDK's ``initialize`` checks its own and install it in ``session``.

        Raises:
            RuntimeError: no answer came, the server answered with an error, or it agreed on no version
                the SDK supports.
            pydantic.ValidationError: the result is not an ``initialize`` result of the protocol.
        """
        from mcp_types import InitializeResult
        from mcp_types.methods import validate_server_result

        answer = self.answer or {}
        error = answer.get("error")
        if error is not None or "result" not in answer:
            message = error.get("message") if isinstance(error, dict) else None
            raise RuntimeError(str(message or error or "initialize was not answered"))
        raw = answer["result"]
        # Against the result model of the version asked for, as the SDK checks a result before the handshake.
        validate_server_result("initialize", self.versions.latest, raw)
        result = InitializeResult.model_validate(raw, by_name=False)
        if result.protocol_version not in self.versions.accepted:
            raise RuntimeError(f"Unsupported protocol version from the server: {result.protocol_version}")
        session.adopt(result)
        return result


async def start(process: asyncio.subprocess.Process, known: Versions) -> Early:
    """Send ``initialize`` to ``process`` and read its stdout until the answer (then send
    ``notifications/initialized`` if it agreed on a version the SDK accepts), a line that is not JSON, or
    the end of its stdout.
    """
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    request = {"jsonrpc": "2.0", "id": INITIALIZE_ID, "method": "initialize",
               "params": initialize_params(known.latest)}  # fmt: skip
    with contextlib.suppress(OSError):  # a server already gone: the session finds its stdout's end
        stdin.write(frame(request))
        await stdin.drain()
    buffer, scanned = bytearray(), 0  # buffer[:scanned]: whole lines read before the answer, kept
    while True:
        end = buffer.find(b"\n", scanned)
        if end < 0:
            chunk = await stdout.read(READ_SIZE)
            if not chunk:
                return Early(None, bytes(buffer), known)
            buffer += chunk
            continue
        line = bytes(buffer[scanned:end])
        if line.strip():
            try:
                message = json.loads(line)
            except ValueError:  # not JSON: left to the session, which fails the start naming the line
                return Early(None, bytes(buffer), known)
            if _answers_initialize(message):
                result = message.get("result")
                if isinstance(result, dict) and result.get("protocolVersion") in known.accepted:
                    with contextlib.suppress(OSError):
                        stdin.write(frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                        await stdin.drain()
                return Early(message, bytes(buffer[:scanned] + buffer[end + 1 :]), known)
        scanned = end + 1


def _answers_initialize(message: object) -> bool:
    return (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and message.get("id") == INITIALIZE_ID
            and "method" not in message)  # fmt: skip


def frame(message: dict[str, Any]) -> bytes:
    """``message`` as one line of the stdio transport: compact JSON ended by a newline."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"
