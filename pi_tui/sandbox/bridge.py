"""Runs inside the sandbox: ``python3 bridge.py SOCKET -- COMMAND…``.

Listens on a free port of the sandbox's own loopback, points the proxy variables at it, starts the
command, forwards every connection to the host-side proxy's Unix socket (`pi_tui.sandbox.proxy`) and
exits with the command's status. Standard library only: it runs with ``-I -S`` for a fast start.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _forward(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(server: socket.socket, path: str) -> None:
    while True:
        client, _ = server.accept()
        threading.Thread(target=_forward, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    """Bridge ``argv[0]`` (the proxy socket) and run the command after ``--``."""
    path, command = argv[0], argv[2:]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        os.environ[name] = url
    pid = os.fork()
    if pid == 0:
        server.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"{command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    threading.Thread(target=_serve, args=(server, path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if status else 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code if code >= 0 else 128 - code)
