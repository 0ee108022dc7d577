"""The loopback HTTP adapter: a threaded stdlib server that executes the engine's plans faithfully.

Streams go out as HTTP/1.1 chunked ``text/event-stream`` with real pauses between frames, so
delays, socket drops, stalls and client aborts all behave as they would against a real provider.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pi_tui.util.collector import collector_paused

from ._engine import Engine
from ._plan import Plan

__all__ = ["FakeServer"]

log = logging.getLogger(__name__)

ControlHandler = Callable[[str, str, bytes], Plan]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], engine: Engine, control: ControlHandler) -> None:
        super().__init__(address, _Handler)
        self.engine = engine
        self.control = control
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("fake LLM server: error while serving %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _frames_sent = 0

    def setup(self) -> None:
        super().setup()
        # Frames are small separate writes; without this, Nagle plus delayed ACKs add ~40 ms stalls.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("fake LLM server: " + format, *args)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        # The engine holds the cyclic collector off while it decides; an answer that goes out at once
        # is sent before the collector is back, so the collection of what a big request left behind
        # runs after the client has its answer, not between the decision and its first byte. Reading
        # the body (which waits for the client) and an answer with pauses (delays, stalls) happen with
        # the collector on, as the rest of the process runs meanwhile.
        with collector_paused():
            if self.path.startswith("/_fake/"):
                plan = self.server.control(method, self.path, raw)
            else:
                headers = {k.lower(): v for k, v in self.headers.items()}
                plan = self.server.engine.handle(method, self.path, headers, raw)
            if _at_once(plan):
                self._send(plan)
                return
        self._send(plan)

    # -- plan execution --------------------------------------------------------------------------

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.server.stopping.wait(seconds)

    def _drop(self) -> None:
        """Close the socket without finishing the body: the client sees a protocol error."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _headers(self, plan: Plan, extra: dict[str, str]) -> None:
        self.send_response(plan.status)
        for name, value in {**plan.headers, **extra}.items():
            self.send_header(name, value)
        self.end_headers()

    def _send(self, plan: Plan) -> None:
        self._frames_sent = 0
        aborted: int | None = None
        try:
            self._wait(plan.first_byte_delay)
            if plan.frames is None:
                self._send_body(plan)
            else:
                self._send_stream(plan)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            aborted = self._frames_sent
            self.close_connection = True
        finally:
            if plan.seq:
                self.server.engine.note_delivery(plan.seq, self._frames_sent, aborted)

    def _send_body(self, plan: Plan) -> None:
        if plan.end == "drop":
            self._drop()
            return
        if plan.end == "stall":
            self._wait(plan.stall_seconds)
            self._drop()
            return
        body = plan.body or b""
        self._headers(plan, {"content-length": str(len(body))})
        if plan.end == "truncate":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self._drop()
            return
        self.wfile.write(body)
        self.wfile.flush()

    def _send_stream(self, plan: Plan) -> None:
        self._headers(plan, {"transfer-encoding": "chunked", "cache-control": "no-cache"})
        self.wfile.flush()
        for index, frame in enumerate(plan.frames or []):
            if index and plan.frame_delay:
                self._wait(plan.frame_delay)
                if self.server.stopping.is_set():
                    self._drop()
                    return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()
            self._frames_sent += 1
        if plan.end in ("done", "truncate"):
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        elif plan.end == "stall":
            self._wait(plan.stall_seconds)
            self._drop()
        else:
            self._drop()


def _at_once(plan: Plan) -> bool:
    """Whether the whole answer is written without waiting (no delay, no stall)."""
    return plan.first_byte_delay <= 0 and plan.frame_delay <= 0 and plan.end != "stall"


class FakeServer:
    """A running loopback server for a `FakeLLM`; use it as a context manager or call `close`.

    Attributes:
        url: ``http://127.0.0.1:PORT`` (no trailing slash).
        anthropic_base_url: the base URL for ``anthropic.Anthropic`` (no ``/v1``).
        openai_base_url: the base URL for ``openai.OpenAI`` (ends in ``/v1``).
        gemini_base_url: the Gemini API base URL (ends in ``/v1beta``, as pi's ``google`` provider has it).
        azure_base_url: Azure OpenAI's v1 base URL (``…/openai/v1``; requests need ``?api-version=v1``
            and the key in ``api-key``).
        mistral_base_url: the base URL for Mistral's chat API (``…/mistral``: the fake tells it from Chat
            Completions by that prefix).
        bedrock_base_url: the Bedrock runtime endpoint (``…/model/{id}/converse-stream`` below it).
        pi_messages_base_url: the base URL for pi's own protocol (``…/pi/v1``; Radius's ``/v1/messages``
            is Anthropic's path, so the fake serves it under /pi).
        token_url: the fake Google OAuth token endpoint (``token_uri`` of a fake credentials file).
        port: the bound port.
    """

    def __init__(
        self, engine: Engine, control: ControlHandler, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._server = _Server((host, port), engine, control)
        self.port: int = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self.anthropic_base_url = self.url
        self.openai_base_url = f"{self.url}/v1"
        self.gemini_base_url = f"{self.url}/v1beta"
        self.mistral_base_url = f"{self.url}/mistral"
        self.bedrock_base_url = self.url
        self.azure_base_url = f"{self.url}/openai/v1"
        self.pi_messages_base_url = f"{self.url}/pi/v1"
        self.token_url = f"{self.url}/token"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-llm-server",
            daemon=True,
        )
        self._thread.start()
        self._closed = False

    def env(self, api_key: str = "fake-key") -> dict[str, str]:
        """Environment variables that point both SDKs (and a subprocess agent) at this server."""
        return {
            "ANTHROPIC_BASE_URL": self.anthropic_base_url,
            "ANTHROPIC_API_KEY": api_key,
            "OPENAI_BASE_URL": self.openai_base_url,
            "OPENAI_API_KEY": api_key,
            "GEMINI_API_KEY": api_key,
        }

    def close(self) -> None:
        """Stop serving: release stalled responses, close open connections, free the port."""
        if self._closed:
            return
        self._closed = True
        self._server.stopping.set()
        self._server.shutdown()
        with self._server.connections_lock:
            connections = list(self._server.connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
