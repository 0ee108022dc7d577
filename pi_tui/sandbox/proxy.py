"""The host-side HTTP(S) proxy that lets sandboxed commands reach the allowed hosts, and nothing else.

Sandboxed commands have a network namespace with only loopback. When ``sandbox.allowNetwork`` names
hosts, this proxy listens on a Unix socket in the private temp dir (bound into the sandbox); a small
bridge inside (`pi_tui.sandbox.bridge`) listens on ``127.0.0.1`` there and forwards each connection to
it, and ``HTTP_PROXY``/``HTTPS_PROXY`` point at the bridge. The proxy reads the first request:
``CONNECT host:port`` (HTTPS, any TLS stays end to end) or an absolute-form ``GET http://host/…``,
checks the host against the allow list, and either relays bytes both ways or answers ``403`` with a
reason naming the host. A program that ignores the proxy variables gets no network at all.

Threads, not the event loop: the proxy must serve while the agent's loop waits on the command, and
it outlives any one loop (tests and ``/reload``).
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from .policy import host_allowed

__all__ = ["AllowListProxy"]

_MAX_HEADER = 64 * 1024


class AllowListProxy:
    """An HTTP proxy on a Unix socket allowing only hosts that ``hosts()`` matches.

    Args:
        socket_path: Where to listen.
        hosts: The current allow list (read per connection, so a host allowed mid-session counts).
    """

    def __init__(self, socket_path: Path, hosts: Callable[[], Sequence[str]]) -> None:
        self.socket_path = socket_path
        self._hosts = hosts
        self.blocked: list[str] = []
        """Hosts refused so far, newest last (the refusal note names the last one)."""
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(str(socket_path), Handler)
        self._server.daemon_threads = True
        # a short poll interval: close() (shutdown) waits until the serving loop next looks, 0.5 s by default
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="pi-sandbox-proxy",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop listening and remove the socket."""
        self._server.shutdown()
        self._server.server_close()
        with contextlib.suppress(OSError):
            self.socket_path.unlink()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < _MAX_HEADER:
            chunk = client.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split()
        if len(parts) < 3:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        method, target = parts[0].upper(), parts[1]
        host, port = _target(method, target)
        if host is None:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        if not host_allowed(host, self._hosts()):
            self.blocked.append(host)
            reason = f"sandbox proxy: {host} is not on the allow list"
            body = (reason + " (sandbox.allowNetwork)\n").encode()
            client.sendall(
                f"HTTP/1.1 403 {reason}\r\nX-Proxy-Error: blocked-by-allowlist\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            return
        try:
            upstream = socket.create_connection((host, port), timeout=30)
        except OSError as exc:
            client.sendall(f"HTTP/1.1 502 {exc.strerror or exc}\r\nContent-Length: 0\r\n\r\n".encode())
            return
        upstream.settimeout(None)
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                rest = head.split(b"\r\n\r\n", 1)[1]
                if rest:
                    upstream.sendall(rest)
            else:
                upstream.sendall(head)
            _relay(client, upstream)


def _target(method: str, target: str) -> tuple[str | None, int]:
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (host.strip("[]") or None), int(port) if port.isdigit() else 443
    if "://" not in target:
        return None, 0
    scheme, rest = target.split("://", 1)
    authority = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    host, sep, port = authority.rpartition(":")
    if not sep or not port.isdigit():
        host, port = authority, "443" if scheme.lower() == "https" else "80"
    return host.strip("[]") or None, int(port)


def _relay(a: socket.socket, b: socket.socket) -> None:
    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join()
